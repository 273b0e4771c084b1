"""Progressive disclosure: a session lists a few tools, searches the rest, and sees what it found.

A server with disclosure lists, to each session, its pinned tools and two more:

- ``search_tools(query, limit?)`` ranks the tools the session may see (its visibility rule,
  applied before ranking: see :class:`~mcp_core.search.ToolIndex`) and answers with the best
  ones' definitions, as ``tools/list`` gives them (``{"tools": [...]}``, structured and as JSON
  text). In a session that persists (the handshake era's sessions, stdio or HTTP), the tools found
  join that session's list, and that session alone is sent ``notifications/tools/list_changed``;
- ``call_tool(name, arguments?)`` calls any tool the session may see, found or not: the path
  for a client that does not re-list, and for the 2026-07-28 era, where each request is its own
  session and nothing found can join a list.

Everything else the session's rule hides stays missing: from ``search_tools`` (hits, their
number, order and scores), from ``call_tool`` (a hidden tool answers exactly as a missing one)
and from the lists. These shapes follow the pattern MCP clients and frameworks converged on
(a search tool returning full definitions, a call tool by name) while the working group's
proposals for a protocol-level search are not part of the specification.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, final

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Tool,
    ToolAnnotations,
)
from mcp_core.errors import ArgumentValidationError
from mcp_core.handlers import ClientGateway, ToolResult
from mcp_core.handlers._wire import tool_result_from_wire
from mcp_core.search._index import DEFAULT_LIMIT, MAX_LIMIT, IndexedCatalog, ToolIndex
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo, UriVisibility

__all__ = ["Disclosure", "SessionChannel", "ToolDisclosure"]

_NAME_LIMIT: Final = 128


class SessionChannel(Protocol):
    """How disclosure reaches the one session that searched (the server provides it)."""

    async def tools_changed(self, gateway: ClientGateway) -> bool:
        """Tell the session of ``gateway``'s request, and no other, that its tool list changed.

        Returns False when that session cannot be told (it does not persist).
        """
        ...

    def on_end(self, gateway: ClientGateway, callback: Callable[[], object]) -> bool:
        """Call ``callback`` once the session of ``gateway``'s request ends; False if it cannot."""
        ...


class _Resolver(Protocol):
    async def get_tool(self, name: str) -> Element | None: ...


class _Invoker(Protocol):
    async def call_tool(
        self, element: Element, arguments: Mapping[str, Any] | None, gateway: ClientGateway
    ) -> dict[str, Any]: ...


class _Catalog(IndexedCatalog, _Resolver, Protocol):
    pass


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Disclosure:
    """Progressive disclosure for a server: ``App(..., disclosure=Disclosure(...))``.

    ``pinned`` names the tools every session lists from the start (besides ``search_tools`` and
    ``call_tool``, named ``search_name`` and ``call_name``); ``limit`` is how many tools a search
    returns unless it asks for another number (at most ``MAX_LIMIT``); a session keeps at most
    ``max_active`` found tools in its list (the ones found longest ago leave first), and at most
    ``max_sessions`` sessions' found tools are remembered (the least recently searching session's
    are dropped first; a session's are dropped when it ends).
    """

    pinned: Collection[str] = ()
    limit: int = DEFAULT_LIMIT
    max_active: int = 64
    max_sessions: int = 10_000
    search_name: str = "search_tools"
    call_name: str = "call_tool"
    _pinned: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.pinned, str):
            raise TypeError("Disclosure.pinned must be a collection of tool names, not one string")
        object.__setattr__(self, "_pinned", frozenset(self.pinned))
        for name, value, top in (
            ("limit", self.limit, MAX_LIMIT),
            ("max_active", self.max_active, None),
            ("max_sessions", self.max_sessions, None),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Disclosure.{name} must be a positive integer, got {value!r}")
            if top is not None and value > top:
                raise ValueError(f"Disclosure.{name} must be at most {top}, got {value!r}")
        if self.search_name == self.call_name:
            raise ValueError("Disclosure.search_name and call_name must differ")

    @property
    def always_listed(self) -> frozenset[str]:
        """The tools every session lists: the pinned ones, ``search_tools`` and ``call_tool``."""
        return self._pinned | {self.search_name, self.call_name}


@final
class _Found:
    """Which tools each session found, bounded per session and in sessions."""

    __slots__ = ("_max_active", "_max_sessions", "_sessions")

    def __init__(self, max_active: int, max_sessions: int) -> None:
        self._max_active = max_active
        self._max_sessions = max_sessions
        self._sessions: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()

    def has(self, session_id: str, name: str) -> bool:
        found = self._sessions.get(session_id)
        return found is not None and name in found

    def names(self, session_id: str) -> tuple[str, ...]:
        return tuple(self._sessions.get(session_id, ()))

    def add(self, session_id: str, names: Collection[str]) -> tuple[bool, bool]:
        """Add ``names`` (most relevant first); (whether the set changed, whether it is new)."""
        sessions = self._sessions
        found = sessions.get(session_id)
        new = found is None
        if found is None:
            found = sessions[session_id] = OrderedDict()
            while len(sessions) > self._max_sessions:
                sessions.popitem(last=False)
        else:
            sessions.move_to_end(session_id)
        before = set(found)
        for name in reversed(list(names)):  # the most relevant ends up the most recent
            found[name] = None
            found.move_to_end(name)
        while len(found) > self._max_active:
            found.popitem(last=False)
        return set(found) != before, new

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)


