"""The reference Registry: all five roles over an ordered list of (source, priority).

The whole merge happens in one place (:func:`_merge`), once per load or reload, and produces an
immutable base layer. Runtime registrations are a small overlay consulted first, so a write is
O(1) and never provides. Per-kind lists are built lazily from those two layers and cached until
the next change.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final, TypeVar, final

import anyio
from opentelemetry import trace

from mcp_core._collector import collector_paused
from mcp_core._stretches import pause
from mcp_core._telemetry import OUTCOME, SOURCE, tracer
from mcp_core.elements import (
    SINGLE_KINDS,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import InvalidElementError, McpCoreError, SourceUnavailableError
from mcp_core.handlers import Admission, ElementLimits, escapes, validate_handler
from mcp_core.handlers._admission import DEFAULT_LIMITS
from mcp_core.registry._health import RegistryHealth, SourceStatus
from mcp_core.registry._protocols import ChangeListener, ResolvedResource, SourcesListener
from mcp_core.registry._recovery import DEFAULT_BACKOFF, Backoff, RetryTimer
from mcp_core.sources import (
    DiagnosticKind,
    ElementSource,
    SourceDiagnostic,
    diagnostics_of,
    prefetch_kinds,
)
from mcp_core.sources._diagnostics import describe_source
from mcp_core.sources._marked import STRETCH
from mcp_core.sources._protocol import lookup_of

__all__ = ["DEFAULT_PROVIDE_TIMEOUT", "ChangeListener", "Priority", "Registry", "SourcesListener"]

_log = logging.getLogger("mcp_core.registry")

DEFAULT_PROVIDE_TIMEOUT: Final = 10.0
"""Seconds a source's ``provide()`` may take before it counts as unavailable."""

_Told = TypeVar("_Told")


@final
class Priority:
    """Named source priorities; plain ints, so any other int slots in between.

    Higher wins. Runtime registrations (the writer role) beat every source.
    """

    DISCOVERY: Final = -100
    DEFAULT: Final = 0
    MANUAL: Final = 100


@dataclass(slots=True, eq=False)
class _Entry:
    source: ElementSource
    priority: int
    order: int
    label: str
    last_good: ElementCollection | None = None
    provided: bool = False
    diagnostics: list[SourceDiagnostic] = field(default_factory=list)
    status: SourceStatus = field(default_factory=SourceStatus)
    verdicts: _Verdicts | None = None  # admission verdicts on last_good's elements


@final
class _Verdicts:
    """Admission verdicts on the elements of one collection, each decided once.

    Elements are immutable and admission depends on nothing else, so a source's elements are
    admitted when its collection first takes part in a merge, not again at every merge another
    source's reload causes (at 100k elements that was seconds per reload). Kept by position in
    the collection, a slot per element (a table keyed by the elements' ids took 8 MB at 100k
    elements, for as long as the collection lived).
    """

    __slots__ = ("_found", "collection")

    def __init__(self, collection: ElementCollection, previous: _Verdicts | None = None) -> None:
        self.collection = collection
        self._found: list[object] = [_UNDECIDED] * len(collection)
        if previous is not None:
            # The elements a source provides again, unchanged, keep their verdicts. Both
            # collections are alive here, so an id names the same element on both sides.
            known = {id(element): at for at, element in enumerate(previous.collection)}
            decided = previous._found  # noqa: SLF001 -- the same class
            for position, element in enumerate(collection):
                at = known.get(id(element))
                if at is not None:
                    self._found[position] = decided[at]

    def of(self, position: int, element: Element, admit: Callable[[Element], None]) -> str | None:
        """Why ``admit`` refuses ``element``, the item at ``position`` (None: it admits it)."""
        found = self._found[position]
        if found is _UNDECIDED:
            found = self._found[position] = _invalid(element, admit)
        return found  # type: ignore[return-value]  # a verdict by now: a message or None


_UNDECIDED: Final = object()  # the verdict on an element not judged yet


