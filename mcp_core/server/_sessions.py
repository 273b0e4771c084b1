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

2026-07-28 requests carry no session id: any worker serves them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

from mcp_types import INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["WorkerSessions"]

_log = logging.getLogger("mcp_core.server")

_HEADER: Final = b"mcp-session-id"


@final
class WorkerSessions:
    """ASGI middleware: session ids carry ``worker``; another worker's sessions are refused loudly.

    ``owner_alive(worker)`` says whether a worker is registered in the deployment now (None: it
    cannot say, e.g. the store is down: then a misrouted request is answered 421 all the same).
    """

    __slots__ = ("_app", "_owner_alive", "_prefix", "_worker")

    def __init__(
        self,
        app: ASGIApp,
        *,
        worker: str,
        owner_alive: Callable[[str], Awaitable[bool | None]],
    ) -> None:
        self._app = app
        self._worker = worker
        self._prefix = f"{worker}.".encode()
        self._owner_alive = owner_alive

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
            if dot and owner:
                await self._misrouted(owner.decode("latin-1"), scope, send)
                return
            break  # not a session id any worker of this deployment made: the SDK says 404

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (k, self._prefix + v if k == _HEADER else v)
                        for k, v in message.get("headers", ())
                    ],
                }
            await send(message)

        await self._app(scope, receive, named)

    async def _misrouted(self, owner: str, scope: Scope, send: Send) -> None:
        shown = owner[:40]
        alive = await self._owner_alive(owner)
        if alive is False:
            _log.info(
                "a request for a session of worker %r, which is gone, reached worker %r: 404, "
                "the client starts a new session",
                shown,
                self._worker,
            )
            await _answer(send, 404, "Session not found", None)
            return
        message = (
            f"Misdirected request: this session belongs to worker {shown!r}, and this is worker "
            f"{self._worker!r}. The load balancer must send every request of a session to the "
            "worker named before the '.' in its Mcp-Session-Id (see docs/deployment.md)"
        )
        _log.error(
            "misrouted request: %s %s for a session of worker %r reached worker %r; route by the "
            "Mcp-Session-Id prefix (docs/deployment.md)",
            scope.get("method"),
            scope.get("path"),
            shown,
            self._worker,
        )
        await _answer(send, 421, message, {"worker": self._worker, "sessionWorker": shown})


async def _answer(send: Send, status: int, message: str, data: dict[str, Any] | None) -> None:
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
