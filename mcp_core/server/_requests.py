"""The MCP request handlers, sans-IO: from a registry role and request params to a wire dict.

Nothing here knows the SDK, JSON-RPC or a transport. List handlers use only an
:class:`~mcp_core.registry.ElementCatalog`; call/read/get/complete only an
:class:`~mcp_core.registry.ElementResolver`; both apply the session's visibility, so a hidden
element is listed nowhere and resolves nowhere, raising exactly what a missing one raises.
Failures are raised as the project's errors; :func:`~mcp_core.server._errors.wire_error` decides
their wire form.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar, final

from opentelemetry.trace import Span, StatusCode

from mcp_core._telemetry import OUTCOME, tracer
from mcp_core.elements import Definition, Element, ElementKind, ElementRef
from mcp_core.errors import ArgumentValidationError, ElementNotFoundError, clip_input
from mcp_core.handlers import ClientGateway
from mcp_core.registry import (
    ElementAtRef,
    ElementCatalog,
    ElementResolver,
    ResolvedResource,
    ResourceCandidates,
)
from mcp_core.server._errors import invalid_arguments_result
from mcp_core.server._middleware import CallNext, Method, Middleware, Request, checked, link
from mcp_core.server._paging import DEFAULT_PAGE_SIZE, CursorCodec, Page, SnapshotCache
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo, visible_at

__all__ = ["ElementInvoker", "RequestHandlers"]

_F = TypeVar("_F")


class ElementInvoker(Protocol):
    """What the request handlers need to run an element (``mcp_core.handlers.Invoker`` is one).

    Each method returns the result's MCP wire dict.
    """

    async def call_tool(
        self, element: Element, arguments: Mapping[str, Any] | None, gateway: ClientGateway
    ) -> dict[str, Any]:
        """Run a tool; tool failures are ``isError`` results, bad arguments raise."""
        ...

    async def read_resource(
        self, element: Element, uri: str, variables: Mapping[str, str], gateway: ClientGateway
    ) -> dict[str, Any]:
        """Read a resource or a templated resource."""
        ...

    async def get_prompt(
        self, element: Element, arguments: Mapping[str, str] | None, gateway: ClientGateway
    ) -> dict[str, Any]:
        """Render a prompt."""
        ...

    async def complete(
        self,
        element: Element,
        argument: str,
        value: str,
        context: Mapping[str, str],
        gateway: ClientGateway,
    ) -> dict[str, Any]:
        """Complete one prompt argument or template variable: ``{"values", "total"?, "hasMore"}``."""
        ...


# Per listable kind: the result key (also the cursor's list name), the catalogue method, and
# the request's method.
_LISTS: Final[
    Mapping[
        ElementKind,
        tuple[str, Callable[[ElementCatalog], Awaitable[Sequence[Definition]]], Method],
    ]
] = {
    ElementKind.TOOL: ("tools", lambda c: c.tools(), "tools/list"),
    ElementKind.RESOURCE: ("resources", lambda c: c.resources(), "resources/list"),
    ElementKind.RESOURCE_TEMPLATE: (
        "resourceTemplates",
        lambda c: c.resource_templates(),
        "resources/templates/list",
    ),
    ElementKind.PROMPT: ("prompts", lambda c: c.prompts(), "prompts/list"),
}

_NO_COMPLETIONS: Final = {"completion": {"values": [], "total": 0, "hasMore": False}}


@final
class RequestHandlers:
    """Answers every element request of MCP 2025-11-25 from a catalogue and a resolver.

    ``page_size`` is the number of elements per list page (None: never paginate); cursors are
    signed with ``cursor_secret`` (see :class:`~mcp_core.server._paging.CursorCodec`).
    ``middleware`` wraps every request below (see :mod:`mcp_core.server._middleware`), the first
    outermost; each request method takes the negotiated protocol version as ``era`` for it.
    ``trace_arguments`` puts argument values and results in the handler spans (see
    :mod:`mcp_core._telemetry`); they are left out by default.
    """

    __slots__ = (
        "_catalog",
        "_codec",
        "_invoker",
        "_middleware",
        "_page_size",
        "_resolver",
        "_snapshots",
        "trace_arguments",
        "visibility",
    )

    def __init__(
        self,
        catalog: ElementCatalog,
        resolver: ElementResolver,
        *,
        invoker: ElementInvoker,
        visibility: ElementVisibility = ALWAYS,
        page_size: int | None = DEFAULT_PAGE_SIZE,
        cursor_secret: bytes = b"mcp-core",
        middleware: Sequence[Middleware] = (),
        trace_arguments: bool = False,
    ) -> None:
        self.trace_arguments = trace_arguments
        self._middleware: tuple[Middleware, ...] = ()
        self.middleware = middleware
        self._catalog = catalog
        self._resolver = resolver
        self._invoker = invoker
        self.visibility = visibility
        self.page_size = page_size
        self._codec = CursorCodec(cursor_secret)
        self._snapshots = {kind: SnapshotCache() for kind in _LISTS}

    @property
    def middleware(self) -> tuple[Middleware, ...]:
        """What wraps each request, the first outermost (settable)."""
        return self._middleware

    @middleware.setter
    def middleware(self, middleware: Sequence[Middleware]) -> None:
        self._middleware = checked(middleware)

    async def _through(self, request: Request, answer: CallNext) -> dict[str, Any]:
        """``answer(request)`` inside the middleware (ahead of that: checked to be present)."""
        wrapped = answer
        for item in reversed(self._middleware):
            wrapped = link(item, wrapped)
        return await wrapped(request)

    @property
    def page_size(self) -> int | None:
        """Elements per list page; None: lists are never paginated."""
        return self._page_size

    @page_size.setter
    def page_size(self, size: int | None) -> None:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise ValueError(
                f"page_size must be a positive int or None (no pagination), got {size!r}"
            )
        self._page_size = size

    # -- lists (ElementCatalog) -----------------------------------------------------------------

    async def list_tools(
        self, cursor: str | None, session: SessionInfo, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``tools/list`` result page."""
        return await self._list(ElementKind.TOOL, cursor, session, era)

    async def list_resources(
        self, cursor: str | None, session: SessionInfo, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``resources/list`` result page."""
        return await self._list(ElementKind.RESOURCE, cursor, session, era)

    async def list_resource_templates(
        self, cursor: str | None, session: SessionInfo, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``resources/templates/list`` result page."""
        return await self._list(ElementKind.RESOURCE_TEMPLATE, cursor, session, era)

    async def list_prompts(
        self, cursor: str | None, session: SessionInfo, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``prompts/list`` result page."""
        return await self._list(ElementKind.PROMPT, cursor, session, era)

    async def prepare_lists(self) -> None:
        """Build every list's snapshot, items encoded, so a first walk finds them ready.

        Loads the catalogue if it is not loaded yet; lists are prepared one after the other
        with checkpoints between stretches (see ``SnapshotCache.prepare``).
        """
        for kind, (_, fetch, _method) in _LISTS.items():
            await self._snapshots[kind].prepare(await fetch(self._catalog))

    async def _list(
        self, kind: ElementKind, cursor: str | None, session: SessionInfo, era: str | None
    ) -> dict[str, Any]:
        if not self._middleware:
            return await self._page(kind, cursor, session)
        request = Request(_LISTS[kind][2], session, era, cursor=cursor)
        return await self._through(request, lambda r: self._page(kind, r.cursor, session))

    async def _page(
        self, kind: ElementKind, cursor: str | None, session: SessionInfo
    ) -> dict[str, Any]:
        name, fetch, _ = _LISTS[kind]
        after = None if cursor is None else self._codec.decode(name, cursor)
        snapshot = self._snapshots[kind].of(await fetch(self._catalog))
        visibility = self.visibility
        visible = None
        if visibility is not ALWAYS:

            async def visible(ref: ElementRef) -> bool:
                return await visibility.is_visible(ref, session)

        page = await Page.read(snapshot, after=after, size=self._page_size, visible=visible)
        result: dict[str, Any] = {name: page.items}
        if page.resume_after is not None:
            result["nextCursor"] = self._codec.encode(name, page.resume_after)
        return result

    # -- element requests (ElementResolver) -----------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        gateway: ClientGateway,
        *,
        admit: Callable[[Element], None] | None = None,
        era: str | None = None,
    ) -> dict[str, Any]:
        """The ``tools/call`` result; an unknown or hidden tool raises ElementNotFoundError.

        Arguments that fail the tool's input schema are a tool execution error (SEP-1303).
        ``admit`` sees the tool once it is found visible, before it runs, and may refuse the call
        by raising (the transport's own checks on a resolved tool).
        """
        ref = _missing(ElementKind.TOOL, name)
        with _resolving(ref) as span:
            found = await self._resolver.get_tool(name) if name else None
            visible = _outcome(span, await self._visible(found, gateway.session))
        if not self._middleware:
            return await self._run_tool(_found(ref, visible), arguments, gateway, admit)
        request = Request(
            "tools/call", gateway.session, era, target=name, element=visible, arguments=arguments
        )
        return await self._through(
            request, lambda r: self._run_tool(_found(ref, visible), r.arguments, gateway, admit)
        )

    async def _run_tool(
        self,
        element: Element,
        arguments: Mapping[str, Any] | None,
        gateway: ClientGateway,
        admit: Callable[[Element], None] | None,
    ) -> dict[str, Any]:
        if admit is not None:
            admit(element)
        name = element.ref.key
        with tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function",
            },
        ) as span:
            if self.trace_arguments:
                span.set_attribute("gen_ai.tool.call.arguments", _json(arguments))
            try:
                result = await self._invoker.call_tool(element, arguments, gateway)
            except ArgumentValidationError as exc:
                result = invalid_arguments_result(exc)
            if result.get("isError") is True:
                span.set_attribute("error.type", "tool_error")
                span.set_status(StatusCode.ERROR)
            if self.trace_arguments:
                span.set_attribute("gen_ai.tool.call.result", _json(result))
            return result

    async def read_resource(
        self, uri: str, gateway: ClientGateway, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``resources/read`` result; an unknown or hidden URI raises ElementNotFoundError."""
        session = gateway.session
        with _resolving(_missing(ElementKind.RESOURCE, uri)) as span:
            found = await self._first_visible(uri, session) if uri else None
            _outcome(span, found)
        if not self._middleware:
            return await self._read(uri, _resolved(uri, found), gateway)
        request = Request(
            "resources/read",
            session,
            era,
            target=uri,
            element=None if found is None else found.element,
            arguments=found.variables or None if found is not None else None,
        )

        return await self._through(
            request, lambda _request: self._read(uri, _resolved(uri, found), gateway)
        )

    async def _read(
        self, uri: str, resolved: ResolvedResource, gateway: ClientGateway
    ) -> dict[str, Any]:
        with _handling("mcp_core.handler.read", resolved.element) as span:
            if self.trace_arguments:
                span.set_attribute("mcp_core.arguments", _json(resolved.variables))
            result = await self._invoker.read_resource(
                resolved.element, uri, resolved.variables, gateway
            )
            if self.trace_arguments:
                span.set_attribute("mcp_core.result", _json(result))
            return result

    async def subscribe(
        self, uri: str, session: SessionInfo, *, era: str | None = None
    ) -> dict[str, Any]:
        """The ``resources/subscribe`` result (``{}``) once ``uri`` resolves for ``session``.

        An unknown or hidden URI raises ElementNotFoundError; the caller records the
        subscription when this returns.
        """
        if not self._middleware:
            await self.resolve_resource(uri, session)
            return {}
        found = await self._first_visible(uri, session) if uri else None
        request = Request(
            "resources/subscribe",
            session,
            era,
            target=uri,
            element=None if found is None else found.element,
        )

        async def answer(_request: Request) -> dict[str, Any]:
            _resolved(uri, found)
            return {}

        return await self._through(request, answer)

    async def resolve_resource(self, uri: str, session: SessionInfo) -> ResolvedResource:
        """What ``uri`` resolves to for ``session``: its best candidate that session may see.

        An exact resource, else the most specific template, among those visible to ``session``
        (for a template, at this very URI): a hidden candidate makes way for the next one, so
        the answer is the one a server without the hidden elements would give.
        """
        return _resolved(uri, await self._first_visible(uri, session) if uri else None)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None,
        gateway: ClientGateway,
        *,
        era: str | None = None,
    ) -> dict[str, Any]:
        """The ``prompts/get`` result; an unknown or hidden prompt raises ElementNotFoundError."""
        ref = _missing(ElementKind.PROMPT, name)
        with _resolving(ref) as span:
            found = await self._resolver.get_prompt(name) if name else None
            visible = _outcome(span, await self._visible(found, gateway.session))
        if not self._middleware:
            return await self._get(_found(ref, visible), arguments, gateway)
        request = Request(
            "prompts/get", gateway.session, era, target=name, element=visible, arguments=arguments
        )
        return await self._through(
            request, lambda r: self._get(_found(ref, visible), r.arguments, gateway)
        )

    async def _get(
        self, element: Element, arguments: Mapping[str, Any] | None, gateway: ClientGateway
    ) -> dict[str, Any]:
        with _handling("mcp_core.handler.get", element) as span:
            if self.trace_arguments:
                span.set_attribute("mcp_core.arguments", _json(arguments))
            result = await self._invoker.get_prompt(element, arguments, gateway)
            if self.trace_arguments:
                span.set_attribute("mcp_core.result", _json(result))
            return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, str] | None,
        gateway: ClientGateway,
        *,
        era: str | None = None,
    ) -> dict[str, Any]:
        """The ``completion/complete`` result for a prompt argument or a template variable.

        ``ref`` is ``{"type": "ref/prompt", "name"}`` or ``{"type": "ref/resource", "uri"}``;
        the URI may be the template itself or a URI the template matches.
        """
        session = gateway.session
        match ref:
            case {"type": "ref/prompt", "name": str() as target}:
                missing = _missing(ElementKind.PROMPT, target)
                found = await self._resolver.get_prompt(target) if target else None
                element = await self._visible(found, session)
            case {"type": "ref/resource", "uri": str() as target}:
                missing = _missing(ElementKind.RESOURCE_TEMPLATE, target)
                element = await self._completion_template(target, session)
            case _:
                raise ArgumentValidationError(
                    "completion ref must be {type: 'ref/prompt', name} or {type: 'ref/resource', uri}"
                )
        if not self._middleware:
            _found(missing, element)  # a missing element is named before a malformed argument
        argument_name, value = argument.get("name"), argument.get("value", "")
        if not isinstance(argument_name, str) or not isinstance(value, str):
            raise ArgumentValidationError(
                "completion argument must be {name: string, value: string}"
            )

        async def answer(request: Request) -> dict[str, Any]:
            found = _found(missing, element)
            if found.kind is ElementKind.RESOURCE:
                return dict(_NO_COMPLETIONS)  # a fixed resource has nothing to complete
            arguments = request.arguments or {argument_name: value}
            name, partial = next(iter(arguments.items()))
            with _handling("mcp_core.handler.complete", found):
                completion = await self._invoker.complete(
                    found, name, partial, context or {}, gateway
                )
            return {"completion": completion}

        request = Request(
            "completion/complete",
            session,
            era,
            target=target,
            element=element,
            arguments={argument_name: value},
        )
        if not self._middleware:
            return await answer(request)
        return await self._through(request, answer)

    async def _completion_template(self, uri: str, session: SessionInfo) -> Element | None:
        ref = _missing(ElementKind.RESOURCE_TEMPLATE, uri)
        # The reference Registry answers get(ref) directly; any other resolver is asked to match
        # the URI (a template matches itself, or the client sent a concrete URI).
        resolver = self._resolver
        template = await resolver.get(ref) if isinstance(resolver, ElementAtRef) and uri else None
        if template is not None and await visible_at(self.visibility, template.ref, session):
            return template
        resolved = await self._first_visible(uri, session) if uri else None
        return None if resolved is None else resolved.element

    async def _first_visible(self, uri: str, session: SessionInfo) -> ResolvedResource | None:
        """The first of the resolver's candidates for ``uri`` that ``session`` may see, or None.

        The winner is asked for first (a per-name answer, before or without a full load); only
        when it is hidden are the runners-up it makes way for looked at.
        """
        winner = await self._resolver.get_resource(uri)
        if winner is None or await self._may_read(winner, uri, session):
            return winner
        for candidate in await self._runners_up(uri):
            if await self._may_read(candidate, uri, session):
                return candidate
        return None

    async def _may_read(self, candidate: ResolvedResource, uri: str, session: SessionInfo) -> bool:
        element = candidate.element
        templated = element.kind is ElementKind.RESOURCE_TEMPLATE
        return self.visibility is ALWAYS or await visible_at(
            self.visibility,
            element.ref,
            session,
            uri=uri if templated else None,
            variables=candidate.variables,
        )

    async def _runners_up(self, uri: str) -> Iterable[ResolvedResource]:
        # A resolver with ResourceCandidates offers the runners-up a hidden winner makes way
        # for (its first candidate is the winner); any other has none to offer.
        resolver = self._resolver
        if not isinstance(resolver, ResourceCandidates):
            return ()
        return itertools.islice(await resolver.resource_candidates(uri), 1, None)

    async def _visible(self, element: Element | None, session: SessionInfo) -> Element | None:
        """``element``, unless it is missing or hidden from ``session``: then None."""
        if element is not None and (
            self.visibility is ALWAYS or await self.visibility.is_visible(element.ref, session)
        ):
            return element
        return None