@final
@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one ``provide()`` came to: a collection, or the failure to record."""

    collection: ElementCollection | None = None
    kind: DiagnosticKind = "failed"
    message: str = ""
    error: BaseException | None = None
    timed_out: bool = False

    @property
    def state(self) -> str:
        """How a failed provide ended, for a span: ``failed``, ``unavailable`` or ``timed_out``."""
        return "timed_out" if self.timed_out else self.kind


@final
@dataclass(frozen=True, slots=True)
class _Layer:
    """An immutable merged layer: elements by ref, in catalogue order."""

    elements: ElementCollection
    diagnostics: tuple[SourceDiagnostic, ...] = ()


_EMPTY_LAYER: Final = _Layer(ElementCollection())


@final
class Registry:
    """The reference registry: every role (catalogue, resolver, writer, lifecycle, change events).

    Precedence, applied once per (re)load by one merge rule: runtime registrations > sources by
    descending priority (``Priority.MANUAL`` > ``DEFAULT`` > ``DISCOVERY``); at equal priority the
    source added first wins. Every lost conflict is a ``shadowed`` diagnostic.

    Failure isolation: an element the ``validator`` rejects, or of a kind its source does not
    declare, is skipped with a diagnostic; a source that raises keeps serving its last good
    collection (or contributes nothing), reported ``unavailable`` for
    :class:`~mcp_core.errors.SourceUnavailableError` and ``failed`` otherwise. Reads never fail
    because of a source.

    Catalogue order: runtime registrations in registration order, then the sources' elements by
    precedence, each source's elements in its own order.

    Per-name resolution: until every source has been provided, ``get_tool``, ``get_prompt``,
    ``get`` and the exact-resource step of ``get_resource`` answer without a full load, asking
    the sources in precedence order and stopping at the first that has the ref: a source with
    ``lookup(ref)`` (:class:`~mcp_core.sources.ElementLookup`) is asked for that ref alone, any
    other source is provided (once). An answer counts only after every source that outranks its
    source had nothing there, and only if the full load would admit it (declared kind, the
    validator), so a resolution gives exactly what the merged catalogue would hold.

    Templates: ``get_resource`` tries the most specific matching template first; between equally
    specific ones, the one first in catalogue order (runtime, then higher priority, then the
    source added first) wins.

    Admission: every element is checked once when it enters the catalogue (see
    :class:`~mcp_core.handlers.ElementLimits`): schemas valid against their meta-schema, patterns
    that compile, nesting and size within ``limits``, text that UTF-8 can carry. One that fails is
    skipped with a diagnostic (or refused by ``register``).

    Bounded time: a ``provide()`` that takes longer than ``provide_timeout`` seconds is cancelled
    and the source counts as unavailable (its last good collection is served); a hanging source
    therefore delays the first load by at most that much and never blocks a read afterwards.

    Recovery: while :meth:`background` is open (the server opens it while it serves), a source
    whose last ``provide()`` failed or timed out is tried again on its own after ``retry``'s
    capped exponential backoff; when it comes back the catalogue is rebuilt and listeners get
    the change. :meth:`health` says how every source is doing.
    """

    __slots__ = (
        "_admission",
        "_background",
        "_base",
        "_changed_sources",
        "_current",
        "_entries",
        "_listeners",
        "_load_lock",
        "_loaded",
        "_logged",
        "_provide_timeout",
        "_retry_lock",
        "_retry_timer",
        "_runtime",
        "_runtime_diagnostics",
        "_source_listeners",
        "_validator",
        "_views",
    )

    def __init__(
        self,
        sources: Iterable[tuple[ElementSource, int]] = (),
        *,
        validator: Callable[[Element], None] | None = validate_handler,
        limits: ElementLimits | None = DEFAULT_LIMITS,
        provide_timeout: float | None = DEFAULT_PROVIDE_TIMEOUT,
        retry: Backoff | None = DEFAULT_BACKOFF,
    ) -> None:
        """Create a registry.

        ``validator`` raises :class:`~mcp_core.errors.InvalidElementError` for an element that
        must be skipped (from a source) or refused (from ``register``). The default rejects
        handlers of the wrong kind for their definition; ``None`` admits everything.
        ``limits`` bound each definition (``None``: no admission checks at all);
        ``provide_timeout`` is in seconds (``None``: wait forever); ``retry`` is the background
        retry backoff (``None``: never retry on its own).
        """
        if provide_timeout is not None and (
            isinstance(provide_timeout, bool)
            or not isinstance(provide_timeout, int | float)
            or not provide_timeout > 0
        ):
            raise ValueError(
                f"provide_timeout must be a positive number of seconds or None, got {provide_timeout!r}"
            )
        if retry is not None and not isinstance(retry, Backoff):
            raise TypeError(f"retry must be a Backoff or None, got {type(retry).__name__}")
        self._entries: list[_Entry] = []
        self._runtime: dict[ElementRef, Element] = {}
        self._runtime_diagnostics: dict[ElementRef, SourceDiagnostic] = {}
        self._base: _Layer = _EMPTY_LAYER
        self._loaded = False
        # False while some source has never been provided (before the first load, or after
        # add_source): the next read loads. Kept as a flag because every read checks it.
        self._current = False
        self._load_lock = anyio.Lock()
        self._listeners: list[ChangeListener] = []
        # Sources whose collection changed since listeners were last told (see subscribe_sources).
        self._source_listeners: list[SourcesListener] = []
        self._changed_sources: list[_Entry] = []
        self._validator = validator
        self._admission = Admission(limits) if limits is not None else None
        self._provide_timeout = provide_timeout
        self._retry_timer = RetryTimer(retry) if retry is not None else None
        self._retry_lock = anyio.Lock()
        self._background = 0  # how many background() contexts are open
        self._logged: set[tuple[str, str, ElementRef | None, str]] = set()
        self._views: _Views | None = None
        for source, priority in sources:
            self.add_source(source, priority)

    def __repr__(self) -> str:
        state = "loaded" if self._loaded else "not loaded"
        return f"Registry(<{len(self._entries)} sources, {len(self._runtime)} runtime, {state}>)"

    # -- configuration -------------------------------------------------------------------------

    def add_source(self, source: ElementSource, priority: int = Priority.DEFAULT) -> None:
        """Add a source; after the first load it is provided on the next read, with change events."""
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"priority must be an int (see Priority), got {priority!r}")
        if not isinstance(source, ElementSource):
            raise TypeError(
                f"{source!r} is not an ElementSource: it needs kinds() and async provide(); "
                "wrap a collection in StaticSource(collection)"
            )
        self._entries.append(_Entry(source, priority, len(self._entries), describe_source(source)))
        self._current = False

    @property
    def sources(self) -> tuple[tuple[ElementSource, int], ...]:
        """The configured ``(source, priority)`` pairs, in the order they were added."""
        return tuple((e.source, e.priority) for e in self._entries)

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each reload or write that changed those kinds' catalogue.

        Nothing is emitted before the first load completes (see ``ChangeNotifier``). Returns a
        function that unsubscribes. A listener that raises is logged and does not affect the
        registry or other listeners.
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def subscribe_sources(self, listener: SourcesListener) -> Callable[[], None]:
        """Call ``listener(sources)`` after each operation that changed those sources' collections.

        An operation is a ``reload()`` (of every source or some) or a background retry; a source
        counts when it had served a collection and provided one that is not equal to it, whether
        or not that changed what the catalogue lists (it may be shadowed), or when a ``reload()``
        provided it for the first time here (it was said to have changed). Its first provide by
        a load never counts. This is what a deployment tells other workers
        (``ChangePropagation``). A runtime ``register()`` or ``unregister()`` that changes the
        element at a ref but not its definition (its tags, say, which no list shows but a search
        index or a tag rule reads) calls ``listener(())``: no source changed, the catalogue did.
        Returns a function that unsubscribes; a listener that raises is logged and ignored.
        """
        self._source_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._source_listeners:
                self._source_listeners.remove(listener)

        return unsubscribe

    async def prefetch_kinds(self) -> None:
        """Let every source read ahead what its ``kinds()`` needs (e.g. a cache entry's kinds).

        A server calls this before it advertises capabilities, so a warm ``CachedSource`` keeps
        its inner source's expensive ``kinds()`` (a discovery scan) off the path. Never provides;
        a failure costs only that source's read-ahead.
        """

        async def one(entry: _Entry) -> None:
            try:
                await prefetch_kinds(entry.source)
            except Exception:  # noqa: BLE001 -- isolation: kinds() then answers the slow way
                _log.warning("source %s: prefetch_kinds() raised", entry.label, exc_info=True)

        async with anyio.create_task_group() as group:
            for entry in self._entries:
                group.start_soon(one, entry)

    def kinds(self) -> ElementKind:
        """Union of the sources' ``kinds()`` and the runtime registrations' kinds; never provides."""
        kinds = ElementKind.NONE
        for entry in self._entries:
            kinds |= _declared_kinds(entry)
        for ref in self._runtime:
            kinds |= ref.kind
        return kinds

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the initial load has completed."""
        return self._loaded

    async def load(self) -> None:
        """Provide every source not yet provided; concurrent callers share one load."""
        if self._current:
            return
        with tracer.start_as_current_span("mcp_core.registry.load"):
            await self._load()

    async def _load(self) -> None:
        async with self._load_lock:
            pending = [e for e in self._entries if not e.provided]
            if self._loaded and not pending:
                return
            await self._provide(pending)
            base = await self._merged_in_stretches()
            initial = not self._loaded
            self._swap_base(emit=not initial, base=base)
            self._loaded = self._current = True

    async def reload(self, *sources: ElementSource) -> None:
        """Provide every source again (or only ``sources``), re-merge, emit one change per kind.

        Before the first load, reloading some sources only provides them; the first read loads
        the others and merges. A source that is not in the registry is a ``ValueError``.
        """
        with tracer.start_as_current_span("mcp_core.registry.reload"):
            await self._reload(sources)

    async def _reload(self, sources: Sequence[ElementSource]) -> None:
        async with self._load_lock:
            entries = self._entries_of(sources) if sources else self._entries
            # Asked to provide again, a source that had served nothing here still changed for
            # whoever else serves it (another worker): it counts, once it provided something.
            first = [e for e in entries if not e.provided]
            await self._provide(entries)
            self._changed_sources.extend(e for e in first if e.last_good is not None)
            if any(not e.provided for e in self._entries):
                self._current = False  # the next read loads what was never provided, and merges
                self._drain_changed_sources()
                return
            base = await self._merged_in_stretches()
            initial = not self._loaded
            self._swap_base(emit=not initial, base=base)
            self._loaded = self._current = True

    def _entries_of(self, sources: Sequence[ElementSource]) -> list[_Entry]:
        found = []
        for source in sources:
            entry = next((e for e in self._entries if e.source is source), None)
            if entry is None:
                raise ValueError(f"{describe_source(source)} is not a source of {self!r}")
            found.append(entry)
        return found

    async def _provide(self, entries: Sequence[_Entry]) -> None:
        async with anyio.create_task_group() as group:
            for entry in entries:
                group.start_soon(self._provide_one, entry)

    async def _provide_one(self, entry: _Entry) -> None:
        self._record(entry, await self._fetch(entry))

    async def _fetch(self, entry: _Entry) -> _Outcome:
        """Provide ``entry``'s source once, within the timeout; never raises for its failure."""
        with tracer.start_as_current_span(
            "mcp_core.source.provide", attributes={SOURCE: entry.label}
        ) as span:
            outcome = await self._fetch_once(entry)
            if outcome.collection is not None:
                # A wrapper (a cache) may serve its last good entry and say so, as "stale".
                stale = any(d.kind == "stale" for d in _source_diagnostics(entry))
                span.set_attribute(OUTCOME, "stale" if stale else "served")
            else:
                # Failed: a source with a last good collection serves it, stale.
                stale = entry.last_good is not None
                span.set_attribute(OUTCOME, "stale" if stale else outcome.state)
                span.set_status(trace.StatusCode.ERROR, outcome.message)
            return outcome

    async def _fetch_once(self, entry: _Entry) -> _Outcome:
        timeout = self._provide_timeout
        collection: object = None
        finished = False
        # Isolation: any failure (SystemExit too, not cancellation) costs only this source.
        try:
            with anyio.move_on_after(timeout if timeout is not None else float("inf")):
                collection = await entry.source.provide()
                finished = True
            if finished:
                return _Outcome(_checked(collection))
        except BaseException as exc:
            if escapes(exc):
                raise
            kind: DiagnosticKind = (
                "unavailable" if isinstance(exc, SourceUnavailableError) else "failed"
            )
            return _Outcome(kind=kind, message=f"{type(exc).__name__}: {exc}", error=exc)
        return _Outcome(
            kind="unavailable",
            message=f"provide() did not finish within {timeout:g} s",
            timed_out=True,
        )

    def _record(self, entry: _Entry, outcome: _Outcome) -> None:
        """Apply one provide's outcome: the collection, or a diagnostic; health and retries."""
        served = entry.last_good if entry.provided else None
        entry.provided = True
        entry.diagnostics = []
        if outcome.collection is not None:
            if served is not None and outcome.collection != served:
                self._changed_sources.append(entry)
            entry.last_good = outcome.collection
            stale = [d.at for d in _source_diagnostics(entry) if d.kind == "stale"]
            entry.status.serving_stale(min(stale, default=None))
            ended = entry.status.succeeded()
            if self._retry_timer is not None:
                self._retry_timer.succeeded(id(entry))
            if ended:
                _log.warning("source %s recovered after %d failed attempt(s)", entry.label, ended)
            return
        keeping = (
            f"serving its last good collection ({len(entry.last_good)} elements)"
            if entry.last_good is not None
            else "contributing nothing until it recovers"
        )
        message = f"{outcome.message}; {keeping}"
        entry.diagnostics.append(_diagnostic(entry, outcome.kind, message))
        entry.status.failed(outcome.message)
        if self._retry_timer is not None:
            due = self._retry_timer.failed(id(entry), entry.status.failures)
            # Retries happen only while some background() context is open (a server serving).
            entry.status.next_retry = due if self._background else None
            if self._background:
                message += "; retrying in the background"
        error = outcome.error
        if entry.status.failures == 1:
            # One line per outage; a traceback only for what is not an mcp-core error.
            unexpected = error is not None and not isinstance(error, McpCoreError)
            _log.warning(
                "source %s %s: %s",
                entry.label,
                outcome.kind,
                message,
                exc_info=error if unexpected else None,
            )
        else:
            _log.debug("source %s still %s: %s", entry.label, outcome.kind, message)

    # -- background work -------------------------------------------------------------------

    @asynccontextmanager
    async def background(self) -> AsyncIterator[None]:
        """While open, retry failing sources in the background (see ``retry``).

        A retry that succeeds rebuilds the catalogue and notifies listeners. Any number of
        contexts may be open at once (one per server lifespan); one of them does the work.
        Without an open context nothing is retried on its own; ``reload()`` still works.
        """
        if self._retry_timer is None:
            yield
            return
        self._background += 1
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._retry_loop, self._retry_timer)
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            self._background -= 1

    async def _retry_loop(self, timer: RetryTimer) -> None:
        async with self._retry_lock:  # one loop at a time, however many contexts are open
            while True:
                await timer.wait()
                due = set(timer.due())
                for entry in [e for e in self._entries if id(e) in due]:
                    await self._retry(entry)

    async def _retry(self, entry: _Entry) -> None:
        with tracer.start_as_current_span(
            "mcp_core.registry.retry", attributes={SOURCE: entry.label}
        ):
            await self._retry_once(entry)

    async def _retry_once(self, entry: _Entry) -> None:
        outcome = await self._fetch(entry)  # outside the lock: a slow retry blocks no reload
        async with self._load_lock:
            if entry not in self._entries:
                return
            self._record(entry, outcome)
            if outcome.collection is not None:
                self._swap_base(emit=self._loaded, base=await self._merged_in_stretches())

    # -- health ----------------------------------------------------------------------------

    def health(self) -> RegistryHealth:
        """How every source is doing now: state, last success, last error, stale since.

        Answers at once, without loading or providing anything.
        """
        sources = []
        for entry in self._entries:
            last_good = entry.last_good
            sources.append(
                entry.status.health(
                    source=entry.label,
                    priority=entry.priority,
                    provided=entry.provided,
                    elements=len(last_good) if last_good is not None else None,
                )
            )
        return RegistryHealth(loaded=self._loaded, sources=tuple(sources), at=time.time())

    async def _merged_in_stretches(self) -> _Layer | None:
        """:func:`_merge` of the sources as they are now, in stretches that let requests through.

        Admitting 100k new elements takes a second or more; a first request arriving meanwhile
        (a call while the preload merges) is answered between stretches instead of after the
        merge. Called under the load lock, so no provide changes a source's collection
        meanwhile; should a source be added in between, None says to merge again at once.
        """
        before = [(entry, entry.last_good) for entry in self._entries]
        steps = _merging(self._entries, self._admit)
        # The merged layer lives until the next change: see _collector.
        with collector_paused():
            while True:
                try:
                    next(steps)
                except StopIteration as done:
                    layer: _Layer = done.value
                    now = [(entry, entry.last_good) for entry in self._entries]
                    same = len(now) == len(before) and all(
                        a is b and x is y for (a, x), (b, y) in zip(before, now, strict=True)
                    )
                    return layer if same else None
                await pause()

    def _swap_base(self, *, emit: bool, base: _Layer | None = None) -> None:
        """Serve ``base`` (the sources merged now, unless given) as the merged layer."""
        before = self._served() if emit else None
        if base is None:
            with collector_paused():  # the merged layer lives until the next change
                base = _merge(self._entries, self._admit)
        self._base = base
        self._views = None
        self._log_new_problems()
        if before is not None:
            changed = _changed_kinds(before, self._served())
            if changed:
                self._notify(changed)
        self._drain_changed_sources()

    def _drain_changed_sources(self) -> None:
        changed, self._changed_sources = self._changed_sources, []
        if changed and self._source_listeners:
            self._notify_sources(tuple(e.source for e in changed if e in self._entries))

    def _admit(self, element: Element) -> None:
        """Raise InvalidElementError when ``element`` may not enter the catalogue."""
        if self._admission is not None:
            self._admission.check(element)
        if self._validator is not None:
            self._validator(element)

    def _log_new_problems(self) -> None:
        # One log line per problem while it lasts (a problem that goes and comes back is logged
        # again). Failures are logged when they happen, and wrapped sources log their own
        # failures and stale entries; skipped and shadowed elements are logged here.
        current: set[tuple[str, str, ElementRef | None, str]] = set()
        for d in self.diagnostics():
            if d.kind not in ("skipped", "shadowed"):
                continue
            key = (d.source, d.kind, d.ref, d.message)
            current.add(key)
            if key not in self._logged:
                _log.log(logging.WARNING if d.kind == "skipped" else logging.INFO, "%s", d)
        self._logged = current

    # -- catalogue (ElementCatalog) ------------------------------------------------------------

    async def tools(self) -> Sequence[Tool]:
        """Tool definitions in catalogue order."""
        return (await self._ready()).tools

    async def resources(self) -> Sequence[Resource]:
        """Resource definitions in catalogue order."""
        return (await self._ready()).resources

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        """Resource template definitions in catalogue order."""
        return (await self._ready()).resource_templates

    async def prompts(self) -> Sequence[Prompt]:
        """Prompt definitions in catalogue order."""
        return (await self._ready()).prompts

    async def elements(self) -> ElementCollection:
        """The whole effective catalogue as one collection (for dumping and inspection)."""
        return (await self._ready()).collection

    # -- resolution (ElementResolver) ----------------------------------------------------------

    async def get(self, ref: ElementRef) -> Element | None:
        """The effective element at ``ref``, or None (per-name, before or without a full load)."""
        return await self._resolve(ref)

    async def get_tool(self, name: str) -> Element | None:
        """The tool named ``name``, or None (per-name, before or without a full load)."""
        return await self._resolve(ElementRef(ElementKind.TOOL, name)) if name else None

    async def get_prompt(self, name: str) -> Element | None:
        """The prompt named ``name``, or None (per-name, before or without a full load)."""
        return await self._resolve(ElementRef(ElementKind.PROMPT, name)) if name else None

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """The resource at ``uri``: an exact resource first, else the most specific template.

        The exact resource is resolved per name; matching templates needs every source's.
        """
        exact = await self._resolve(ElementRef(ElementKind.RESOURCE, uri)) if uri else None
        if exact is not None:
            return ResolvedResource(element=exact)
        return next(self._template_matches(await self._ready(), uri), None)

    async def resource_candidates(self, uri: str) -> Iterator[ResolvedResource]:
        """Every element that could answer ``uri``, best first (see ``ResourceCandidates``).

        The exact resource, then each matching template, most specific first; the templates
        lazily, so a caller that stops at the first acceptable candidate matches no further one.
        """
        exact = await self._resolve(ElementRef(ElementKind.RESOURCE, uri)) if uri else None
        return self._candidates(exact, await self._ready(), uri)

    def _candidates(
        self, exact: Element | None, views: _Views, uri: str
    ) -> Iterator[ResolvedResource]:
        if exact is not None:
            yield ResolvedResource(element=exact)
        yield from self._template_matches(views, uri)

    @staticmethod
    def _template_matches(views: _Views, uri: str) -> Iterator[ResolvedResource]:
        for element, template in views.templates_by_specificity:
            variables = template.template.match(uri)
            if variables is not None:
                yield ResolvedResource(element=element, variables=variables)

    # -- runtime registration (ElementWriter) --------------------------------------------------

    async def register(self, element: Element) -> None:
        """Add or replace a runtime registration; it beats every source. Never provides."""
        if not isinstance(element, Element):
            raise TypeError(f"register() takes an Element, got {type(element).__name__}")
        self._admit(element)
        ref = element.ref
        before = self._effective(ref)
        self._runtime[ref] = element
        self._views = None
        self._announce_write(ref, before, element)

    async def unregister(self, ref: ElementRef) -> bool:
        """Remove the runtime registration at ``ref``; return whether there was one."""
        element = self._runtime.pop(ref, None)
        if element is None:
            return False
        self._views = None
        self._announce_write(ref, element, self._effective(ref))
        return True

    def _effective(self, ref: ElementRef) -> Element | None:
        return self._runtime.get(ref) or self._base.elements.get(ref)

    def _announce_write(
        self, ref: ElementRef, before: Element | None, after: Element | None
    ) -> None:
        """Tell listeners what a runtime write changed at ``ref`` (nothing before the first load).

        A changed definition is a change event of its kind; another element with the same
        definition (other tags, handler or providers) changes no list, but what the catalogue
        holds: source listeners are told, with no source (see :meth:`subscribe_sources`).
        """
        if not self._loaded:
            return
        if (before and before.definition) != (after and after.definition):
            self._notify(ref.kind)
        elif before is not after:
            self._notify_sources(())

    def origin(self, ref: ElementRef) -> str | None:
        """Where the effective element at ``ref`` comes from (a source's description), or None.

        ``"runtime registration"`` for an element registered at run time.
        """
        if ref in self._runtime:
            return "runtime registration"
        element = self._base.elements.get(ref)
        return _source_of(element, self._entries) if element is not None else None

    # -- diagnostics ---------------------------------------------------------------------------

    def catalog_sizes(self) -> dict[ElementKind, int] | None:
        """How many elements of each kind the catalogue holds now; None before the first load.

        Answers at once, loading and providing nothing (for metrics and status pages), and may
        be asked from another thread (a metrics server's).
        """
        if not self._loaded:
            return None
        # Built without keeping it when missing: a scrape may come from another thread.
        views = self._views or _Views.build(self._runtime, self._base)
        return {
            ElementKind.TOOL: len(views.tools),
            ElementKind.RESOURCE: len(views.resources),
            ElementKind.RESOURCE_TEMPLATE: len(views.resource_templates),
            ElementKind.PROMPT: len(views.prompts),
        }

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """Everything skipped, failed, unavailable, shadowed or stale, with source and reason.

        Includes the diagnostics of sources (and wrappers) that expose ``diagnostics()``.
        """
        found: list[SourceDiagnostic] = []
        for entry in self._entries:
            found.extend(entry.diagnostics)
            found.extend(_source_diagnostics(entry))
        found.extend(self._base.diagnostics)
        for ref in self._runtime:
            shadowed = self._base.elements.get(ref)
            if shadowed is not None:
                found.append(
                    SourceDiagnostic(
                        source=_source_of(shadowed, self._entries),
                        kind="shadowed",
                        message="shadowed by a runtime registration",
                        ref=ref,
                        at=time.time(),
                    )
                )
        return tuple(found)

    # -- per-name resolution -------------------------------------------------------------------

    async def _resolve(self, ref: ElementRef) -> Element | None:
        runtime = self._runtime.get(ref)
        if runtime is not None:
            return runtime
        if self._current:
            return self._base.elements.get(ref)
        # Some source was never provided: ask the sources in precedence order, as the merge
        # would rank them, and stop at the first admissible element.
        found: Element | None = None
        for entry in sorted(self._entries, key=_precedence):
            element = await self._element_of(entry, ref)
            if element is None or not self._admits(entry, element):
                continue
            if found is None:
                found = element
                if not _completes_less_than_it_could(found):
                    return found
            elif element.completions:
                # As the merge does: the shadowed element's providers follow the winner.
                found = _with_completions_of(found, element)
        return found

    async def _element_of(self, entry: _Entry, ref: ElementRef) -> Element | None:
        """What ``entry``'s source holds at ``ref``: by lookup if it can, else by providing it once."""
        lookup = None if entry.provided else lookup_of(entry.source)
        if lookup is not None:
            with tracer.start_as_current_span(
                "mcp_core.source.lookup", attributes={SOURCE: entry.label}
            ) as span:
                found, outcome = await self._looked_up(entry, lookup, ref)
                span.set_attribute(OUTCOME, outcome)
                return found
        if not entry.provided:
            async with self._load_lock:  # shared with load(): each source provides once
                if not entry.provided:
                    await self._provide_one(entry)
        return entry.last_good.get(ref) if entry.last_good is not None else None

    async def _looked_up(
        self, entry: _Entry, lookup: Callable[[ElementRef], Awaitable[object]], ref: ElementRef
    ) -> tuple[Element | None, str]:
        """What ``lookup(ref)`` answered, bounded and isolated like provide(), and how it ended."""
        timeout = self._provide_timeout
        found: object = None
        finished = False
        # Bounded and isolated like provide(): a failing or hanging lookup answers nothing.
        try:
            with anyio.move_on_after(timeout if timeout is not None else float("inf")):
                found = await lookup(ref)
                finished = True
        except BaseException as exc:
            if escapes(exc):
                raise
            _log.warning("source %s: lookup(%s) failed", entry.label, ref, exc_info=True)
            return None, "failed"
        if not finished:
            _log.warning(
                "source %s: lookup(%s) did not finish within %g s", entry.label, ref, timeout
            )
            return None, "timed_out"
        if found is not None and (not isinstance(found, Element) or found.ref != ref):
            _log.warning(
                "source %s: lookup(%s) answered %r, not the element at that ref; ignored",
                entry.label,
                ref,
                found,
            )
            return None, "failed"
        return found, "served" if found is not None else "missing"

    def _admits(self, entry: _Entry, element: Element) -> bool:
        """Whether the merge would keep ``element`` from ``entry`` (the same two refusals)."""
        refusal = _undeclared(element.ref, _declared_kinds(entry)) or _invalid(element, self._admit)
        if refusal is not None:
            # Logged once, as a diagnostic, when the full load merges the source.
            _log.debug("source %s: %s %s", entry.label, element.ref, refusal)
        return refusal is None

    # -- internals -----------------------------------------------------------------------------

    async def _ensure_loaded(self) -> None:
        if not self._current:
            await self.load()

    async def _ready(self) -> _Views:
        await self._ensure_loaded()
        views = self._views
        if views is None:
            with collector_paused():
                views = self._views = _Views.build(self._runtime, self._base)
        return views

    def _served(self) -> ElementCollection:
        """What the catalogue serves now (runtime registrations over the merged sources)."""
        return (self._views or _Views.build(self._runtime, self._base)).collection

    def _notify_sources(self, sources: tuple[ElementSource, ...]) -> None:
        _tell_each(self._source_listeners, sources, "sources")

    def _notify(self, kinds: ElementKind) -> None:
        _tell_each(self._listeners, kinds, "change")


