"""The reference Registry: all four roles over an ordered list of (source, priority).

The whole merge happens in one place (:func:`_merge`), once per load or reload, and produces an
immutable base layer. Runtime registrations are a small overlay consulted first, so a write is
O(1) and never provides. Per-kind lists are built lazily from those two layers and cached until
the next change.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

import anyio

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
    most_specific_first,
)
from mcp_core.errors import InvalidElementError, SourceUnavailableError
from mcp_core.handlers import validate_handler
from mcp_core.registry._protocols import ChangeListener, ResolvedResource
from mcp_core.sources import DiagnosticKind, ElementSource, SourceDiagnostic, describe_source

__all__ = ["ChangeListener", "Priority", "Registry"]

_log = logging.getLogger("mcp_core.registry")


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


@final
@dataclass(frozen=True, slots=True)
class _Layer:
    """An immutable merged layer: elements by ref, in catalogue order."""

    by_ref: dict[ElementRef, Element]
    diagnostics: tuple[SourceDiagnostic, ...] = ()


_EMPTY_LAYER: Final = _Layer({})


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
    """

    __slots__ = (
        "_base",
        "_current",
        "_entries",
        "_listeners",
        "_load_lock",
        "_loaded",
        "_runtime",
        "_runtime_diagnostics",
        "_validator",
        "_views",
    )

    def __init__(
        self,
        sources: Iterable[tuple[ElementSource, int]] = (),
        *,
        validator: Callable[[Element], None] | None = validate_handler,
    ) -> None:
        """Create a registry.

        ``validator`` raises :class:`~mcp_core.errors.InvalidElementError` for an element that
        must be skipped (from a source) or refused (from ``register``). The default rejects
        handlers of the wrong kind for their definition; ``None`` admits everything.
        """
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
        self._validator = validator
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
        if not callable(getattr(source, "provide", None)) or not callable(
            getattr(source, "kinds", None)
        ):
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
        async with self._load_lock:
            pending = [e for e in self._entries if not e.provided]
            if self._loaded and not pending:
                return
            await self._provide(pending)
            initial = not self._loaded
            self._swap_base(emit=not initial)
            self._loaded = self._current = True

    async def reload(self) -> None:
        """Provide every source again, re-merge, and emit one change per affected kind."""
        async with self._load_lock:
            await self._provide(self._entries)
            initial = not self._loaded
            self._swap_base(emit=not initial)
            self._loaded = self._current = True

    async def _provide(self, entries: Sequence[_Entry]) -> None:
        async with anyio.create_task_group() as group:
            for entry in entries:
                group.start_soon(self._provide_one, entry)

    async def _provide_one(self, entry: _Entry) -> None:
        entry.diagnostics = []
        try:
            collection = _checked(await entry.source.provide())
        except Exception as exc:  # noqa: BLE001 -- isolation: any failure costs only this source
            kind: DiagnosticKind = (
                "unavailable" if isinstance(exc, SourceUnavailableError) else "failed"
            )
            keeping = (
                f"serving its last good collection ({len(entry.last_good)} elements)"
                if entry.last_good is not None
                else "contributing nothing until a reload succeeds"
            )
            message = f"{type(exc).__name__}: {exc}; {keeping}"
            entry.diagnostics.append(_diagnostic(entry, kind, message))
            _log.warning("source %s %s: %s", entry.label, kind, message, exc_info=kind == "failed")
        else:
            entry.last_good = collection
        entry.provided = True

    def _swap_base(self, *, emit: bool) -> None:
        before = self._definitions_by_kind() if emit else None
        self._base = _merge(self._entries, self._validator)
        self._views = None
        if before is not None:
            self._emit_changes(before)

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
        """The effective element at ``ref``, or None."""
        await self._ensure_loaded()
        return self._runtime.get(ref) or self._base.by_ref.get(ref)

    async def get_tool(self, name: str) -> Element | None:
        """The tool named ``name``, or None."""
        await self._ensure_loaded()
        ref = ElementRef(ElementKind.TOOL, name) if name else None
        return (self._runtime.get(ref) or self._base.by_ref.get(ref)) if ref else None

    async def get_prompt(self, name: str) -> Element | None:
        """The prompt named ``name``, or None."""
        await self._ensure_loaded()
        ref = ElementRef(ElementKind.PROMPT, name) if name else None
        return (self._runtime.get(ref) or self._base.by_ref.get(ref)) if ref else None

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """The resource at ``uri``: an exact resource first, else the most specific template."""
        views = await self._ready()
        if uri:
            ref = ElementRef(ElementKind.RESOURCE, uri)
            exact = self._runtime.get(ref) or self._base.by_ref.get(ref)
            if exact is not None:
                return ResolvedResource(element=exact)
        for element, template in views.templates_by_specificity:
            variables = template.template.match(uri)
            if variables is not None:
                return ResolvedResource(element=element, variables=variables)
        return None

    # -- runtime registration (ElementWriter) --------------------------------------------------

    async def register(self, element: Element) -> None:
        """Add or replace a runtime registration; it beats every source. Never provides."""
        if not isinstance(element, Element):
            raise TypeError(f"register() takes an Element, got {type(element).__name__}")
        if self._validator is not None:
            self._validator(element)
        ref = element.ref
        before = self._effective_definition(ref)
        self._runtime[ref] = element
        self._views = None
        if self._loaded and before != element.definition:
            self._notify(ref.kind)

    async def unregister(self, ref: ElementRef) -> bool:
        """Remove the runtime registration at ``ref``; return whether there was one."""
        element = self._runtime.pop(ref, None)
        if element is None:
            return False
        self._views = None
        if self._loaded and self._effective_definition(ref) != element.definition:
            self._notify(ref.kind)
        return True

    def _effective_definition(self, ref: ElementRef) -> Definition | None:
        element = self._runtime.get(ref) or self._base.by_ref.get(ref)
        return element.definition if element is not None else None

    # -- diagnostics ---------------------------------------------------------------------------

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """Everything skipped, failed, unavailable, shadowed or stale, with source and reason.

        Includes the diagnostics of sources (and wrappers) that expose ``diagnostics()``.
        """
        found: list[SourceDiagnostic] = []
        for entry in self._entries:
            found.extend(entry.diagnostics)
            own = getattr(entry.source, "diagnostics", None)
            if callable(own):
                try:
                    found.extend(own())
                except Exception as exc:  # noqa: BLE001 -- a broken diagnostics() must not hide the rest
                    found.append(_diagnostic(entry, "failed", f"diagnostics() raised {exc!r}"))
        found.extend(self._base.diagnostics)
        for ref in self._runtime:
            shadowed = self._base.by_ref.get(ref)
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

    # -- internals -----------------------------------------------------------------------------

    async def _ensure_loaded(self) -> None:
        if not self._current:
            await self.load()

    async def _ready(self) -> _Views:
        await self._ensure_loaded()
        views = self._views
        if views is None:
            views = self._views = _Views.build(self._runtime, self._base)
        return views

    def _definitions_by_kind(self) -> dict[ElementKind, Counter[Definition]]:
        # As multisets: a change of order alone is no change (ChangeNotifier).
        views = self._views or _Views.build(self._runtime, self._base)
        return {kind: Counter(views.collection.definitions(kind)) for kind in SINGLE_KINDS}

    def _emit_changes(self, before: dict[ElementKind, Counter[Definition]]) -> None:
        after = self._definitions_by_kind()
        changed = ElementKind.NONE
        for kind in SINGLE_KINDS:
            if before[kind] != after[kind]:
                changed |= kind
        if changed:
            self._notify(changed)

    def _notify(self, kinds: ElementKind) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(kinds)
            except Exception:  # noqa: BLE001 -- a subscriber's bug must not break writes or reloads
                _log.exception("registry change listener %r raised; ignoring it", listener)


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
        if runtime:
            merged = list(runtime.values())
            merged.extend(e for ref, e in base.by_ref.items() if ref not in runtime)
        else:
            merged = list(base.by_ref.values())
        collection = ElementCollection(merged)
        templates = collection.resource_templates
        by_template = {t.template: t for t in templates}
        ordered = most_specific_first(by_template)
        return cls(
            collection=collection,
            tools=collection.tools,
            resources=collection.resources,
            resource_templates=templates,
            prompts=collection.prompts,
            templates_by_specificity=tuple(
                (collection.get(by_template[t].ref), by_template[t])  # type: ignore[misc]  # every template came from the collection
                for t in ordered
            ),
        )


