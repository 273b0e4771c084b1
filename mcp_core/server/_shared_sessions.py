"""Handshake-era sessions that outlive their worker: a signed record and events in the shared store.

A 2025-11-25 streamable HTTP session lives in the memory of the worker that opened it (its
transport, its server task). In a deployment (ADR 0109) what the session *is* also goes to the
shared store, so any worker can serve its next request:

- a **session record** (:class:`SessionRecords`): the negotiated version, the client's
  ``initialize`` parameters, the ``logging/setLevel`` threshold, the subscribed URIs and the
  credential that opened it; signed with a key derived from the deployment secret and bound to
  the session id, bounded in size, expiring with the session's idle timeout;
- its **event streams** (:class:`RedisEventStore`): a
  :class:`~mcp_core.server.SessionEventStore` in Redis, so a ``Last-Event-ID`` resume lands on
  any worker.

A worker that gets a request of a session it does not hold reads the record, checks its
signature, its session id and the requesting credential, and *resumes* the session
(:func:`resume_session`): a transport and a server task of its own, initialized as the record
says, without a new handshake. The session id stays the bearer: knowing it is what it always
took to use a session, and a record cannot be forged, moved to another id or used by another
credential without the secret (``tests/server/test_shared_sessions.py`` tries).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    EventCallback,
    EventId,
    EventMessage,
    StreamableHTTPServerTransport,
    StreamId,
)
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import (
    InitializeRequestParams,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_core.errors import CacheStoreError
from mcp_core.server._gateway import LOG_LEVELS
from mcp_core.server._sessions import Misrouted, answer_error, public_session_id
from mcp_core.stores import ListingStore, RedisStore
from mcp_core.stores._refusals import Refusals

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from mcp_core.server._gateway import SessionState

__all__ = [
    "MAX_SESSION_RECORD_BYTES",
    "PUBLIC_SESSION_ID",
    "RESTORED_KEY",
    "RedisEventStore",
    "ResumeSessions",
    "SessionRecord",
    "SessionRecords",
    "SessionSharing",
    "resume_session",
    "sign",
    "verify",
]

_log = logging.getLogger("mcp_core.server")

PUBLIC_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,40}\.[0-9a-f]{32}")
"""A session id a worker of a deployment hands out (``w1.<32 hex>``): the only ids looked up."""
MAX_SESSION_RECORD_BYTES: Final = 64 * 1024
"""The largest session record written or read back; a larger one keeps its session local."""
MAX_SUBSCRIPTIONS: Final = 256
"""Subscribed URIs a record carries at most (a session with more stays on its worker)."""
DEFAULT_RECORD_TTL: Final = 3600.0
"""Seconds a record lives unrenewed when sessions never idle out (``session_idle_timeout=None``)."""
RESTORED_KEY: Final = "mcp_core.restored_session"
"""Where a resumed connection's ``state`` holds the record it was resumed from."""


def sign(key: bytes, what: str, fields: Mapping[str, object]) -> bytes:
    """``fields`` dated now and signed with ``key`` for ``what``: a record any holder of ``key`` checks."""
    body = {**fields, "at": int(time.time() * 1000)}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    mac = hmac.new(key, f"{what}\n{text}".encode(), hashlib.sha256).hexdigest()
    return json.dumps({"record": body, "mac": mac}, separators=(",", ":")).encode()