def _tell_each(listeners: Iterable[Callable[[_Told], object]], value: _Told, what: str) -> None:
    for listener in tuple(listeners):
        # A subscriber's bug (SystemExit too) must not break writes or reloads.
        try:
            listener(value)
        except BaseException as exc:
            if escapes(exc):
                raise
            _log.exception("registry %s listener %r raised; ignoring it", what, listener)


@final
@dataclass(frozen=True, slots=True)
class _Views:
    """Per-kind catalogue views of runtime-over-base, built once per change."""

    collection: ElementCollection
    tools: tuple[Tool, ...]
    resources: tuple[Resource, ...]
    resource_templates: tuple[ResourceTemplate, ...]
    prompts: tuple[Prompt, ...]
    templates_by_specificity: tuple[tuple[Element, ResourceTemplate], ...]

    @classmethod
    def build(cls, runtime: dict[ElementRef, Element], base: _Layer) -> _Views:
        collection = base.elements
        if runtime:
            merged = list(runtime.values())
            merged.extend(e for e in collection if e.ref not in runtime)
            collection = ElementCollection(merged)
        templates = collection.resource_templates
        # Most specific first; a stable sort keeps equally specific templates in catalogue order,
        # which is precedence order: runtime, then higher priority, then the source added first.
        ordered = sorted(templates, key=lambda t: tuple(-k for k in t.template.specificity))
        return cls(
            collection=collection,
            tools=collection.tools,
            resources=collection.resources,
            resource_templates=templates,
            prompts=collection.prompts,
            templates_by_specificity=tuple(
                (collection.get(t.ref), t)  # type: ignore[misc]  # every template came from the collection
                for t in ordered
            ),
        )


