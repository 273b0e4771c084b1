"""Middleware: what an operator wraps around every element request the server answers.

A middleware is an async callable ``(request, call_next) -> result``. It sees one
:class:`Request` (the method, the element once resolved, the arguments, the caller's
:class:`~mcp_core.visibility.SessionInfo` and the protocol era) and either passes it on with
``await call_next(request)`` (possibly a request with other arguments, via
:meth:`Request.with_arguments`), answers in its place by returning a result (the method's wire
dict), or refuses it by raising :class:`~mcp_core.errors.RequestRefusedError` (a JSON-RPC error
of its choosing). It runs inside :class:`~mcp_core.server.RequestHandlers`, where each request
reaches the registry, so it is the same for every transport and era and for every element
(local, adopted or proxied): visibility is applied before it, so a hidden element reaches it
exactly as a missing one does (``element`` None), and a list it wraps holds only what the
session may see.

Ready-made: :class:`RateLimit` (per caller and tool) and :class:`AuditLog`.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, Protocol, final

from mcp_core.elements import Element, ElementKind
from mcp_core.errors import McpCoreError
from mcp_core.handlers._sdk_values import is_protocol_error
from mcp_core.server._errors import wire_error
from mcp_core.visibility import SessionInfo

__all__ = [
    "AuditLog",
    "AuditRecord",
    "CallNext",
    "Method",
    "Middleware",
    "RateLimit",
    "Request",
    "chain",
]

Method = Literal[
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "tools/call",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "resources/subscribe",
]
"""The requests middleware wraps: the four lists, and the five that name one element."""

LIST_METHODS: Final[frozenset[str]] = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
)


@final
@dataclass(frozen=True, slots=True)
class Request:
    """One element request, as middleware sees it.

    - ``method``: the MCP method (:data:`Method`).
    - ``session``: who is asking (what the transport authenticated, and the session hook's
      attributes).
    - ``era``: the negotiated protocol version (``"2025-11-25"``, ``"2026-07-28"``...), None when
      the caller of the request handlers did not say.
    - ``target``: what the client named: the tool or prompt name, the resource URI (for a
      completion, the prompt name or the template's URI); None for a list.
    - ``element``: the element that answers, once resolved and visible to ``session``; None for
      a list and for an unknown or hidden target (``call_next`` then raises what a missing
      element raises).
    - ``arguments``: a call's or a prompt's arguments, a templated read's variables, a
      completion's ``{argument: partial value}``; None when there are none.
    - ``cursor``: a list's cursor.
    """

    method: Method
    session: SessionInfo
    era: str | None = None
    target: str | None = None
    element: Element | None = None
    arguments: Mapping[str, Any] | None = None
    cursor: str | None = None

    @property
    def kind(self) -> ElementKind | None:
        """The element's kind (None for a list, or when nothing visible answers)."""
        return None if self.element is None else self.element.kind

    @property
    def is_list(self) -> bool:
        """Whether this is one of the four list requests."""
        return self.method in LIST_METHODS

    def with_arguments(self, arguments: Mapping[str, Any] | None) -> Request:
        """This request with other arguments (what a middleware passes on to ``call_next``)."""
        return replace(self, arguments=arguments)


CallNext = Callable[[Request], Awaitable[dict[str, Any]]]
Outcome = Literal["ok", "tool_error", "refused", "failed"]
"""How a request ended, for audit records and metrics."""
"""The rest of the chain: the next middleware, and at the end the request's own answer."""


class Middleware(Protocol):
    """Wraps element requests: pass on with ``await call_next(request)``, answer, or refuse.

    The result is the method's MCP result as a wire dict (``{"content": [...], "isError": ...}``
    for a call, ``{"tools": [...], "nextCursor"?: ...}`` for a list...). Refuse with
    :class:`~mcp_core.errors.RequestRefusedError`; any other exception is a failure of the
    server, answered as an internal error and logged.
    """

    def __call__(self, request: Request, call_next: CallNext, /) -> Awaitable[dict[str, Any]]:
        """The result for ``request``."""
        ...


def checked(middleware: Sequence[Middleware]) -> tuple[Middleware, ...]:
    """``middleware`` as a tuple, each item checked.

    Raises:
        TypeError: it is not a sequence, or an item is not callable (the message names which).
    """
    if isinstance(middleware, str | bytes) or not isinstance(middleware, Sequence):
        raise TypeError(
            f"middleware must be a sequence of middleware, got {type(middleware).__name__}"
        )
    for index, item in enumerate(middleware):
        if not callable(item):
            raise TypeError(
                f"middleware[{index}] must be an async callable (request, call_next), got "
                f"{type(item).__name__}"
            )
    return tuple(middleware)


def chain(middleware: Sequence[Middleware], answer: CallNext) -> CallNext:
    """``answer`` wrapped in ``middleware``, the first outermost.

    Raises:
        TypeError: see :func:`checked`.
    """
    wrapped = answer
    for item in reversed(checked(middleware)):
        wrapped = link(item, wrapped)
    return wrapped


def link(middleware: Middleware, call_next: CallNext) -> CallNext:
    """``call_next`` wrapped in one ``middleware``."""

    async def linked(request: Request) -> dict[str, Any]:
        return await middleware(request, call_next)

    return linked


def caller_of(session: SessionInfo) -> str:
    """Who a request counts against: its session, else its principal, else its client id.

    A 2026-07-28 request carries no session id; it counts against whom its token names. An
    unauthenticated request without a session counts against ``"anonymous"``, shared.
    """
    if session.session_id is not None:
        return f"session:{session.session_id}"
    if session.principal is not None:
        return f"principal:{session.principal}"
    if session.client_id is not None:
        return f"client:{session.client_id}"
    return "anonymous"


@final
class RateLimit:
    """At most ``rate`` calls per second per caller and tool, with bursts of ``burst`` (a token bucket).

    A caller is its session, else its principal, else ``"anonymous"`` (see :func:`caller_of`);
    ``per_tool=False`` gives each caller one bucket for all tools. A call over the limit is
    answered with a tool execution error (``isError``) saying when to retry, so a model sees it
    and backs off; the tool does not run. Only ``tools/call`` is limited. The buckets of the
    ``max_buckets`` most recent callers are kept (the least recent are forgotten, so memory is
    bounded). ``clock`` is ``time.monotonic`` unless given.
    """

    __slots__ = ("_buckets", "_clock", "_max", "burst", "per_tool", "rate")

    def __init__(
        self,
        rate: float,
        *,
        burst: int | None = None,
        per_tool: bool = True,
        max_buckets: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0:
            raise ValueError(f"rate must be a positive number of calls per second, got {rate!r}")
        if burst is None:
            burst = max(1, math.ceil(rate))
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValueError(f"burst must be a positive whole number of calls, got {burst!r}")
        if max_buckets < 1:
            raise ValueError(f"max_buckets must be at least 1, got {max_buckets!r}")
        self.rate = float(rate)
        self.burst = burst
        self.per_tool = per_tool
        self._max = max_buckets
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()

    def __repr__(self) -> str:
        return f"RateLimit({self.rate:g}/s, burst={self.burst}, per_tool={self.per_tool})"

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.method != "tools/call" or request.element is None:
            return await call_next(request)
        key = (caller_of(request.session), (request.target or "") if self.per_tool else "")
        wait = self._take(key)
        if wait > 0:
            return {
                "content": [
                    {
                        "type": "text",
                        "text": f"Rate limit exceeded for this tool; retry in {wait:.2g} s",
                    }
                ],
                "isError": True,
            }
        return await call_next(request)

    def _take(self, key: tuple[str, str]) -> float:
        """Take one token from ``key``'s bucket: 0, or the seconds until one is there."""
        now = self._clock()
        buckets = self._buckets
        tokens, at = buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens >= 1:
            tokens -= 1
            wait = 0.0
        else:
            wait = (1 - tokens) / self.rate
        buckets[key] = (tokens, now)
        while len(buckets) > self._max:
            buckets.popitem(last=False)
        return wait


@final
@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One answered request, as :class:`AuditLog` records it.

    ``outcome``: ``"ok"``, ``"tool_error"`` (a call answered ``isError``), ``"refused"`` (a
    protocol error the client's request earned: unknown element, bad params, a middleware's
    refusal) or ``"failed"`` (the server's own failure). ``code`` is the JSON-RPC error code
    when there was one. ``arguments`` is filled only when the log was asked to keep them.
    """

    method: str
    target: str | None
    era: str | None
    session_id: str | None
    principal: str | None
    client_id: str | None
    outcome: Outcome
    duration: float
    code: int | None = None
    arguments: Mapping[str, Any] | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (``arguments`` left out when not kept)."""
        out: dict[str, Any] = {
            "method": self.method,
            "target": self.target,
            "era": self.era,
            "session_id": self.session_id,
            "principal": self.principal,
            "client_id": self.client_id,
            "outcome": self.outcome,
            "duration_ms": round(self.duration * 1000, 3),
            "code": self.code,
        }
        if self.arguments is not None:
            out["arguments"] = dict(self.arguments)
        return out


@final
class AuditLog:
    """Records who asked for what and how it ended, one :class:`AuditRecord` per request.

    ``sink`` receives each record (default: an INFO line on the ``mcp_core.audit`` logger with
    the record as ``extra={"audit": record.as_dict()}``). Argument values are kept only with
    ``arguments=True``; ``methods`` narrows what is recorded (default: every method except the
    lists). A sink that raises is logged and never fails the request.
    """

    __slots__ = ("_arguments", "_methods", "_sink")

    def __init__(
        self,
        sink: Callable[[AuditRecord], object] | None = None,
        *,
        arguments: bool = False,
        methods: Iterable[str] | None = None,
    ) -> None:
        self._sink = sink if sink is not None else _log_record
        self._arguments = arguments
        self._methods = frozenset(methods) if methods is not None else frozenset(_ELEMENT_METHODS)

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.method not in self._methods:
            return await call_next(request)
        started = time.perf_counter()
        code: int | None = None
        outcome: Outcome = "failed"
        try:
            result = await call_next(request)
        except Exception as exc:
            code, outcome = outcome_of_error(exc)
            raise
        else:
            outcome = outcome_of_result(result)
            return result
        finally:
            self._record(request, outcome, code, time.perf_counter() - started)

    def _record(
        self,
        request: Request,
        outcome: Outcome,
        code: int | None,
        duration: float,
    ) -> None:
        session = request.session
        record = AuditRecord(
            method=request.method,
            target=request.target,
            era=request.era,
            session_id=session.session_id,
            principal=session.principal,
            client_id=session.client_id,
            outcome=outcome,
            duration=duration,
            code=code,
            arguments=request.arguments if self._arguments else None,
        )
        try:
            self._sink(record)
        except Exception:  # noqa: BLE001 -- an audit sink's failure never fails the request
            _audit.exception("the audit sink raised; the request is answered all the same")


_ELEMENT_METHODS: Final = (
    "tools/call",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "resources/subscribe",
)

_audit = logging.getLogger("mcp_core.audit")


def _log_record(record: AuditRecord) -> None:
    _audit.info(
        "%s %s by %s: %s",
        record.method,
        record.target,
        record.principal or record.session_id or "anonymous",
        record.outcome,
        extra={"audit": record.as_dict()},
    )


def outcome_of_result(result: Mapping[str, Any]) -> Outcome:
    """``tool_error`` for a result marked ``isError``, else ``ok``."""
    return "tool_error" if result.get("isError") is True else "ok"


def outcome_of_error(exc: BaseException) -> tuple[int | None, Outcome]:
    """The JSON-RPC code ``exc`` is answered with (None: not known here), and its outcome.

    ``refused``: the client's request earned it (unknown element, bad params, a refusal);
    ``failed``: the server's own failure, a backend down included.
    """
    if isinstance(exc, McpCoreError):
        error = wire_error(exc)
        return error.code, "refused" if error.expected and not error.retryable else "failed"
    # The SDK's MCPError, known by name: a stdio start has not imported the SDK (ADR 0115).
    return (exc.error.code if is_protocol_error(exc) else None), "failed"  # type: ignore[attr-defined]