def _checked(collection: object) -> ElementCollection:
    if not isinstance(collection, ElementCollection):
        raise TypeError(
            f"provide() returned {type(collection).__name__}, expected an ElementCollection"
        )
    return collection


def _declared_kinds(entry: _Entry) -> ElementKind:
    try:
        kinds = entry.source.kinds()
    except Exception:  # noqa: BLE001 -- a broken kinds() advertises nothing rather than break capabilities
        _log.warning(
            "source %s: kinds() raised; advertising nothing for it", entry.label, exc_info=True
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
    for entry in entries:
        if entry.last_good is not None and entry.last_good.get(element.ref) is element:
            return entry.label
    return "<unknown source>"


def _merge(entries: Sequence[_Entry], validator: Callable[[Element], None] | None) -> _Layer:
    """The one precedence rule: higher priority first, then the source added first."""
    by_ref: dict[ElementRef, Element] = {}
    winner: dict[ElementRef, _Entry] = {}
    diagnostics: list[SourceDiagnostic] = []
    for entry in sorted(entries, key=lambda e: (-e.priority, e.order)):
        collection = entry.last_good
        if not collection:
            continue
        declared = _declared_kinds(entry)
        for element in collection:
            ref = element.ref
            if not ref.kind & declared:
                diagnostics.append(
                    _diagnostic(
                        entry,
                        "skipped",
                        f"skipped: the source declares kinds() = {declared.label or 'none'}; "
                        "make kinds() cover every kind provide() returns",
                        ref,
                    )
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
                continue
            if validator is not None:
                try:
                    validator(element)
                except (InvalidElementError, TypeError, ValueError) as exc:
                    diagnostics.append(
                        _diagnostic(entry, "skipped", f"skipped: {_without_ref(exc, ref)}", ref)
                    )
                    _log.warning("source %s: %s skipped: %s", entry.label, ref, exc)
                    continue
            by_ref[ref] = element
            winner[ref] = entry
    return _Layer(by_ref, tuple(diagnostics))