def _checked(collection: object) -> ElementCollection:
    if not isinstance(collection, ElementCollection):
        raise TypeError(
            f"provide() returned {type(collection).__name__}, expected an ElementCollection"
        )
    return collection


def _source_diagnostics(entry: _Entry) -> Sequence[SourceDiagnostic]:
    # A broken diagnostics() (SystemExit too) must not hide the rest.
    try:
        return diagnostics_of(entry.source)
    except BaseException as exc:
        if escapes(exc):
            raise
        return (_diagnostic(entry, "failed", f"diagnostics() raised {exc!r}"),)


def _declared_kinds(entry: _Entry) -> ElementKind:
    # A broken kinds() (SystemExit too) advertises nothing rather than break capabilities.
    try:
        kinds = entry.source.kinds()
    except BaseException as exc:
        if escapes(exc):
            raise
        _log.warning(
            "source %s: kinds() raised; advertising nothing for it", entry.label, exc_info=exc
        )
        return ElementKind.NONE
    return kinds if isinstance(kinds, ElementKind) else ElementKind.NONE


def _diagnostic(
    entry: _Entry, kind: DiagnosticKind, message: str, ref: ElementRef | None = None
) -> SourceDiagnostic:
    return SourceDiagnostic(source=entry.label, kind=kind, message=message, ref=ref, at=time.time())


