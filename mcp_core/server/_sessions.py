"""Handshake-era sessions that name their worker, and requests that reach the wrong one.

A 2025-11-25 streamable HTTP session lives in the memory of the worker that opened it: its
transport, its server task, its event streams. Several workers therefore serve such sessions
*sticky* (ADR 0048): each session's requests go to the worker that opened it. This middleware
makes that routable and impossible to get silently wrong:

- the session id the SDK makes (``<hex>``) leaves the worker as ``<worker>.<hex>``, so the load
  balancer can route by its prefix (``use-server w1 if { req.hdr(mcp-session-id) -m beg w1. }``)
  and a session outlives nothing it should not;
- a request naming this worker's sessions has the prefix removed before the SDK sees it;
- a request naming another worker's session is *misrouted*: it is answered ``421 Misdirected
  Request`` with a JSON-RPC error saying which worker owns it and what to fix, and logged as an
  error, instead of the SDK's ``404 Session not found`` (which would send the client into a new
  session and hide the misconfiguration). When the shared store says that worker is gone, the
  session is gone with it: ``404``, so the client starts a new one, as the protocol says.

A client can send any session id on every request, so what a misrouted request costs is bounded
(ADR 0070): at most one log line per :data:`LOG_INTERVAL` seconds (counting the ones it stands
for), and one store lookup per owner per :data:`VERDICT_TTL` seconds, :data:`LOOKUPS_PER_SECOND`
at most (beyond, the owner is taken as alive: ``421``).

2026-07-28 requests carry no session id: any worker serves them.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

from mcp_types import INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Misrouted", "WorkerSessions", "answer_error", "public_session_id"]

_log = logging.getLogger("mcp_core.server")

_HEADER: Final = b"mcp-session-id"

LOG_INTERVAL: Final = 60.0
"""Seconds between two log lines about misrouted requests (of one kind)."""
VERDICT_TTL: Final = 5.0
"""Seconds a store verdict that a worker is gone is reused."""
ALIVE_TTL: Final = 1.0
"""Seconds a store verdict that a worker is alive is reused: a worker that starts draining (its
sessions end with it) is seen as gone within this."""
LOOKUPS_PER_SECOND: Final = 20
_VERDICTS_KEPT: Final = 1024


@final
class _Throttled:
    """A log line at most once per interval, saying how many it stands for."""

    __slots__ = ("_last", "_suppressed")

    def __init__(self) -> None:
        self._last = -LOG_INTERVAL
        self._suppressed = 0

    def due(self) -> int | None:
        """None: stay silent; else log now, for this many occurrences."""
        now = time.monotonic()
        if now - self._last < LOG_INTERVAL:
            self._suppressed += 1
            return None
        self._last = now
        count, self._suppressed = self._suppressed + 1, 0
        return count


@final
class _Verdicts:
    """Whether each worker is alive, asked of the store at a bounded rate and reused a while."""

    __slots__ = ("_ask", "_kept", "_window", "_window_lookups")

    def __init__(self, ask: Callable[[str], Awaitable[bool | None]]) -> None:
        self._ask = ask
        self._kept: OrderedDict[str, tuple[bool | None, float]] = OrderedDict()
        self._window = 0.0
        self._window_lookups = 0

    async def alive(self, owner: str) -> bool | None:
        now = time.monotonic()
        kept = self._kept.get(owner)
        if kept is not None and kept[1] > now:
            return kept[0]
        if now - self._window >= 1.0:
            self._window, self._window_lookups = now, 0
        if self._window_lookups >= LOOKUPS_PER_SECOND:
            return None  # cannot say without another lookup: 421, as when the store is down
        self._window_lookups += 1
        verdict = await self._ask(owner)
        self._kept[owner] = (verdict, now + (ALIVE_TTL if verdict else VERDICT_TTL))
        self._kept.move_to_end(owner)
        while len(self._kept) > _VERDICTS_KEPT:
            self._kept.popitem(last=False)
        return verdict


@final
class Misrouted:
    """How a worker answers a request for another worker's session that it cannot serve.

    ``owner_alive(worker)`` says whether a worker is registered in the deployment now (None: it
    cannot say, e.g. the store is down: then the request is answered 421 all the same).
    """

    __slots__ = ("_gone_log", "_misrouted_log", "_owners", "_worker")

    def __init__(
        self, *, worker: str, owner_alive: Callable[[str], Awaitable[bool | None]]
    ) -> None:
        self._worker = worker
        self._owners = _Verdicts(owner_alive)
        self._misrouted_log = _Throttled()
        self._gone_log = _Throttled()

    async def answer(self, owner: str, scope: Scope, send: Send) -> None:
        """Answer a request of ``owner``'s session: 404 when that worker is gone, else 421."""
        shown = owner[:40]
        alive = await self._owners.alive(owner)
        if alive is False:
            count = self._gone_log.due()
            if count is not None:
                _log.info(
                    "a request for a session of worker %r, which is gone, reached worker %r: "
                    "404, the client starts a new session (%d such request(s) in the last %ds)",
                    shown,
                    self._worker,
                    count,
                    LOG_INTERVAL,
                )
            await answer_error(send, 404, "Session not found", None)
            return
        message = (
            f"Misdirected request: this session belongs to worker {shown!r}, and this is worker "
            f"{self._worker!r}. The load balancer must send every request of a session to the "
            "worker named before the '.' in its Mcp-Session-Id (see docs/deployment.md)"
        )
        count = self._misrouted_log.due()
        if count is not None:
            _log.error(
                "misrouted request: %s %s for a session of worker %r reached worker %r; route by "
                "the Mcp-Session-Id prefix (docs/deployment.md) (%d misrouted request(s) in the "
                "last %ds; one line per interval)",
                scope.get("method"),
                str(scope.get("path"))[:200],
                shown,
                self._worker,
                count,
                LOG_INTERVAL,
            )
        await answer_error(send, 421, message, {"worker": self._worker, "sessionWorker": shown})


