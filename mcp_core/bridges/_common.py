"""What the bridges share: SDK definitions as forwarding elements, and "the first entry owns" runs.

A bridge lists what its backend serves (SDK ``mcp_types`` models), and every element it makes
forwards its request back to the backend. The conversion and the forwarding handlers are the same
for every bridge; only how a request reaches the backend differs, which each bridge says once in
a :class:`Backend`: one function per request, each given the bridge's source first.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar, final

import mcp_types as types
from pydantic import BaseModel

from mcp_core.elements import (
    Definition,
    Element,
    ElementKind,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    UriTemplate,
    freeze,
)
from mcp_core.elements._definitions import definition_from_wire
from mcp_core.elements._json import JsonValue
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import ClientGateway, EmbeddedResource, ToolResult
from mcp_core.handlers._admission import DEFAULT_LIMITS

__all__ = ["Backend", "SharedRun", "bridged", "wire_of"]

CompletionRef: TypeAlias = types.PromptReference | types.ResourceTemplateReference

CallAt: TypeAlias = Callable[[Any, str, Mapping[str, Any], ClientGateway], Awaitable[ToolResult]]
"""``call(source, name, arguments, gateway)``: the backend's tool ``name`` called."""
ReadAt: TypeAlias = Callable[[Any, str, str, ClientGateway], Awaitable[list[EmbeddedResource]]]
"""``read(source, original, requested, gateway)``: the backend's own URI ``original``, read for a
client that asked for ``requested`` (the same URI, or a renamed one)."""
GetAt: TypeAlias = Callable[
    [Any, str, Mapping[str, str], ClientGateway], Awaitable[list[dict[str, Any]]]
]
"""``get(source, name, arguments, gateway)``: the messages of the backend's prompt ``name``."""
CompleteAt: TypeAlias = Callable[
    [Any, types.CompleteRequestParams, ClientGateway], Awaitable[list[str]]
]
"""``complete(source, params, gateway)``: the backend's completions for one argument's value."""

_T = TypeVar("_T")


def wire_of(model: BaseModel) -> dict[str, Any]:
    """An SDK (``mcp_types``) model in its wire shape: the protocol's names, no unset fields.

    The SDK's models keep only the fields of the protocol, so this is exactly what mcp-core's
    ``*_from_wire`` readers take.
    """
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Backend:
    """How a bridge's requests reach its backend: one function per request, given ``source`` first.

    ``complete`` is None when the backend completes nothing (its elements get no providers).
    """

    source: object
    call: CallAt
    read: ReadAt
    get: GetAt
    complete: CompleteAt | None


def bridged(
    kind: ElementKind,
    listed: BaseModel,
    backend: Backend,
    tags: frozenset[str],
    *,
    schemas: dict[str, JsonValue] | None = None,
) -> Element:
    """The element for a definition the backend listed, every request forwarded to the backend.

    A prompt's arguments and a template's variables each get a completion provider when the
    backend completes. With ``schemas`` (one dict for a whole listing), equal tool schemas are
    held once, shared by the elements, as derived schemas are: admission then checks each
    distinct schema once, and the catalogue keeps one copy.

    Raises:
        InvalidElementError: the definition breaks a rule mcp-core enforces (the message says
            which), or is nested too deeply to be read at all.
    """
    try:
        wire = wire_of(listed)
    except (ValueError, RecursionError):  # pydantic's own depth limit, past any we allow
        raise InvalidElementError(
            f"its definition nests JSON objects and arrays too deeply to be read "
            f"(far more than the limit of {DEFAULT_LIMITS.max_depth} levels)"
        ) from None
    if schemas is not None:
        _share_schemas(wire, schemas)
    definition: Definition = definition_from_wire(kind, wire)
    handler: object
    names: Iterable[str] = ()
    ref: CompletionRef | None = None
    match definition:
        case Tool():
            handler = _ForwardedTool(backend, definition.name)
        case Resource():
            handler = _ForwardedResource(backend, definition.uri)
        case ResourceTemplate():
            handler = _ForwardedTemplate(backend, definition.uri_template)
            names = definition.template.variables
            ref = types.ResourceTemplateReference(type="ref/resource", uri=definition.uri_template)
        case Prompt():
            handler = _ForwardedPrompt(backend, definition.name)
            names = [argument.name for argument in definition.arguments or ()]
            ref = types.PromptReference(type="ref/prompt", name=definition.name)
    completions: dict[str, object] | None = None
    if backend.complete is not None and ref is not None:
        source, complete = backend.source, backend.complete
        completions = {name: _ForwardedCompletion(source, complete, ref, name) for name in names}
    return Element(
        definition=definition, handler=handler, completions=completions or None, tags=tags
    )