def _without_ref(exc: Exception, ref: ElementRef) -> str:
    # Diagnostics carry the ref as a field; do not repeat it at the head of the message.
    message = str(exc)
    prefix = f"{ref}: "
    return message.removeprefix(prefix)


def _source_of(element: Element, entries: Sequence[_Entry]) -> str:
    """The label of the source whose element ``element`` is.

    The merge serves a source's own element, or that element with the completion providers of
    the ones it shadows (``_with_completions_of``): the same definition and handler objects.
    """
    for entry in entries:
        own = entry.last_good.get(element.ref) if entry.last_good is not None else None
        if own is element or (
            own is not None
            and own.definition is element.definition
            and own.handler is element.handler
        ):
            return entry.label
    return "<unknown source>"


def _undeclared(ref: ElementRef, declared: ElementKind) -> str | None:
    """Why an element of an undeclared kind is skipped (None: its kind is declared)."""
    if ref.kind & declared:
        return None
    return (
        f"skipped: the source declares kinds() = {declared.label or 'none'}; "
        "make kinds() cover every kind provide() returns"
    )


def _invalid(element: Element, admit: Callable[[Element], None]) -> str | None:
    """Why ``admit`` refuses ``element`` (None: it admits it)."""
    try:
        admit(element)
    except (InvalidElementError, TypeError, ValueError) as exc:
        return f"skipped: {_without_ref(exc, element.ref)}"
    return None


