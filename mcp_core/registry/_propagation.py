"""Change propagation: a registry attached to a change bus, so every worker follows every change.

The registry itself stays sans-IO; :class:`ChangePropagation` is the small object between it and
a :class:`~mcp_core.stores.ChangeBus` (ADR 0045):

- **Out.** After an operation of this worker (a ``reload()``, a background retry, a shared
  registration) gave some sources a new collection, their keys are published. A publish that
  fails (the bus is down) stays in an outbox and is retried with backoff, and at once when the
  bus is back, after providing those sources again (so the shared store, which was down too,
  holds what they provide before the others read it): nothing is lost.
- **In.** A change another worker published makes this worker provide again *only those sources*
  (``registry.reload(*sources)``); its registry then emits its change events as usual, so its own
  sessions get ``list_changed`` and its ``subscriptions/listen`` streams their events.
- **No echo.** What a worker does because it received a change is never published again.
- **Idempotent.** Each source key has a version on the bus; a change is applied only when it
  carries a version newer than the one this worker has applied (so duplicates, and a change
  arriving after a newer catch-up, cost nothing). After an interruption the bus's catch-up
  names every source whose version moved meanwhile, and exactly those are provided again.

- **Repair.** Every ``repair`` seconds (5 by default) the bus and every source that can
  (``repair()``: ``SharedSource``, ``CachedSource``) write back what this worker holds where the
  shared store holds something older or nothing (a replay, a rollback, a deletion by someone
  without the secret); a source that wrote something back is announced again, so every worker
  provides it from what was written back (ADR 0068).

Sources are named by a key every worker computes alike from its configuration: a digest of the
source's type and ``cache_inputs()`` (what ``CachedSource`` keys on), numbered when several
sources of a registry share one. Workers of one deployment run the same application, so they
agree; a change naming a key this worker does not know (another version of the application
during a rolling upgrade) makes it provide every source again, with one warning, and at most
once per ``full_reload_interval`` seconds (10 by default): a flood of such changes costs one
full reload per interval, the last one deferred to the end of it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Collection, Mapping
from collections.abc import Set as AbstractSet
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Final, final

import anyio

from mcp_core.errors import CacheStoreError
from mcp_core.handlers import escapes
from mcp_core.registry._recovery import Backoff
from mcp_core.registry._registry import Registry
from mcp_core.sources import ElementSource, Repairable, source_identity
from mcp_core.sources._diagnostics import describe_source
from mcp_core.stores import BackendHealth, Change, ChangeBus

__all__ = [
    "DEFAULT_FULL_RELOAD_INTERVAL",
    "DEFAULT_PUBLISH_BACKOFF",
    "DEFAULT_REPAIR_INTERVAL",
    "ChangePropagation",
    "source_keys",
]

_log = logging.getLogger("mcp_core.registry")

DEFAULT_PUBLISH_BACKOFF: Final = Backoff(initial=0.5, maximum=10.0)
"""How often a publish that failed is tried again (and at once when the bus is back)."""
DEFAULT_REPAIR_INTERVAL: Final = 5.0
"""Seconds between two repairs of what the shared store holds (see the module documentation)."""
DEFAULT_FULL_RELOAD_INTERVAL: Final = 10.0
"""The least time between two reloads of every source for changes naming unknown sources."""

# Set while this worker applies a change it received: what that changes is not published again.
_APPLYING: Final[ContextVar[bool]] = ContextVar("mcp_core.applying_change", default=False)


def source_keys(registry: Registry) -> dict[str, ElementSource]:
    """Every source of ``registry`` by the key that names it on a change bus, in registry order.

    The key is a digest of the source's type and ``cache_inputs()``; the n-th source (n > 0) with
    the same digest gets ``.n`` appended, so identical configurations agree across workers.
    """
    seen: Counter[str] = Counter()
    keys: dict[str, ElementSource] = {}
    for source, _ in registry.sources:
        digest = _identity_digest(source)
        count = seen[digest]
        seen[digest] += 1
        keys[f"{digest}.{count}" if count else digest] = source
    return keys


def _identity_digest(source: ElementSource) -> str:
    def plain(item: object) -> object:
        if isinstance(item, Mapping):
            return dict(item)
        if isinstance(item, AbstractSet):
            return sorted(map(str, item))
        raise TypeError(type(item).__name__)

    try:
        text = json.dumps(source_identity(source), sort_keys=True, default=plain)
    except (TypeError, ValueError):
        # Inputs that are not JSON: the type alone (the position then tells sources apart).
        cls = type(source)
        text = f"{cls.__module__}.{cls.__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@final
class ChangePropagation:
    """Keeps ``registry`` in step with the other workers attached to ``bus`` (see the module doc).

    ``worker`` names this worker on the bus (its own changes come back to it and are skipped);
    ``retry`` paces publishes that failed; ``repair`` and ``full_reload_interval`` are in
    seconds. Open :meth:`running` for as long as the worker serves.
    """

    __slots__ = (
        "_applied",
        "_applied_changes",
        "_baselined",
        "_bus",
        "_first",
        "_full_due",
        "_full_interval",
        "_full_reload_at",
        "_last_applied_at",
        "_last_error",
        "_outbox",
        "_publish_failures",
        "_reconnected",
        "_registry",
        "_repair",
        "_retry",
        "_unknown_warned",
        "_wake",
        "_worker",
    )

    def __init__(
        self,
        registry: Registry,
        bus: ChangeBus,
        *,
        worker: str,
        retry: Backoff = DEFAULT_PUBLISH_BACKOFF,
        repair: float = DEFAULT_REPAIR_INTERVAL,
        full_reload_interval: float = DEFAULT_FULL_RELOAD_INTERVAL,
    ) -> None:
        if not isinstance(registry, Registry):
            raise TypeError(
                f"ChangePropagation attaches the reference Registry, got {type(registry).__name__}"
            )
        if not isinstance(worker, str) or not worker:
            raise ValueError(f"worker must be a non-empty string, got {worker!r}")
        for name, value in (("repair", repair), ("full_reload_interval", full_reload_interval)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        self._registry = registry
        self._bus = bus
        self._repair = float(repair)
        self._full_interval = float(full_reload_interval)
        self._full_reload_at: float | None = None  # when every source was last provided again
        self._full_due = False  # a full reload was asked for within the interval
        self._worker = worker
        self._retry = retry
        self._applied: dict[str, int] = {}
        self._outbox: set[str] = set()
        self._wake = anyio.Event()
        self._first = anyio.Event()
        self._baselined = False
        self._publish_failures = 0
        self._reconnected = False
        self._last_error: str | None = None
        self._last_applied_at: float | None = None
        self._applied_changes = 0
        self._unknown_warned = False

    def __repr__(self) -> str:
        return f"ChangePropagation({self._worker!r}, {self._bus!r})"

    @property
    def worker(self) -> str:
        """This worker's name on the bus."""
        return self._worker

    @property
    def pending(self) -> frozenset[str]:
        """Source keys changed here and not yet published (the bus was unreachable)."""
        return frozenset(self._outbox)

    @property
    def applied_changes(self) -> int:
        """How many changes from other workers (or catch-ups) this worker has applied."""
        return self._applied_changes

    @property
    def last_applied_at(self) -> float | None:
        """When this worker last applied a change it received (seconds since the epoch)."""
        return self._last_applied_at

    @asynccontextmanager
    async def running(self, *, connect_within: float | None = None) -> AsyncIterator[None]:
        """Publish this worker's changes and apply the others' while entered.

        Waits up to ``connect_within`` seconds (None: not at all) for the bus's first catch-up,
        so a worker that loads right after entering starts from what the bus knows; an
        unreachable bus only delays that wait, never the worker.
        """
        unsubscribe = self._registry.subscribe_sources(self._local_change)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._follow)
                tasks.start_soon(self._publish_loop)
                tasks.start_soon(self._maintain)
                if connect_within is not None:
                    with anyio.move_on_after(connect_within):
                        await self._first.wait()
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            unsubscribe()

    def health(self) -> BackendHealth:
        """The bus's health, ``down`` while publishes fail, with the changes waiting (if any)."""
        health = self._bus.health()
        waiting = len(self._outbox)
        details = [f"{waiting} change(s) waiting to be published"] if waiting else []
        details += [health.detail] if health.detail else []
        detail = "; ".join(details) or None
        if self._publish_failures and health.state == "ok":
            return BackendHealth(
                backend=health.backend,
                state="down",
                last_error=self._last_error,
                failures=self._publish_failures,
                detail=detail,
            )
        return BackendHealth(
            backend=health.backend,
            state=health.state,
            since=health.since,
            last_error=health.last_error,
            failures=health.failures,
            next_try=health.next_try,
            detail=detail,
        )

    # -- out --------------------------------------------------------------------------------

    def _local_change(self, sources: tuple[ElementSource, ...]) -> None:
        if _APPLYING.get():
            return  # a change received and applied: never published again
        keys = {key for key, source in source_keys(self._registry).items() if source in sources}
        if keys:
            self._outbox |= keys
            self._wake.set()

    async def _publish_loop(self) -> None:
        while True:
            while not self._outbox:
                self._wake = anyio.Event()
                await self._wake.wait()
            keys = set(self._outbox)
            try:
                if self._publish_failures and self._reconnected:
                    # Kept through an outage: provide those sources again first, so what the
                    # shared store holds for them (their caches) is current when others read it.
                    await self._provide_again(keys)
                    self._reconnected = False
                change = await self._bus.publish(keys, origin=self._worker)
            except Exception as exc:  # noqa: BLE001 -- kept and retried: the bus is down
                self._publish_failed(exc, keys)
                self._wake = anyio.Event()
                with anyio.move_on_after(self._retry.delay(self._publish_failures)):
                    await self._wake.wait()  # the bus coming back wakes this at once
                continue
            self._outbox -= keys
            if self._publish_failures:
                _log.warning(
                    "published %d change(s) kept while the change bus was unreachable",
                    len(keys),
                )
            self._publish_failures = 0
            self._note_versions(change.versions)

    async def _provide_again(self, keys: set[str]) -> None:
        """Provide ``keys``' sources again; raise while one still cannot reach its shared store."""
        known = source_keys(self._registry)
        sources = [known[key] for key in keys if key in known]
        if not sources:
            return
        await self._registry.reload(*sources)
        labels = {describe_source(source) for source in sources}
        unstored = [
            d
            for d in self._registry.diagnostics()
            if d.kind == "unavailable" and d.source in labels
        ]
        if unstored:
            raise CacheStoreError(f"not published yet: {unstored[0].message}")

    def _publish_failed(self, exc: Exception, keys: Collection[str]) -> None:
        self._publish_failures += 1
        self._last_error = f"{type(exc).__name__}: {exc}"
        if self._publish_failures == 1:
            _log.warning(
                "cannot publish a change of %d source(s) (%s); kept, and published when the "
                "change bus answers again",
                len(keys),
                self._last_error,
            )

    # -- in ---------------------------------------------------------------------------------

    async def _follow(self) -> None:
        while True:
            try:
                async with self._bus.subscribe() as changes:
                    async for change in changes:
                        await self._apply(change)
            except Exception:  # noqa: BLE001 -- a broken subscription is opened again
                _log.exception("change bus subscription failed; subscribing again")
            await anyio.sleep(1.0)

    async def _apply(self, change: Change) -> None:
        if change.catch_up:
            self._reconnected = True
            self._wake.set()  # connected (again): publish what waits, now
            if not self._baselined:
                self._baselined = True
                if not self._registry.loaded:
                    # Nothing served yet: the first load reads everything as it is now.
                    self._note_versions(change.versions)
                    self._first.set()
                    return
        elif change.origin == self._worker:
            self._note_versions(change.versions)  # this worker's own change, heard back
            return
        stale = {
            key for key, version in change.versions.items() if version > self._applied.get(key, 0)
        }
        if stale:
            await self._refresh(stale)
        self._note_versions(change.versions)
        self._first.set()

    async def _refresh(self, keys: set[str]) -> None:
        known = source_keys(self._registry)
        unknown = keys - known.keys()
        sources = [known[key] for key in keys if key in known]
        if unknown:
            if not self._unknown_warned:
                self._unknown_warned = True
                _log.warning(
                    "a change names %d source(s) this worker does not have (do all workers run "
                    "the same application?); providing every source again (at most once per "
                    "%g s)",
                    len(unknown),
                    self._full_interval,
                )
            now = time.monotonic()
            if (
                self._full_reload_at is not None
                and now - self._full_reload_at < self._full_interval
            ):
                self._full_due = True  # done at the end of the interval, once
                if not sources:
                    return
            else:
                self._full_reload_at = now
                self._full_due = False
                sources = []
        await self._reload(sources)

    async def _reload(self, sources: list[ElementSource]) -> None:
        """Provide ``sources`` again (every source when empty), as a change received."""
        token = _APPLYING.set(True)
        try:
            await self._registry.reload(*sources)
        except BaseException as exc:
            if escapes(exc):
                raise
            _log.exception(
                "providing %s again after a change failed",
                ", ".join(describe_source(s) for s in sources) or "every source",
            )
        finally:
            _APPLYING.reset(token)
        self._applied_changes += 1
        self._last_applied_at = time.time()

    def _note_versions(self, versions: Mapping[str, int]) -> None:
        for key, version in versions.items():
            if version > self._applied.get(key, 0):
                self._applied[key] = version

    # -- repair -----------------------------------------------------------------------------

    async def _maintain(self) -> None:
        """Every ``repair`` seconds: repair the bus and the sources, run a deferred full reload."""
        while True:
            await anyio.sleep(self._repair)
            await self.repair()
            if self._full_due and (
                self._full_reload_at is None
                or time.monotonic() - self._full_reload_at >= self._full_interval
            ):
                self._full_due = False
                self._full_reload_at = time.monotonic()
                await self._reload([])

    async def repair(self) -> frozenset[str]:
        """Write back what this worker holds where the shared store lost it; the keys announced.

        Calls ``repair()`` on the bus and on every source that has it; each source that wrote
        something back is published again. Failures (the store is down) are logged, not raised.
        """
        repaired: set[str] = set()
        targets: list[tuple[str | None, object]] = [(None, self._bus)]
        targets += list(source_keys(self._registry).items())
        for key, target in targets:
            if not isinstance(target, Repairable):
                continue
            try:
                wrote = await target.repair()
            except CacheStoreError as exc:
                _log.info("cannot repair %r now (%s)", target, exc)
                continue
            except Exception:  # noqa: BLE001 -- one source's failure costs only its repair
                _log.exception("repairing %r failed", target)
                continue
            if key is not None and wrote:
                repaired.add(key)
        if repaired:
            self._outbox |= repaired
            self._wake.set()
        return frozenset(repaired)