def verify(key: bytes, what: str, raw: bytes | None, max_bytes: int) -> dict[str, object] | None:
    """The fields of a record :func:`sign` made with ``key`` for ``what``; None for anything else."""
    if raw is None or len(raw) > max_bytes:
        return None
    try:
        document = json.loads(raw)
        body, mac = document["record"], document["mac"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    if not isinstance(body, dict) or not isinstance(mac, str):
        return None
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    expected = hmac.new(key, f"{what}\n{text}".encode(), hashlib.sha256).hexdigest()
    same = hmac.compare_digest(mac.encode(errors="surrogatepass"), expected.encode())
    if not same or not isinstance(body.get("at"), int):
        return None
    return body


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What a worker needs to serve a handshake-era session it did not open."""

    session_id: str
    version: str
    client: InitializeRequestParams
    owner: dict[str, str | None] | None = None
    """The credential that opened the session (client id, issuer, subject), if it was authenticated."""
    log_level: str | None = None
    subscriptions: tuple[str, ...] = ()


@final
class SessionRecords:
    """Session records in a deployment's shared store, signed with ``key``.

    ``ttl`` is how long a record lives unrenewed (the servers' session idle timeout); the
    server writes one when a session is opened or changes, and renews it while the session is
    used. A record that does not verify (written without the secret, moved from another
    session's key, cut, oversized) is treated as absent and reported, rate-limited.
    """

    __slots__ = ("_key", "_refusals", "_store", "ttl")

    def __init__(self, store: ListingStore, *, key: bytes, ttl: float = DEFAULT_RECORD_TTL) -> None:
        self._store = store
        self._key = key
        self._refusals = Refusals(_log, "session records")
        self.ttl = ttl

    async def save(self, record: SessionRecord) -> bool:
        """Write ``record`` (renewing its lease); False when it is too large to share (logged)."""
        fields: dict[str, object] = {
            "version": record.version,
            "client": record.client.model_dump(by_alias=True, mode="json", exclude_none=True),
            "owner": record.owner,
            "level": record.log_level,
            "subscriptions": list(record.subscriptions),
        }
        raw = sign(self._key, _what(record.session_id), fields)
        if len(raw) > MAX_SESSION_RECORD_BYTES or len(record.subscriptions) > MAX_SUBSCRIPTIONS:
            self._refusals.refuse(
                f"session records larger than {MAX_SESSION_RECORD_BYTES} bytes or "
                f"{MAX_SUBSCRIPTIONS} subscriptions",
                f"session {record.session_id[:12]} is served by its own worker only",
            )
            return False
        await self._store.set(_record_key(record.session_id), raw, ttl=self.ttl)
        return True

    async def load(self, session_id: str) -> SessionRecord | None:
        """The record of ``session_id`` if one was written with the secret for that very id."""
        if not PUBLIC_SESSION_ID.fullmatch(session_id):
            return None
        raw = await self._store.get(_record_key(session_id))
        if raw is None:
            return None
        body = verify(self._key, _what(session_id), raw, MAX_SESSION_RECORD_BYTES)
        record = None if body is None else _parsed(session_id, body)
        if record is None:
            self._refusals.refuse(
                "session records not signed with the deployment secret for their session",
                f"session {session_id[:12]} is not resumed",
            )
        return record

    async def forget(self, session_id: str) -> None:
        """Remove the record of ``session_id`` (the client ended the session)."""
        if PUBLIC_SESSION_ID.fullmatch(session_id):
            await self._store.delete(_record_key(session_id))


def _what(session_id: str) -> str:
    return f"session:{session_id}"


def _record_key(session_id: str) -> str:
    return f"session:{session_id}"


def _parsed(session_id: str, body: Mapping[str, object]) -> SessionRecord | None:
    version, client, owner = body.get("version"), body.get("client"), body.get("owner")
    level, subscriptions = body.get("level"), body.get("subscriptions")
    if not isinstance(version, str) or not isinstance(client, dict):
        return None
    if owner is not None and not (
        isinstance(owner, dict) and all(v is None or isinstance(v, str) for v in owner.values())
    ):
        return None
    if level is not None and not isinstance(level, str):
        return None
    if not isinstance(subscriptions, list) or not all(isinstance(s, str) for s in subscriptions):
        return None
    try:
        params = InitializeRequestParams.model_validate(client, by_name=False)
    except ValidationError:
        return None
    return SessionRecord(
        session_id=session_id,
        version=version,
        client=params,
        owner=owner,
        log_level=level,
        subscriptions=tuple(subscriptions),
    )


async def resume_session(
    manager: StreamableHTTPSessionManager,
    session_id: str,
    record: SessionRecord,
    on_resumed: Callable[[Connection], object],
) -> None:
    """Serve ``record``'s session here from now on, as if this worker had opened it.

    A transport registered in the manager's table (which binds its event store and response
    mode, as for every session) and a server task whose connection is already initialized as
    the record says, given to ``on_resumed`` before it serves anything (the server tracks it
    from then on: a resumed stream hears of changes before the session's next request); the
    session ends here as any session does (idle timeout, DELETE, shutdown).
    """
    tasks = manager._task_group  # noqa: SLF001 -- the manager's own task group, where sessions run
    if tasks is None:
        raise RuntimeError("the session manager is not running")
    transport = StreamableHTTPServerTransport(
        mcp_session_id=session_id,
        is_json_response_enabled=manager.json_response,
        event_store=None,
        security_settings=manager.security_settings,
        retry_interval=manager.retry_interval,
        idle_timeout=manager.session_idle_timeout,
    )
    if record.owner is not None:
        manager._session_owners[session_id] = record.owner  # noqa: SLF001 -- the SDK's owner check then applies
    manager._server_instances[session_id] = transport  # noqa: SLF001 -- the table bind_sessions owns

    async def run_server(
        *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        async with transport.connect() as (read_stream, write_stream):
            task_status.started()
            try:
                idle_scope = transport.idle_scope or anyio.CancelScope()
                with idle_scope:
                    # The SDK's serve_loop, with the connection initialized from the record.
                    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                        read_stream, write_stream, inline_methods=frozenset({"initialize"})
                    )
                    connection = Connection.for_loop(dispatcher, session_id=session_id)
                    connection.client_params = record.client
                    connection.protocol_version = record.version
                    connection.initialized.set()
                    connection.state[RESTORED_KEY] = record
                    on_resumed(connection)
                    await serve_connection(
                        manager.app,
                        dispatcher,
                        connection=connection,
                        lifespan_state=manager._lifespan_state,  # noqa: SLF001 -- as the manager's own sessions
                    )
            except Exception:  # noqa: BLE001 -- as the SDK's sessions: logged, the session discarded
                _log.exception("resumed session %s crashed", session_id[:64])
            finally:
                await manager._discard_session(session_id, transport)  # noqa: SLF001 -- the SDK's own ending

    try:
        await tasks.start(run_server)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await manager._discard_session(session_id, transport)  # noqa: SLF001 -- as above
        raise


# -- events -------------------------------------------------------------------------------------

DEFAULT_SHARED_MAX_EVENTS: Final = 1000
"""Events one session keeps in Redis at most (the oldest go first)."""
DEFAULT_SHARED_MAX_EVENT_BYTES: Final = 1024 * 1024
"""The largest event kept (a larger one is sent live, never retained)."""
DEFAULT_SHARED_MAX_AGE: Final = 600.0
_PAGE: Final = 32
_FOLLOW_FIRST: Final = 0.05
_FOLLOW_POLL: Final = 0.25
"""Seconds between two reads of a followed request stream at most (fewer while events come)."""
_ENDED_KEPT: Final = 4096


@final
class RedisEventStore:
    """A :class:`~mcp_core.server.SessionEventStore` in the deployment's Redis: resume on any worker.

    Each session's events are one Redis list (``<namespace>:events:<session>``), each entry
    signed with ``key`` for its session, so an entry written without the secret or copied
    from another session's list is never replayed. Event ids are 128-bit random tokens.
    Bounds per session: ``max_events`` entries (the oldest trimmed first), events up to
    ``max_event_bytes`` (a larger one is sent live, never kept), none older than ``max_age``
    seconds (the list expires that long after its last event; older entries are skipped).
    A resumed request stream is followed until its answer for at most ``follow`` seconds (the
    request may run on another worker); a client whose resume ends unanswered resumes again.
    A store that does not answer costs its timeout once (then its circuit breaker answers): the
    event is sent live all the same, and a replay finds what it could read.

    Sessions outlive the worker: a worker ending its copy of a session (shutdown, idle) keeps
    its events; :meth:`forget` (the client's DELETE) and :meth:`end_session` drop them.
    """

    __slots__ = (
        "_ended",
        "_follow",
        "_forgetting",
        "_key",
        "_max_age",
        "_max_event_bytes",
        "_max_events",
        "_refusals",
        "_store",
    )

    def __init__(
        self,
        store: RedisStore,
        *,
        key: bytes,
        max_events: int = DEFAULT_SHARED_MAX_EVENTS,
        max_event_bytes: int = DEFAULT_SHARED_MAX_EVENT_BYTES,
        max_age: float = DEFAULT_SHARED_MAX_AGE,
        follow: float = DEFAULT_SHARED_MAX_AGE,
    ) -> None:
        for name, value in (("max_events", max_events), ("max_event_bytes", max_event_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RedisEventStore {name} must be a positive int, got {value!r}")
        if not (isinstance(follow, int | float) and math.isfinite(follow) and follow >= 0):
            raise ValueError(
                f"RedisEventStore follow must be a number of seconds >= 0, got {follow!r}"
            )
        if not (isinstance(max_age, int | float) and math.isfinite(max_age) and max_age > 0):
            raise ValueError(
                f"RedisEventStore max_age must be a positive number of seconds, got {max_age!r}"
            )
        self._store = store
        self._key = key
        self._max_events = max_events
        self._max_event_bytes = max_event_bytes
        self._max_age = float(max_age)
        self._follow = float(follow)
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._forgetting: set[asyncio.Task[None]] = set()  # end_session's deletions in flight
        self._refusals = Refusals(_log, "shared session events")

    def __repr__(self) -> str:
        return f"RedisEventStore({self._store!r}, max_events={self._max_events})"

    async def store_event(
        self, session_id: str, stream_id: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        """Append one event to ``session_id``'s list (trimmed, its lease renewed); return its id."""
        event_id = secrets.token_urlsafe(16)
        data = (
            None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        )
        entry = self._entry(session_id, event_id, stream_id, data)
        if len(entry) > self._max_event_bytes:
            return event_id  # sent live, never kept
        self._ended.pop(session_id, None)
        key = self._store.key(_events_key(session_id))
        milliseconds = max(1, math.ceil(self._max_age * 1000))

        async def push(client: Any) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, entry)
                pipe.ltrim(key, -self._max_events, -1)
                pipe.pexpire(key, milliseconds)
                await pipe.execute()

        try:
            await self._store.call("store a session event", push, key=_events_key(session_id))
        except CacheStoreError as exc:
            # Sent live all the same; only a resume from it finds nothing (as for an evicted id).
            self._refusals.refuse("session events the shared store did not take", str(exc))
        return event_id

    async def replay_events_after(
        self, session_id: str, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send ``session_id``'s kept events that followed ``last_event_id`` on its stream.

        A request's stream is then *followed* until its answer: the request may run on another
        worker (or this one), whose events reach Redis before they are sent, so they are read
        from there as they come (polled every :data:`_FOLLOW_POLL` seconds at most, for at most
        ``follow`` seconds). The session's own stream (``GET``) is served live by this worker.
        """
        if session_id in self._ended or not isinstance(last_event_id, str):
            return None
        cursor = _Cursor(last_event_id)
        try:
            await self._read(session_id, cursor, send_callback)
            if cursor.stream is None or cursor.stream == GET_STREAM_KEY:
                return cursor.stream
            deadline = time.monotonic() + self._follow
            delay = _FOLLOW_FIRST
            while not cursor.answered and time.monotonic() < deadline:
                await anyio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                sent = cursor.sent
                await self._read(session_id, cursor, send_callback)
                delay = _FOLLOW_FIRST if cursor.sent > sent else min(2 * delay, _FOLLOW_POLL)
        except CacheStoreError as exc:
            self._refusals.refuse("session event replays the shared store did not answer", str(exc))
        return cursor.stream

    async def _read(self, session_id: str, cursor: _Cursor, send_callback: EventCallback) -> None:
        """Send the events after ``cursor`` on its stream, and move it past what is kept now."""
        key = self._store.key(_events_key(session_id))
        oldest = (time.time() - self._max_age) * 1000
        if cursor.found and not await self._still_at(session_id, key, cursor):
            cursor.index, cursor.found = 0, False  # trimmed meanwhile: look for it again
        while True:
            page = await self._page(session_id, key, cursor.index, _PAGE)
            for raw in page:
                cursor.index += 1
                event = self._event(session_id, raw)
                if event is None or event["at"] < oldest:
                    continue
                if not cursor.found:
                    cursor.found = event["id"] == cursor.last
                    if cursor.found and cursor.stream is None:
                        cursor.stream = event["stream"]
                elif event["stream"] == cursor.stream:
                    cursor.last = event["id"]
                    await self._send(event, cursor, send_callback)
            if len(page) < _PAGE:
                return

    async def _still_at(self, session_id: str, key: str, cursor: _Cursor) -> bool:
        """Whether the entry before ``cursor.index`` is still the one it last went past."""
        head = await self._page(session_id, key, cursor.index - 1, 1)
        event = self._event(session_id, head[0]) if head else None
        return event is not None and event["id"] == cursor.last

    @staticmethod
    async def _send(event: dict[str, Any], cursor: _Cursor, send_callback: EventCallback) -> None:
        if event["data"] is None:
            return  # a priming event: a place to resume from, nothing to send
        message = jsonrpc_message_adapter.validate_json(event["data"])
        await send_callback(EventMessage(message, event["id"]))
        cursor.sent += 1
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            cursor.answered = True

    async def _page(self, session_id: str, key: str, start: int, count: int) -> list[object]:
        found = await self._store.call(
            "read session events",
            lambda client: client.lrange(key, start, start + count - 1),
            key=_events_key(session_id),
            writes=False,
        )
        return list(found) if start >= 0 else []

    def end_session(self, session_id: str) -> None:
        """Forget ``session_id``'s events: none replays from now on; the list is deleted soon."""
        self._ended[session_id] = None
        while len(self._ended) > _ENDED_KEPT:
            self._ended.popitem(last=False)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # the list expires on its own
        # Held until done (a task only the loop references may be collected mid-flight).
        task = loop.create_task(self.forget(session_id))
        self._forgetting.add(task)
        task.add_done_callback(self._forgetting.discard)

    async def settle(self) -> None:
        """Wait for the deletions :meth:`end_session` started: call it before closing the store.

        A deletion still running when its store closes would open a connection of its own and
        leave it open.
        """
        if self._forgetting:
            await asyncio.gather(*self._forgetting, return_exceptions=True)

    async def forget(self, session_id: str) -> None:
        """Delete ``session_id``'s events now (a store that does not answer: they expire)."""
        try:
            await self._store.delete(_events_key(session_id))
        except CacheStoreError as exc:
            _log.warning("could not delete the events of session %s: %s", session_id[:12], exc)

    # -- entries ------------------------------------------------------------------------------

    def _entry(self, session_id: str, event_id: str, stream_id: str, data: str | None) -> bytes:
        body = json.dumps(
            {"id": event_id, "stream": stream_id, "data": data, "at": int(time.time() * 1000)},
            separators=(",", ":"),
        )
        mac = hmac.new(self._key, f"{session_id}\n{body}".encode(), hashlib.sha256).hexdigest()
        return f"{mac}{body}".encode()

    def _event(self, session_id: str, raw: object) -> dict[str, Any] | None:
        if not isinstance(raw, bytes) or len(raw) <= 64:  # noqa: PLR2004 -- a hex SHA-256
            return None
        mac, body = raw[:64], raw[64:]
        expected = hmac.new(self._key, f"{session_id}\n".encode() + body, hashlib.sha256)
        if not hmac.compare_digest(mac, expected.hexdigest().encode()):
            self._refusals.refuse(
                "session events not signed with the deployment secret for their session",
                f"skipped in session {session_id[:12]}",
            )
            return None
        try:
            event = json.loads(body)
        except ValueError:
            return None
        return event if isinstance(event, dict) else None


@dataclass(slots=True)
class _Cursor:
    """Where a replay is: the last event sent (or asked after), on which stream, how far in."""

    last: str
    stream: StreamId | None = None
    found: bool = False
    index: int = 0
    sent: int = 0
    answered: bool = False


def _events_key(session_id: str) -> str:
    return f"events:{session_id}"


# -- serving ------------------------------------------------------------------------------------


@final
class ResumeSessions:
    """ASGI layer at the endpoint: a request of a session this worker does not hold resumes it.

    Inside authentication (the requesting credential is known) and the per-client session
    slots (a resumed session counts against its client like one opened here). For a session
    id this worker does not hold, it reads the session's record: signed for that id and opened
    by the same credential, the session is resumed here; otherwise another worker's session is
    answered by ``misrouted`` (421, or 404 when that worker is gone) and this worker's own
    (a restarted worker's previous self's) by the SDK (404). A ``DELETE`` that ends a session
    also removes its record and its shared events.
    """

    __slots__ = (
        "_app",
        "_manager",
        "_misrouted",
        "_on_resumed",
        "_refusals",
        "_resuming",
        "_sharing",
        "_worker",
    )

    def __init__(
        self,
        app: ASGIApp,
        *,
        worker: str,
        manager: StreamableHTTPSessionManager,
        sharing: SessionSharing,
        misrouted: Misrouted,
        on_resumed: Callable[[Connection], object],
    ) -> None:
        self._app = app
        self._worker = worker
        self._manager = manager
        self._sharing = sharing
        self._misrouted = misrouted
        self._on_resumed = on_resumed
        self._resuming: dict[str, anyio.Event] = {}
        self._refusals = Refusals(_log, f"worker {worker}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _session_header(scope) if scope["type"] == "http" else None
        if session_id is None:
            await self._app(scope, receive, send)
            return
        public = public_session_id(self._worker, session_id)
        table = self._manager._server_instances  # noqa: SLF001 -- the table bind_sessions owns
        held = session_id in table or await self._resumed(scope, session_id, public)
        if held is None:  # another credential's session: exactly as if it did not exist
            await answer_error(send, 404, "Session not found")
            return
        owner, dot, _ = session_id.partition(".")
        if not held and dot:
            await self._misrouted.answer(owner, scope, send)
            return
        if scope.get("method") != "DELETE":
            await self._app(scope, receive, send)
            return

        async def ended(message: Message) -> None:
            # The client ended its session: forgotten everywhere before it hears so.
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:  # noqa: PLR2004 -- success
                await self._sharing.forget(public)
            await send(message)

        await self._app(scope, receive, ended)

    async def _resumed(self, scope: Scope, session_id: str, public: str) -> bool | None:
        """Whether ``session_id`` is held here now, resumed from its record if need be.

        None: its record says another credential opened it.
        """
        table = self._manager._server_instances  # noqa: SLF001 -- the table bind_sessions owns
        pending = self._resuming.get(session_id)
        if pending is not None:  # another request of the session is resuming it: wait for that
            await pending.wait()
            return session_id in table
        done = self._resuming[session_id] = anyio.Event()
        try:
            record = await self._record(scope, public)
            if record is None or record is False:
                return record
            limit = self._manager.max_sessions
            if session_id not in table and (limit is None or len(table) < limit):
                await resume_session(self._manager, session_id, record, self._on_resumed)
                _log.info("worker %s resumed session %s", self._worker, public[:12])
            return session_id in table
        finally:
            del self._resuming[session_id]
            done.set()

    async def _record(self, scope: Scope, public: str) -> SessionRecord | Literal[False] | None:
        """The record to resume ``public`` from; False: none; None: another credential's."""
        try:
            record = await self._sharing.records.load(public)
        except CacheStoreError as exc:
            _log.warning("cannot read the record of session %s: %s", public[:12], exc)
            return False
        if record is None:
            return False
        if record.owner != _requestor(scope):
            self._refusals.refuse(
                "requests for a session with another credential than the one that opened it",
                f"session {public[:12]}: 404",
            )
            return None
        return record


def _session_header(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"mcp-session-id":
            return str(value.decode("latin-1"))
    return None


def _requestor(scope: Scope) -> dict[str, str | None] | None:
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    return _owner_fields(authorization_context(user))


def _owner_fields(owner: Mapping[str, object]) -> dict[str, str | None]:
    """A credential's identity (client id, issuer, subject) as a record keeps it."""
    return {
        name: value if isinstance(value, str) else None
        for name in ("client_id", "issuer", "subject")
        for value in (owner.get(name),)
    }


@final
class SessionSharing:
    """What the server tells the session records: a session opened, changed, or still in use.

    ``worker`` names the session ids; ``owner(session_id)`` is the credential that opened a
    session (the SDK's record of it). A store that fails is logged (rate-limited) and the
    session goes on, served by this worker alone until a later write succeeds.
    """

    __slots__ = ("_events", "_owner", "_refusals", "_resume", "_worker", "records")

    def __init__(
        self,
        records: SessionRecords,
        *,
        worker: str,
        owner: Callable[[str], Mapping[str, object] | None],
        events: RedisEventStore | None = None,
        resume: tuple[StreamableHTTPSessionManager, Misrouted, Callable[[Connection], object]]
        | None = None,
    ) -> None:
        self.records: Final = records
        self._worker = worker
        self._owner = owner
        self._events = events
        self._resume = resume
        self._refusals = Refusals(_log, f"worker {worker}")

    @property
    def events_shared(self) -> bool:
        """Whether the sessions' events are in the shared store (kept when a session ends here)."""
        return self._events is not None

    def public(self, session_id: str) -> str:
        """The id every worker knows ``session_id`` by (``w1.<hex>``)."""
        return public_session_id(self._worker, session_id)

    def resuming(self, endpoint: ASGIApp) -> ASGIApp:
        """``endpoint`` resuming the sessions this worker does not hold (:class:`ResumeSessions`).

        ``resume`` (the session manager, how to answer a misrouted request, what to tell of a
        resumed session) must have been given.
        """
        if self._resume is None:
            raise RuntimeError("this SessionSharing was made without resume=; it cannot resume")
        manager, misrouted, on_resumed = self._resume
        return ResumeSessions(
            endpoint,
            worker=self._worker,
            manager=manager,
            sharing=self,
            misrouted=misrouted,
            on_resumed=on_resumed,
        )

    async def forget(self, session_id: str) -> None:
        """The session ended for good (the client's DELETE, reclaimed): remove its record and events.

        ``session_id`` as any worker knows it (``w1.<hex>``) or as this worker's SDK does.
        """
        public = public_session_id(self._worker, session_id)
        try:
            await self.records.forget(public)
        except CacheStoreError as exc:
            _log.warning("could not delete the record of session %s: %s", public[:12], exc)
        if self._events is not None:
            await self._events.forget(public)

    async def opened(self, state: SessionState, params: Mapping[str, Any], version: str) -> None:
        """The session of ``state`` was just initialized with ``params``, speaking ``version``.

        The client's ``notifications/initialized`` may reach another worker (any worker serves
        the session), so this one counts the session initialized once it has answered: it then
        hears of changes (``list_changed``) like every session, wherever that notification went.
        """
        try:
            client = InitializeRequestParams.model_validate(params, by_name=False)
        except ValidationError:
            return  # the SDK refused the initialize itself
        await self._save(state, client, version)
        state.connection.initialized.set()

    async def changed(self, state: SessionState) -> None:
        """The session's log level or subscriptions changed: every worker must see it."""
        client = state.connection.client_params
        if client is not None:
            await self._save(state, client, state.connection.protocol_version)

    async def used(self, state: SessionState) -> None:
        """A request of the session arrived: renew its record when a third of its lease is gone."""
        if time.monotonic() - state.shared_at >= self.records.ttl / 3:
            await self.changed(state)

    @staticmethod
    def restore(state: SessionState) -> None:
        """Give a resumed session's state what its record says (log level, subscriptions)."""
        record = state.connection.state.get(RESTORED_KEY)
        if isinstance(record, SessionRecord):
            level = record.log_level
            state.log_level = level if level in LOG_LEVELS else None
            state.subscriptions = set(record.subscriptions)
            state.shared_at = time.monotonic()

    async def _save(
        self, state: SessionState, client: InitializeRequestParams, version: str
    ) -> None:
        session_id = state.connection.session_id
        if session_id is None:
            return
        owner = self._owner(session_id)
        record = SessionRecord(
            session_id=public_session_id(self._worker, session_id),
            version=version,
            client=client,
            owner=None if owner is None else _owner_fields(owner),
            log_level=state.log_level,
            subscriptions=tuple(sorted(state.subscriptions)),
        )
        state.shared_at = time.monotonic()
        try:
            await self.records.save(record)
        except CacheStoreError as exc:
            state.shared_at = 0.0  # tried again on the next request
            self._refusals.refuse(
                "session records the shared store did not take",
                f"{exc}; the session is served by this worker alone until a write succeeds",
            )