def _share_schemas(wire: dict[str, Any], schemas: dict[str, JsonValue]) -> None:
    """Replace a tool's schemas in ``wire`` by the frozen equal ones of ``schemas`` (or add them)."""
    for key in ("inputSchema", "outputSchema"):
        value = wire.get(key)
        if not isinstance(value, dict):
            continue
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        shared = schemas.get(text)
        if shared is None:
            try:
                shared = schemas[text] = freeze(value)
            except (TypeError, ValueError, RecursionError):
                continue  # the definition's own check says what is wrong with it
        wire[key] = shared


@final
@dataclass(frozen=True, slots=True)
class _ForwardedTool:
    """A ``ToolHandler`` calling the backend's tool."""

    backend: Backend
    name: str

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> ToolResult:
        backend = self.backend
        return await backend.call(backend.source, self.name, arguments, gateway)


@final
@dataclass(frozen=True, slots=True)
class _ForwardedResource:
    """A ``ResourceHandler`` reading a fixed resource at the backend's own URI, however renamed."""

    backend: Backend
    uri: str

    async def read(self, uri: str, gateway: ClientGateway) -> list[EmbeddedResource]:
        backend = self.backend
        return await backend.read(backend.source, self.uri, uri, gateway)


@final
@dataclass(frozen=True, slots=True)
class _ForwardedTemplate:
    """A ``ResourceTemplateHandler`` reading the backend's own URI built from the variables.

    The URI asked for may be a renamed one (``PrefixedSource``): the variables are what the two
    templates share, so the backend's URI is its own template expanded with them.
    """

    backend: Backend
    uri_template: str

    async def read(
        self, uri: str, variables: Mapping[str, str], gateway: ClientGateway
    ) -> list[EmbeddedResource]:
        original = UriTemplate.parse(self.uri_template).expand(variables)
        backend = self.backend
        return await backend.read(backend.source, original, uri, gateway)


@final
@dataclass(frozen=True, slots=True)
class _ForwardedPrompt:
    """A ``PromptHandler`` getting the backend's prompt."""

    backend: Backend
    name: str

    async def get(
        self, arguments: Mapping[str, str], gateway: ClientGateway
    ) -> list[dict[str, Any]]:
        backend = self.backend
        return await backend.get(backend.source, self.name, arguments, gateway)


@final
@dataclass(frozen=True, slots=True)
class _ForwardedCompletion:
    """A ``CompletionProvider`` asking the backend to complete one argument or variable."""

    source: object
    complete_at: CompleteAt
    ref: CompletionRef
    argument: str

    async def complete(
        self, value: str, context: Mapping[str, str], gateway: ClientGateway
    ) -> list[str]:
        params = types.CompleteRequestParams(
            ref=self.ref,
            argument=types.CompletionArgument(name=self.argument, value=value),
            context=types.CompletionContext(arguments=dict(context)) if context else None,
        )
        return await self.complete_at(self.source, params, gateway)


@final
class SharedRun(Generic[_T]):
    """One run of something that must stay open, shared by every concurrent entry.

    The first entry starts it (``start()``'s context manager) and owns it: later entries made while
    it runs share its value and leave it running; it stops when the owner's entry exits. Starting
    and stopping therefore happen in one task, as anyio's cancel scopes require.
    """

    __slots__ = ("_running", "_start", "value")

    def __init__(self, start: Callable[[], AbstractAsyncContextManager[_T]]) -> None:
        self._start = start
        self._running = False
        self.value: _T | None = None

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self._running

    @asynccontextmanager
    async def enter(self) -> AsyncIterator[Any]:
        """Start the run, or share the one in progress."""
        if self._running:
            yield self.value
            return
        self._running = True
        try:
            async with self._start() as value:
                self.value = value
                yield value
        finally:
            self._running = False
            self.value = None