def _changed_kinds(before: ElementCollection, after: ElementCollection) -> ElementKind:
    """The kinds whose definitions differ as multisets (a change of order alone is no change).

    The same element object on both sides is equal to itself: those cancel first, and only what
    is left is compared by value, kind by kind (a reload that changes a few elements of one
    source compares those, not the whole catalogue).
    """
    old, new = tuple(before), tuple(after)
    if len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True)):
        return ElementKind.NONE
    kept = Counter(map(id, old)) & Counter(map(id, new))
    gone, came = _by_kind(old, kept), _by_kind(new, kept)
    changed = ElementKind.NONE
    for kind in SINGLE_KINDS:
        if Counter(gone.get(kind, ())) != Counter(came.get(kind, ())):
            changed |= kind
    return changed


def _by_kind(
    elements: Sequence[Element], kept: Counter[int]
) -> dict[ElementKind, list[Definition]]:
    """The definitions of ``elements`` by kind, less the objects (with multiplicity) in ``kept``."""
    left = Counter(kept)
    found: dict[ElementKind, list[Definition]] = {}
    for element in elements:
        key = id(element)
        if left[key] > 0:
            left[key] -= 1
        else:
            found.setdefault(element.ref.kind, []).append(element.definition)
    return found


def _precedence(entry: _Entry) -> tuple[int, int]:
    """The merge's ranking: higher priority first, then the source added first."""
    return (-entry.priority, entry.order)


