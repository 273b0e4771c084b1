"""What the bridges share: SDK definitions as mcp-core values, and "the first entry owns" runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar, final

from pydantic import BaseModel

from mcp_core.elements import Definition, ElementKind, UriTemplate, definition_from_wire
from mcp_core.handlers import ClientGateway, EmbeddedResource

__all__ = ["ForwardedResource", "ForwardedTemplate", "ReadAt", "SharedRun", "definition_of"]

ReadAt: TypeAlias = Callable[[Any, str, str, ClientGateway], Awaitable[list[EmbeddedResource]]]
"""``read_at(source, original, requested, gateway)``: the backend's own URI ``original``, read for a
client that asked for ``requested`` (the same URI, or a renamed one)."""

_T = TypeVar("_T")


def definition_of(kind: ElementKind, model: BaseModel) -> Definition:
    """The mcp-core definition of an SDK (``mcp_types``) tool, resource, template or prompt.

    The SDK's models keep only the fields of the protocol, so their wire form is exactly what
    :func:`~mcp_core.elements.definition_from_wire` reads.

    Raises:
        InvalidElementError: the definition breaks a rule mcp-core enforces (the message says which).
    """
    return definition_from_wire(
        kind, model.model_dump(by_alias=True, mode="json", exclude_none=True)
    )


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


@final
@dataclass(frozen=True, slots=True)
class ForwardedResource:
    """A ``ResourceHandler`` reading a fixed resource at the backend's own URI, however renamed."""

    source: Any
    read_at: ReadAt
    uri: str

    async def read(self, uri: str, gateway: ClientGateway) -> list[EmbeddedResource]:
        return await self.read_at(self.source, self.uri, uri, gateway)


@final
@dataclass(frozen=True, slots=True)
class ForwardedTemplate:
    """A ``ResourceTemplateHandler`` reading the backend's own URI built from the variables.

    The URI asked for may be a renamed one (``PrefixedSource``): the variables are what the two
    templates share, so the backend's URI is its own template expanded with them.
    """

    source: Any
    read_at: ReadAt
    uri_template: str

    async def read(
        self, uri: str, variables: Mapping[str, str], gateway: ClientGateway
    ) -> list[EmbeddedResource]:
        original = UriTemplate.parse(self.uri_template).expand(variables)
        return await self.read_at(self.source, original, uri, gateway)
