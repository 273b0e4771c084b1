"""A deployment: several workers behind a load balancer, serving as one server (ADRs 0045-0049).

:class:`Deployment` is what one worker needs to know to belong: its own id, the secret every
worker shares, and the shared backends (a Redis store and its change bus). From those it gives
the server everything that must agree between workers:

- the cursor key, the ``requestState`` key (2026-07-28 multi-round requests) and the cache key,
  each derived from the one shared secret, so any worker continues what another started;
- change propagation: a reload or a shared registration on one worker reaches every worker,
  which tells its own sessions (:class:`~mcp_core.registry.ChangePropagation`);
- shared runtime registrations (:meth:`Deployment.shared_source`);
- handshake-era sessions that name their worker (``w1.<random>``), so the load balancer routes
  each session back to it and a request that reaches another worker fails loudly instead of
  being answered as if the session never existed (see :mod:`mcp_core.server._sessions`);
- a listing of the workers (:meth:`Deployment.workers`): each one's registration, and a record of
  when it was last seen that outlives it by an hour, so a worker killed outright shows as gone;
- checks at startup: a deployment of several workers without a secret cannot be configured; a
  worker whose secret differs from the one live workers keep recorded, or whose id another live
  worker holds, refuses to start (the id, found out later, is reported ``misconfigured``:
  unready).

What a worker records in Redis (the secret's fingerprint, its registration) is signed with a key
derived from the secret and dated, and live workers renew it: whoever can write to Redis without
the secret can overwrite it, and workers then write it back and stay ready on what they have
(ADR 0068). A record no live worker maintains (a one-off ``SET``) never stops a worker from
starting; one that keeps changing under a worker's eyes while it does not verify means a live
deployment with another secret, and the worker refuses to start.

Redis is never on the path of a request's answer, except the misrouting check, which is bounded:
a Redis that is down or frozen costs at most one timeout, then the circuit breaker answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final, final

import anyio
from mcp.server.request_state import RequestStateSecurity

from mcp_core.elements import ElementKind
from mcp_core.errors import CacheStoreError, DeploymentError
from mcp_core.registry import ChangePropagation, Registry, SourceChangeNotifier
from mcp_core.server._deployed import WorkerState, WorkerStatus
from mcp_core.server._environment import ENVIRONMENT
from mcp_core.server._sessions import Misrouted, WorkerSessions
from mcp_core.server._shared_sessions import (
    DEFAULT_RECORD_TTL,
    RedisEventStore,
    SessionRecords,
    SessionSharing,
    sign,
    verify,
)
from mcp_core.sources import SharedSource
from mcp_core.stores import (
    BackendHealth,
    BackendHealthReport,
    ChangeBus,
    ListingStore,
    OperationTimeout,
    RedisChangeBus,
    RedisStore,
)
from mcp_core.stores._redis import DEFAULT_REDIS_CONNECT_TIMEOUT, DEFAULT_REDIS_TIMEOUT
from mcp_core.stores._redis_bus import DEFAULT_BUS_HEARTBEAT
from mcp_core.stores._refusals import Refusals

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette

    from mcp_core.server._events import SessionEventStore

__all__ = [
    "ENVIRONMENT",
    "MIN_SECRET_BYTES",
    "WORKER_ID",
    "Deployment",
]

_log = logging.getLogger("mcp_core.server")

WORKER_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""What a worker id may be: it starts every session id the worker hands out (``w1.<random>``)."""
MIN_SECRET_BYTES: Final = 32
"""The shortest shared secret a deployment accepts."""


# A worker's registration lives this long unless renewed; it is renewed six times as often, so
# a live holder of an id is seen renewing it within a second.
_REGISTRATION_TTL: Final = 6.0
_HEARTBEAT: Final = _REGISTRATION_TTL / 6
# Not the "deployment:fingerprint" of earlier versions, which their workers, during a rolling
# upgrade, still compare with a plain digest.
_FINGERPRINT_KEY: Final = "deployment:signed-fingerprint"
_MAX_RECORD: Final = 4096  # bytes of a fingerprint or registration record read back
# A worker's last-seen record (its registration's twin) outlives it this long, so a worker that
# is gone (killed, or lost) or left still shows in the listing for a while.
_SEEN_TTL: Final = 3600.0
# A registration renewed within this many seconds is a serving worker's; later, a stale one's.
_SERVING_WITHIN: Final = 3 * _HEARTBEAT
_WORKER_PREFIX: Final = "deployment:worker:"
_SEEN_PREFIX: Final = "deployment:seen:"