def _resolving(ref: ElementRef) -> Any:
    """The span of finding what a request names (the name is the client's: clipped)."""
    return tracer.start_as_current_span(
        "mcp_core.resolve",
        attributes={
            "mcp_core.kind": (ref.kind.name or "").lower(),
            "mcp_core.key": clip_input(ref.key),
        },
    )


def _outcome(span: Span, found: _F) -> _F:
    """``found``, its outcome (``found`` or ``missing``: hidden is missing) set on ``span``."""
    span.set_attribute(OUTCOME, "missing" if found is None else "found")
    return found


def _handling(name: str, element: Element) -> Any:
    """The span of running ``element``'s handler."""
    return tracer.start_as_current_span(
        name,
        attributes={
            "mcp_core.kind": (element.kind.name or "").lower(),
            "mcp_core.key": element.ref.key,
        },
    )


def _json(value: object) -> str:
    """``value`` as a span attribute (JSON; what JSON cannot hold as its repr).

    A read-only mapping (a read's template variables) is a JSON object, as a dict is.
    """
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _json_default(value: object) -> object:
    return dict(value) if isinstance(value, Mapping) else repr(value)


def _found(ref: ElementRef, element: Element | None) -> Element:
    """``element``; ElementNotFoundError for ``ref`` when there is none (missing or hidden)."""
    if element is None:
        raise ElementNotFoundError(f"{ref} not found", ref=ref)
    return element


def _resolved(uri: str, resolved: ResolvedResource | None) -> ResolvedResource:
    """``resolved``; ElementNotFoundError for ``uri`` when nothing visible answers it."""
    if resolved is None:
        ref = _missing(ElementKind.RESOURCE, uri)
        raise ElementNotFoundError(f"{ref} not found", ref=ref)
    return resolved


def _missing(kind: ElementKind, key: str) -> ElementRef:
    # The ref an error names; an empty key (which no ElementRef accepts) still gets one.
    return ElementRef(kind, key or "<empty>")


def default_cursor_secret(name: str) -> bytes:
    """The cursor key used when none is configured: derived from the server name."""
    return hashlib.sha256(name.encode()).digest()