def public_session_id(worker: str, session_id: str) -> str:
    """The id a client knows a session by (``w1.<hex>``), from the id this worker's SDK uses.

    A session this worker opened is ``<hex>`` inside it; one it resumed keeps its full id.
    """
    return session_id if "." in session_id else f"{worker}.{session_id}"


@final
class WorkerSessions:
    """ASGI middleware: session ids carry ``worker``; another worker's sessions go to ``misrouted``.

    With ``shared`` (sessions recorded in the shared store, ADR 0109), a request for another
    worker's session passes through with its id unchanged: the endpoint resumes the session
    (:class:`~mcp_core.server._shared_sessions`) or refuses it with ``misrouted`` itself.
    """

    __slots__ = ("_app", "_misrouted", "_prefix", "_shared")

    def __init__(
        self, app: ASGIApp, *, worker: str, misrouted: Misrouted, shared: bool = False
    ) -> None:
        self._app = app
        self._prefix = f"{worker}.".encode()
        self._misrouted = misrouted
        self._shared = shared

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope["headers"])
        for index, (name, value) in enumerate(headers):
            if name != _HEADER:
                continue
            if value.startswith(self._prefix):
                headers[index] = (name, value[len(self._prefix) :])
                scope = {**scope, "headers": headers}
                break
            owner, dot, _ = value.partition(b".")
            if dot and owner and not self._shared:
                await self._misrouted.answer(owner.decode("latin-1"), scope, send)
                return
            break  # not a session id any worker of this deployment made: the SDK says 404

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (k, self._prefix + v if k == _HEADER and b"." not in v else v)
                        for k, v in message.get("headers", ())
                    ],
                }
            await send(message)

        await self._app(scope, receive, named)


async def answer_error(
    send: Send, status: int, message: str, data: dict[str, Any] | None = None
) -> None:
    """Answer with ``status`` and a JSON-RPC error saying ``message`` (no request id)."""
    error: dict[str, Any] = {"code": INVALID_REQUEST, "message": message}
    if data is not None:
        error["data"] = data
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