def _derive(secret: bytes, purpose: str) -> bytes:
    """A key for one purpose, from the deployment's secret (HMAC-SHA256 as a KDF)."""
    return hmac.new(secret, f"mcp-core deployment key: {purpose}".encode(), hashlib.sha256).digest()


@final
class Deployment:
    """This worker's place in a deployment of several: its id, the shared secret, the backends.

    Build it with :meth:`redis` (or :meth:`from_environment`, which ``mcp-core run`` uses), or
    directly over any listing store and change bus (``MemoryStore()`` and ``MemoryChangeBus()``
    join the servers of one process, e.g. in tests). Give it to ``App(deployment=...)`` or
    ``McpServer(..., deployment=...)``; every worker of one deployment gets the same secret and
    namespace and its own ``worker`` id.

    Raises :class:`~mcp_core.errors.DeploymentError` for a worker id that is not
    ``[A-Za-z0-9_-]{1,40}`` or a secret shorter than 32 bytes.
    """

    __slots__ = (
        "_address",
        "_admitted",
        "_bus",
        "_draining",
        "_problem",
        "_propagation",
        "_records",
        "_refusals",
        "_secret",
        "_shared",
        "_store",
        "_tasks",
        "_token",
        "_worker",
        "request_state_security",
    )

    def __init__(self, *, worker: str, secret: bytes, store: ListingStore, bus: ChangeBus) -> None:
        if not isinstance(worker, str) or not WORKER_ID.fullmatch(worker):
            raise DeploymentError(
                f"a worker id is 1-40 letters, digits, '-' or '_' (it starts the session ids the "
                f"worker hands out, and the load balancer routes on it), got {worker!r}",
                worker=worker if isinstance(worker, str) else None,
                setting="worker",
            )
        if not isinstance(secret, bytes) or len(secret) < MIN_SECRET_BYTES:
            raise DeploymentError(
                f"the deployment secret must be at least {MIN_SECRET_BYTES} bytes, shared by every "
                "worker (e.g. `head -c 32 /dev/urandom | base64 > secret`, then "
                f"{ENVIRONMENT['secret_file']}=secret or --secret-file secret)",
                worker=worker,
                setting="secret",
            )
        self._worker = worker
        self._secret = secret
        self._store = store
        self._bus = bus
        self._shared: dict[str, SharedSource] = {}
        # This process's claim on its worker id (another process with the same id has another).
        self._token = secrets.token_hex(8)
        self._problem: BackendHealth | None = None
        self._propagation: ChangePropagation | None = None
        self._draining = False
        self._admitted = False
        self._address: str | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._records = _derive(secret, "records")  # signs the fingerprint and registrations
        self._refusals = Refusals(_log, f"worker {worker}")
        self.request_state_security: Final = RequestStateSecurity(
            keys=[_derive(secret, "request-state")]
        )
        """How 2026-07-28 ``requestState`` is sealed: one key for every worker."""

    def __repr__(self) -> str:
        return f"Deployment(worker={self._worker!r}, {self._store!r})"

    @classmethod
    def redis(
        cls,
        url: str,
        *,
        worker: str,
        secret: bytes,
        namespace: str = "mcp-core",
        timeout: float = DEFAULT_REDIS_TIMEOUT,
        connect_timeout: float = DEFAULT_REDIS_CONNECT_TIMEOUT,
        heartbeat: float = DEFAULT_BUS_HEARTBEAT,
    ) -> Deployment:
        """A worker of the deployment whose workers share the Redis at ``url`` (under ``namespace``).

        ``timeout`` and ``connect_timeout`` bound every Redis call (then its circuit breaker
        answers at once until Redis is back); ``heartbeat`` is how long the change bus may hear
        nothing before it checks that Redis is still there.
        """
        store = RedisStore(
            url, namespace=namespace, timeout=timeout, connect_timeout=connect_timeout
        )
        return cls(
            worker=worker,
            secret=secret,
            store=store,
            bus=RedisChangeBus(store, secret=_derive(secret, "change-bus"), heartbeat=heartbeat),
        )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Deployment | None:
        """The deployment the environment describes, or None when it describes none (one process).

        Reads ``MCP_CORE_DEPLOYMENT_REDIS`` (a ``redis://`` URL), ``MCP_CORE_WORKER_ID``, the
        secret from ``MCP_CORE_DEPLOYMENT_SECRET_FILE`` (a file; trailing newline ignored) or
        ``MCP_CORE_DEPLOYMENT_SECRET``, and ``MCP_CORE_DEPLOYMENT_NAMESPACE`` (default
        ``mcp-core``). Setting some but not all of them raises
        :class:`~mcp_core.errors.DeploymentError` naming what is missing: a worker that was meant
        to share never starts on its own.
        """
        env = os.environ if environ is None else environ
        url = env.get(ENVIRONMENT["redis"], "")
        worker = env.get(ENVIRONMENT["worker"], "")
        secret = _secret_from(env)
        if not url and not worker and secret is None:
            return None
        missing = [
            name
            for name, value in (
                (ENVIRONMENT["redis"], url),
                (ENVIRONMENT["worker"], worker),
                (f"{ENVIRONMENT['secret_file']} (or {ENVIRONMENT['secret']})", secret),
            )
            if not value
        ]
        if missing:
            raise DeploymentError(
                "a worker of a deployment needs the shared Redis, its own id and the secret every "
                f"worker shares; missing: {', '.join(missing)} (mcp-core run: --redis, "
                "--worker-id, --secret-file)",
                worker=worker or None,
                setting="environment",
            )
        assert secret is not None  # noqa: S101 -- checked just above; for the type checker
        return cls.redis(
            url,
            worker=worker,
            secret=secret,
            namespace=env.get(ENVIRONMENT["namespace"]) or "mcp-core",
        )

    # -- what the workers share -------------------------------------------------------------

    @property
    def worker(self) -> str:
        """This worker's id: unique in the deployment, the load balancer's name for it."""
        return self._worker

    @property
    def store(self) -> ListingStore:
        """The store every worker shares (give it to ``CachedSource`` with :attr:`cache_secret`)."""
        return self._store

    @property
    def bus(self) -> ChangeBus:
        """The change bus the workers tell each other about changes on."""
        return self._bus

    def session_records(self, ttl: float) -> SessionRecords:
        """Where handshake-era sessions are recorded for every worker, living ``ttl`` s unrenewed."""
        return SessionRecords(self._store, key=_derive(self._secret, "sessions"), ttl=ttl)

    def session_events(self) -> RedisEventStore | None:
        """The sessions' event store every worker shares (None: the store is not Redis).

        A resume with ``Last-Event-ID`` then lands on any worker (ADR 0109).
        """
        if not isinstance(self._store, RedisStore):
            return None
        return RedisEventStore(self._store, key=_derive(self._secret, "session-events"))

    @property
    def cursor_secret(self) -> bytes:
        """The key list cursors are signed with: a cursor from any worker is good on every other."""
        return _derive(self._secret, "cursor")

    @property
    def cache_secret(self) -> bytes:
        """The ``CachedSource(secret=...)`` for caches in the shared store."""
        return _derive(self._secret, "cache")

    def shared_source(
        self,
        name: str = "shared",
        *,
        handlers: Collection[str] | None = None,
        kinds: ElementKind = ElementKind.ALL,
    ) -> SharedSource:
        """The :class:`~mcp_core.sources.SharedSource` called ``name`` in the shared store.

        Its entries are authenticated with a key derived from the secret; ``handlers`` is an
        optional allow-list of handler targets. One object per name: add it to the registry once.
        """
        shared = self._shared.get(name)
        if shared is None:
            shared = self._shared[name] = SharedSource(
                self._store,
                name=name,
                secret=_derive(self._secret, f"shared:{name}"),
                handlers=handlers,
                kinds=kinds,
            )
        return shared

    # -- serving ----------------------------------------------------------------------------

    def health(self) -> tuple[BackendHealth, ...]:
        """The shared backends as this worker sees them: the store, the change bus, its registration."""
        found: list[BackendHealth] = []
        if isinstance(self._store, BackendHealthReport):
            report = self._store.health()
            if isinstance(report, BackendHealth):
                found.append(report)
        found.append(self._propagation_health())
        if self._problem is not None:
            found.append(self._problem)
        return tuple(found)

    def _propagation_health(self) -> BackendHealth:
        propagation = self._propagation
        return propagation.health() if propagation is not None else self._bus.health()

    @property
    def propagation(self) -> ChangePropagation | None:
        """What keeps this worker's registry in step while it serves (None when it does not)."""
        return self._propagation

    @asynccontextmanager
    async def serving(self, registry: object) -> AsyncIterator[None]:
        """While a server serves: registered as this worker, in step with the others.

        Checks first that this worker fits the deployment (its secret, its id) within the store's
        bounds, raising :class:`~mcp_core.errors.DeploymentError` if it does not; a store that
        does not answer defers those checks to the heartbeat instead of delaying the start.
        """
        if not isinstance(registry, Registry):
            raise TypeError(
                f"a deployment keeps the reference Registry in step; got {type(registry).__name__}"
            )
        await self.admit()
        propagation = self._propagation = ChangePropagation(
            registry, self._bus, worker=self._worker
        )
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                tasks.start_soon(self._heartbeat)
                async with propagation.running(connect_within=_connect_bound(self._store)):
                    try:
                        yield
                    finally:
                        tasks.cancel_scope.cancel()
        finally:
            self._propagation = None
            self._tasks = None
            with anyio.move_on_after(_connect_bound(self._store), shield=True):
                await self._leave()

    async def admit(self) -> None:
        """Check that this worker fits the deployment (its secret, its id), once.

        Raises :class:`~mcp_core.errors.DeploymentError` if it does not: at once for an id a
        live worker holds; an id held by this worker's previous self (killed, or draining) is
        taken over or waited out. A store that does not answer defers the checks to the
        heartbeat. ``run_http`` calls this before it listens, so a worker that does not fit
        fails with one line; :meth:`serving` calls it otherwise.
        """
        if self._admitted:
            return
        await self._check_at_start()
        self._admitted = True

    def drain(self) -> None:
        """This worker is stopping: tell the others now, so its sessions count as gone.

        Its registration says so from now on (the others answer its sessions' requests 404,
        and the clients open new sessions, instead of 421); it is removed when serving ends.
        """
        if self._draining:
            return
        self._draining = True
        tasks = self._tasks
        if tasks is not None:
            tasks.start_soon(self._say_draining)

    async def _say_draining(self) -> None:
        with contextlib.suppress(CacheStoreError):  # unsaid, the registration expires on its own
            await self._check()

    def keys(self, registry: object) -> tuple[bytes, RequestStateSecurity]:
        """The cursor key and ``requestState`` security of a server of ``registry`` on this worker.

        Raises:
            TypeError: ``registry`` is not the reference Registry, which this deployment keeps in
                step with the other workers.
        """
        if not isinstance(registry, SourceChangeNotifier):
            raise TypeError(
                f"a deployment keeps the reference Registry in step with the other workers; "
                f"{type(registry).__name__} is not one"
            )
        return self.cursor_secret, self.request_state_security

    def route_sessions(self, app: Starlette) -> None:
        """Name this worker in the sessions ``app`` opens; refuse another worker's loudly (ADR 0048)."""
        misrouted = Misrouted(worker=self._worker, owner_alive=self.owner_alive)
        app.add_middleware(WorkerSessions, worker=self._worker, misrouted=misrouted)

    def share_sessions(
        self,
        app: Starlette,
        manager: StreamableHTTPSessionManager,
        *,
        events: SessionEventStore | None,
        idle_timeout: float | None,
        on_resumed: Callable[[Connection], object],
    ) -> SessionSharing:
        """Record the sessions ``app`` opens for every worker; any worker resumes them (ADR 0109).

        Session ids still name the worker that opened them (ADR 0048): a balancer's rule keeps a
        session there while it is up, which saves the others resuming it. Records live
        ``idle_timeout`` s unrenewed (an hour without one); ``events`` are kept for the next
        worker when they are this deployment's shared store (:meth:`session_events`).
        """
        worker = self._worker
        misrouted = Misrouted(worker=worker, owner_alive=self.owner_alive)
        owners: Mapping[str, Mapping[str, object]] = manager._session_owners  # noqa: SLF001 -- the SDK's record of who opened a session
        sharing = SessionSharing(
            self.session_records(idle_timeout or DEFAULT_RECORD_TTL),
            worker=worker,
            owner=owners.get,
            events=events if isinstance(events, RedisEventStore) else None,
            resume=(manager, misrouted, on_resumed),
        )
        # Session ids name their worker (ADR 0048); any worker resumes them (ADR 0109).
        app.add_middleware(WorkerSessions, worker=worker, misrouted=misrouted, shared=True)
        return sharing

    def advertise(self, address: str) -> None:
        """Record ``address`` (the URL this worker serves at) in its registration from now on.

        The others show it in their listing (:meth:`workers`); ``run_http`` calls this once it
        listens.
        """
        self._address = address

    async def workers(self) -> tuple[WorkerStatus, ...]:
        """Every worker the shared store knows of, sorted by id (see :class:`WorkerStatus`).

        Two listings of the store, bounded by its timeout; raises
        :class:`~mcp_core.errors.CacheStoreError` when it does not answer.
        """
        registered = await self._store.entries(_WORKER_PREFIX)
        seen = await self._store.entries(_SEEN_PREFIX)
        ids = {key.removeprefix(_WORKER_PREFIX) for key in registered}
        ids |= {key.removeprefix(_SEEN_PREFIX) for key in seen}
        now = time.time()
        return tuple(
            self._worker_status(
                worker,
                self._signed(f"worker:{worker}", registered.get(_worker_key(worker))),
                self._signed(f"seen:{worker}", seen.get(_seen_key(worker))),
                now,
            )
            for worker in sorted(ids)
        )

    def _worker_status(
        self,
        worker: str,
        registration: dict[str, object] | None,
        last: dict[str, object] | None,
        now: float,
    ) -> WorkerStatus:
        """What the freshest of a worker's two records says of it."""
        records = [record for record in (registration, last) if record is not None]
        if not records:
            return WorkerStatus(worker=worker, state="unverified", last_seen=None)
        record = max(records, key=lambda r: r["at"] if isinstance(r["at"], int) else 0)
        at = record["at"]
        assert isinstance(at, int)  # noqa: S101 -- checked by _signed; for the type checker
        age = now - at / 1000
        state: WorkerState
        if record.get("left"):
            state = "left"
        elif age > _REGISTRATION_TTL + _HEARTBEAT:
            state = "gone"
        elif record.get("draining"):
            state = "draining"
        else:
            state = "serving" if age <= _SERVING_WITHIN else "stale"
        address, host, pid = record.get("address"), record.get("host"), record.get("pid")
        return WorkerStatus(
            worker=worker,
            state=state,
            last_seen=at / 1000,
            address=address if isinstance(address, str) else None,
            host=host if isinstance(host, str) else None,
            pid=pid if isinstance(pid, int) else None,
            this=record.get("token") == self._token,
        )

    async def owner_alive(self, worker: str) -> bool | None:
        """Whether the worker ``worker`` serves now: registered, not draining (None: cannot say)."""
        try:
            raw = await self._store.get(_worker_key(worker))
        except CacheStoreError:
            return None
        holder = self._live_holder(worker, raw)
        return holder is not None and not holder.get("draining")

    # -- registration and checks ------------------------------------------------------------

    async def _check_at_start(self) -> None:
        deadline = time.monotonic() + _REGISTRATION_TTL + 2 * _HEARTBEAT
        foreign: bytes | None = None  # a fingerprint record that does not verify, as first seen
        while True:
            try:
                recorded = await self._store.get(_FINGERPRINT_KEY)
                if self._verified_fingerprint(recorded) or recorded is None:
                    foreign = None
                elif foreign is None:
                    foreign = recorded
                elif recorded != foreign:
                    raise self._another_secret()  # a live worker keeps another secret's record
                if foreign is not None and time.monotonic() < deadline:
                    # Live workers of this deployment write it back within a heartbeat.
                    await anyio.sleep(_HEARTBEAT / 2)
                    continue
                if foreign is not None:
                    self._refusals.refuse(
                        "a fingerprint record no live worker keeps (not signed with this "
                        "deployment's secret)",
                        "written over; if another deployment shares this namespace, give it its own",
                    )
                problem = await self._check()
                if problem is not None:
                    await self._claim_held_id(problem, deadline)
            except CacheStoreError as exc:
                _log.warning(
                    "worker %s: cannot reach the shared store to check that it fits the "
                    "deployment (%s); serving, and checking again when it answers",
                    self._worker,
                    exc,
                )
                return
            return

    async def _claim_held_id(self, problem: DeploymentError, deadline: float) -> None:
        """Claim this worker's id, held by another process, or raise ``problem``.

        Held by a live worker: raised at once. By this worker's previous self: killed, its
        registration is taken over; draining, it is waited out (it leaves when its drain ends).
        """
        while not await self._take_over_if_stale():
            holder = self._live_holder(
                self._worker, await self._store.get(_worker_key(self._worker))
            )
            if holder is None or not holder.get("draining") or time.monotonic() >= deadline:
                raise problem
            await anyio.sleep(_HEARTBEAT / 4)

    async def _take_over_if_stale(self) -> bool:
        """Whether this worker's id was held by a process that is gone (the claim is then ours).

        On this host, the holder's process is looked up; elsewhere, a live holder renews its
        registration every heartbeat, so one that stays unrenewed that long is gone.
        """
        key = _worker_key(self._worker)
        first = self._live_holder(self._worker, await self._store.get(key))
        if first is None:
            return await self._check() is None
        if first.get("draining"):
            return False
        if first.get("host") == socket.gethostname():
            pid = first.get("pid")
            if isinstance(pid, int) and _running(pid):
                return False
        else:
            give_up = time.monotonic() + 1.5 * _HEARTBEAT
            while time.monotonic() < give_up:
                await anyio.sleep(_HEARTBEAT / 4)
                now = self._live_holder(self._worker, await self._store.get(key))
                if now is None:
                    break
                if now.get("at") != first.get("at"):
                    return False  # renewed: a live worker holds it
        _log.warning(
            "worker %s: its id was held by a process that is gone (pid %s on %r); taking it over",
            self._worker,
            first.get("pid"),
            first.get("host"),
        )
        return await self._check(take_over=True) is None

    def _another_secret(self) -> DeploymentError:
        return DeploymentError(
            f"worker {self._worker}: its secret is not the one the other workers of this "
            "deployment use (a live worker keeps another fingerprint recorded in the shared "
            "store); give every worker the same secret, or a namespace of its own for a "
            "separate deployment",
            worker=self._worker,
            setting="secret",
        )

    async def _check(self, *, take_over: bool = False) -> DeploymentError | None:
        """Renew the fingerprint and this worker's registration; why it does not fit, if it does not.

        A fingerprint record that does not verify is written over (with a rate-limited warning):
        this worker verified the deployment's when it started, so what is there now was written
        without the secret.
        """
        recorded = await self._store.get(_FINGERPRINT_KEY)
        if recorded is not None and not self._verified_fingerprint(recorded):
            self._refusals.refuse(
                "a fingerprint record not signed with the deployment secret", "written back"
            )
        await self._store.set(_FINGERPRINT_KEY, self._record("fingerprint", {}))
        key = _worker_key(self._worker)
        current = await self._store.get(key)
        if current is not None and self._signed(f"worker:{self._worker}", current) is None:
            self._refusals.refuse(
                f"a registration of {self._worker} not signed with the deployment secret",
                "written over",
            )
        holder = self._live_holder(self._worker, current)
        if holder is not None and holder.get("token") != self._token and not take_over:
            return DeploymentError(
                f"worker id {self._worker!r} is already used by a live worker (pid "
                f"{holder.get('pid')} on {holder.get('host')!r}); give every worker an id of its own",
                worker=self._worker,
                setting="worker",
            )
        claim: dict[str, object] = {
            "token": self._token,
            "pid": os.getpid(),
            "host": socket.gethostname(),
        }
        if self._draining:
            claim["draining"] = True
        if self._address is not None:
            claim["address"] = self._address
        record = self._record(f"worker:{self._worker}", claim)
        await self._store.set(key, record, ttl=_REGISTRATION_TTL)
        await self._seen(claim)
        return None

    async def _seen(self, claim: Mapping[str, object]) -> None:
        """Record when this worker was last seen, and how (the listing's record of it)."""
        seen = self._record(f"seen:{self._worker}", claim)
        await self._store.set(_seen_key(self._worker), seen, ttl=_SEEN_TTL)

    # -- signed records -----------------------------------------------------------------------

    def _record(self, what: str, fields: Mapping[str, object]) -> bytes:
        """``fields`` dated now and signed for ``what``: a record every worker can check."""
        return sign(self._records, what, fields)

    def _signed(self, what: str, raw: bytes | None) -> dict[str, object] | None:
        """The fields of a record signed for ``what`` with this deployment's secret, else None."""
        return verify(self._records, what, raw, _MAX_RECORD)

    def _verified_fingerprint(self, raw: bytes | None) -> bool:
        return self._signed("fingerprint", raw) is not None

    def _live_holder(self, worker: str, raw: bytes | None) -> dict[str, object] | None:
        """The registration of ``worker`` if it is signed and was renewed within its lease."""
        holder = self._signed(f"worker:{worker}", raw)
        if holder is None:
            return None
        at = holder["at"]
        assert isinstance(at, int)  # noqa: S101 -- checked by _signed; for the type checker
        age = time.time() - at / 1000
        return holder if age <= _REGISTRATION_TTL + _HEARTBEAT else None

    async def _heartbeat(self) -> None:
        while True:
            await anyio.sleep(_HEARTBEAT)
            try:
                problem = await self._check()
            except CacheStoreError:
                continue  # the store's own health says it is down
            if problem is None:
                if self._problem is not None:
                    _log.warning("worker %s: fits the deployment again", self._worker)
                self._problem = None
            elif self._problem is None:
                _log.error("%s; this worker reports itself unready", problem)
                self._problem = BackendHealth(
                    backend=f"worker {self._worker}",
                    state="misconfigured",
                    since=time.time(),
                    last_error=str(problem),
                )

    async def _leave(self) -> None:
        key = _worker_key(self._worker)
        try:
            holder = self._signed(f"worker:{self._worker}", await self._store.get(key))
            if holder is not None and holder.get("token") == self._token:
                await self._store.delete(key)
                await self._seen({**holder, "left": True})
        except CacheStoreError:
            pass  # the registration expires on its own


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _worker_key(worker: str) -> str:
    return f"{_WORKER_PREFIX}{worker}"


def _seen_key(worker: str) -> str:
    return f"{_SEEN_PREFIX}{worker}"


def _connect_bound(store: object) -> float:
    timeout = store.timeout if isinstance(store, OperationTimeout) else None
    return float(timeout) if isinstance(timeout, int | float) else DEFAULT_REDIS_TIMEOUT


def _secret_from(env: Mapping[str, str]) -> bytes | None:
    path = env.get(ENVIRONMENT["secret_file"], "")
    if path:
        try:
            return Path(path).read_bytes().rstrip(b"\r\n")
        except OSError as exc:
            raise DeploymentError(
                f"cannot read the deployment secret from {path}: {exc.strerror or exc}",
                setting="secret",
            ) from exc
    value = env.get(ENVIRONMENT["secret"], "")
    return value.encode() if value else None