def _merge(entries: Sequence[_Entry], admit: Callable[[Element], None]) -> _Layer:
    """The one precedence rule: higher priority first, then the source added first."""
    steps = _merging(entries, admit)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            layer: _Layer = done.value
            return layer


def _merging(
    entries: Sequence[_Entry], admit: Callable[[Element], None]
) -> Generator[None, None, _Layer]:
    """:func:`_merge`, pausing (``yield``) after every :data:`STRETCH` elements it admits."""
    judged = 0
    by_ref: dict[ElementRef, Element] = {}
    winner: dict[ElementRef, _Entry] = {}
    diagnostics: list[SourceDiagnostic] = []
    for entry in sorted(entries, key=_precedence):
        collection = entry.last_good
        if not collection:
            continue
        declared = _declared_kinds(entry)
        # The single kinds declared, for an identity test per element (Flag's `&` is Python).
        admitted = {kind for kind in SINGLE_KINDS if kind & declared}
        for position, element in enumerate(collection):
            ref = element.ref
            if ref.kind not in admitted:
                diagnostics.append(
                    _diagnostic(entry, "skipped", _undeclared(ref, declared) or "", ref)
                )
                continue
            if ref in by_ref:
                diagnostics.append(
                    _diagnostic(
                        entry,
                        "shadowed",
                        f"shadowed by {winner[ref].label} "
                        f"(priority {winner[ref].priority} vs {entry.priority})",
                        ref,
                    )
                )
                if element.completions:
                    by_ref[ref] = _with_completions_of(by_ref[ref], element)
                continue
            verdicts = entry.verdicts
            if verdicts is None or verdicts.collection is not collection:
                verdicts = entry.verdicts = _Verdicts(collection, verdicts)
            invalid = verdicts.of(position, element, admit)
            judged += 1
            if judged % STRETCH == 0:
                yield
            if invalid is not None:
                diagnostics.append(_diagnostic(entry, "skipped", invalid, ref))
                continue
            by_ref[ref] = element
            winner[ref] = entry
    return _Layer(_layer_collection(by_ref, winner, entries), tuple(diagnostics))