@final
class _Rule:
    """The listing rule of a disclosing server: the base rule, narrowed to what was found."""

    __slots__ = ("_base", "_disclosure")

    def __init__(self, disclosure: ToolDisclosure, base: ElementVisibility) -> None:
        self._disclosure = disclosure
        self._base = base

    def __repr__(self) -> str:
        return f"disclosed({self._base!r})"

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        if ref.kind is ElementKind.TOOL and not self._disclosure.listed(ref.key, session):
            return False
        return self._base is ALWAYS or await self._base.is_visible(ref, session)

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        base = self._base
        if not isinstance(base, UriVisibility):
            return True
        return bool(await base.is_uri_visible(ref, uri, variables, session))


@final
class ToolDisclosure:
    """Progressive disclosure over a catalogue: the index, what each session found, two tools.

    ``catalog`` is the registry the server serves (its elements and change events feed the
    index; ``get_tool`` resolves calls), ``invoker`` calls tools as the server does, and
    ``channel`` reaches one session (None: found tools are returned but never join a list).
    The base visibility rule is :attr:`base`; :meth:`rule` is the rule the server lists with.
    """

    __slots__ = ("_catalog", "_channel", "_found", "_invoker", "base", "config", "index")

    def __init__(
        self,
        config: Disclosure,
        catalog: _Catalog,
        invoker: _Invoker,
        *,
        channel: SessionChannel | None = None,
    ) -> None:
        self.config = config
        self.base: ElementVisibility = ALWAYS
        self._catalog = catalog
        self._invoker = invoker
        self._channel = channel
        self._found = _Found(config.max_active, config.max_sessions)
        self.index = ToolIndex(catalog, exclude=(config.search_name, config.call_name))

    def __repr__(self) -> str:
        return f"ToolDisclosure({self.config!r}, {self.index!r})"

    def rule(self, base: ElementVisibility) -> ElementVisibility:
        """The rule a server lists with: ``base``, and for tools only what each session found."""
        self.base = base
        return _Rule(self, base)

    def listed(self, name: str, session: SessionInfo) -> bool:
        """Whether the disclosure lets ``session`` list the tool ``name`` (before its base rule)."""
        if name in self.config.always_listed:
            return True
        session_id = session.session_id
        return session_id is not None and self._found.has(session_id, name)

    def found(self, session: SessionInfo) -> tuple[str, ...]:
        """The tools ``session`` found that it lists now, the most recently found last."""
        return self._found.names(session.session_id) if session.session_id is not None else ()

    @property
    def sessions(self) -> int:
        """How many sessions' found tools are remembered now."""
        return len(self._found)

    def collection(self) -> ElementCollection:
        """``search_tools`` and ``call_tool`` as elements (served as a source)."""
        config = self.config
        search = Tool(
            name=config.search_name,
            title="Search tools",
            description=(
                "Find tools by what they do, in a few words (e.g. 'send an email'). Returns the "
                "best matching tools' definitions, as tools/list gives them; call one directly "
                f"once it is listed, or through {config.call_name}."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "description": f"How many tools to return (default {config.limit}).",
                    },
                },
                "required": ["query"],
            },
            output_schema={
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                "required": ["tools"],
            },
            annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        )
        call = Tool(
            name=config.call_name,
            title="Call a tool",
            description=(
                f"Call a tool that {config.search_name} found, by its name, with its arguments."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name."},
                    "arguments": {"type": "object", "description": "The tool's arguments."},
                },
                "required": ["name"],
            },
        )
        return ElementCollection(
            [
                Element(definition=search, handler=_SearchHandler(self)),
                Element(definition=call, handler=_CallHandler(self)),
            ]
        )

    async def search(
        self, query: str, gateway: ClientGateway, *, limit: int | None = None
    ) -> ToolResult:
        """What ``search_tools`` answers (and the tools found join the session's list)."""
        session = gateway.session
        try:
            hits = await self.index.search(
                query, session, self.base, limit=self.config.limit if limit is None else limit
            )
        except ValueError as exc:
            return ToolResult(str(exc), is_error=True)
        tools = [hit.tool.to_wire() for hit in hits]
        session_id = session.session_id
        if hits and session_id is not None:
            changed, new = self._found.add(session_id, [hit.tool.name for hit in hits])
            channel = self._channel
            if channel is not None:
                if new:
                    found = self._found
                    channel.on_end(gateway, lambda: found.forget(session_id))
                if changed:
                    await channel.tools_changed(gateway)
        document = {"tools": tools}
        return ToolResult(json.dumps(document), structured=document)

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, gateway: ClientGateway
    ) -> ToolResult:
        """What ``call_tool`` answers: the tool's own result, or "unknown" for a hidden one."""
        config = self.config
        element = None
        if name not in (config.search_name, config.call_name):
            element = await self._catalog.get_tool(name)
        if element is None or not (
            self.base is ALWAYS or await self.base.is_visible(element.ref, gateway.session)
        ):
            shown = name if len(name) <= _NAME_LIMIT else name[:_NAME_LIMIT] + "..."
            return ToolResult(f"Unknown tool: {shown}", is_error=True)
        try:
            wire = await self._invoker.call_tool(element, arguments, gateway)
        except ArgumentValidationError as exc:
            return ToolResult(str(exc), is_error=True)
        return tool_result_from_wire(wire)


@final
class _SearchHandler:
    __slots__ = ("_disclosure",)

    def __init__(self, disclosure: ToolDisclosure) -> None:
        self._disclosure = disclosure

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> ToolResult:
        limit = arguments.get("limit")
        return await self._disclosure.search(
            arguments["query"], gateway, limit=limit if isinstance(limit, int) else None
        )


@final
class _CallHandler:
    __slots__ = ("_disclosure",)

    def __init__(self, disclosure: ToolDisclosure) -> None:
        self._disclosure = disclosure

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> ToolResult:
        inner = arguments.get("arguments")
        return await self._disclosure.call(
            arguments["name"], inner if isinstance(inner, Mapping) else None, gateway
        )