def _completes_less_than_it_could(element: Element) -> bool:
    """Whether a prompt or template has an argument without a completion provider."""
    definition = element.definition
    if isinstance(definition, ResourceTemplate):
        count = len(definition.template.variables)
    elif isinstance(definition, Prompt):
        count = len(definition.arguments or ())
    else:
        return False
    return len(element.completions or {}) < count


def _with_completions_of(winner: Element, shadowed: Element) -> Element:
    """``winner``, completing also what only the element it shadows completes.

    Completion providers follow the winning element: overriding a template or prompt (manual
    over discovered) keeps the providers of the shadowed one for every argument the winner has
    and completes no other way.
    """
    own = winner.completions or {}
    definition = winner.definition
    if isinstance(definition, ResourceTemplate):
        names = set(definition.template.variables)
    elif isinstance(definition, Prompt):
        names = {argument.name for argument in definition.arguments or ()}
    else:
        return winner
    inherited = {
        argument: provider
        for argument, provider in (shadowed.completions or {}).items()
        if argument in names and argument not in own
    }
    if not inherited:
        return winner
    return dataclasses.replace(winner, completions={**inherited, **own})


def _layer_collection(
    by_ref: dict[ElementRef, Element], winner: dict[ElementRef, _Entry], entries: Sequence[_Entry]
) -> ElementCollection:
    """The merged elements as one collection: a source's own when it is the whole catalogue.

    The usual catalogue is one source's collection kept whole (nothing skipped or shadowed);
    that collection already holds exactly these elements in this order, so it is the layer,
    rather than a second collection of 100k elements built on the first load.
    """
    if by_ref:
        only = next(iter(winner.values()))
        collection = only.last_good
        if (
            collection is not None
            and len(collection) == len(by_ref)
            and all(entry is only or not entry.last_good for entry in entries)
        ):
            return collection
    return ElementCollection(by_ref.values())
