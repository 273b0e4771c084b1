"""The five registry roles, and the capabilities a registry may add.

Request handlers depend on the narrowest role they use. Beyond the roles, what a server, a
deployment or the command line may ask of a registry is a named, runtime-checkable capability
(:class:`ElementAtRef`, :class:`CatalogCollection`, :class:`ElementOrigin`,
:class:`HealthReport`, :class:`BackgroundRecovery`, :class:`ConfiguredSources`,
:class:`SourceChangeNotifier`), as are the sources' :class:`~mcp_core.sources.KindsPrefetch` and
:class:`~mcp_core.sources.DiagnosticsReport`, which a registry may offer too. The reference
``Registry`` has them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypeAlias, final, runtime_checkable

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.registry._health import RegistryHealth
from mcp_core.sources import ElementSource

__all__ = [
    "BackgroundRecovery",
    "CatalogCollection",
    "CatalogSizes",
    "ChangeListener",
    "ChangeNotifier",
    "ConfiguredSources",
    "DeferredRegistry",
    "ElementAtRef",
    "ElementCatalog",
    "ElementOrigin",
    "ElementResolver",
    "ElementWriter",
    "HealthReport",
    "ResolvedResource",
    "ResourceCandidates",
    "SourceChangeNotifier",
    "SourcesListener",
]

ChangeListener: TypeAlias = Callable[[ElementKind], object]
"""Called once per operation that changed the catalogue, with the kinds whose lists changed."""

SourcesListener: TypeAlias = Callable[[tuple[ElementSource, ...]], object]
"""Called once per operation that changed some sources' collections, with those sources."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedResource:
    """What ``get_resource`` found: the element, and the template variables (percent-decoded).

    ``variables`` is empty for an exact resource match.
    """

    element: Element
    variables: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))


class ElementCatalog(Protocol):
    """What the ``*/list`` handlers need.

    Every element a source provides counts, whatever its name, URI, tags, ``_meta``, title,
    description, icons or handler: a registry drops an element only for the reasons below, and
    hiding elements per session is the server's visibility rule, not the catalogue's.

    Laws:
        1. ``registry.model``: the catalogue equals the merge of its inputs after every change.
        2. ``registry.lazy``: nothing is provided before the first catalogue or resolver call.
        3. ``registry.single-flight``: concurrent first reads provide each source at most once
           (a per-name read may provide only the sources it needs; a load completes the rest).
        4. ``registry.first-read-complete``: every one of several concurrent first reads (lists
           and lookups alike) answers from the fully loaded catalogue, never from a partial or
           empty one; a write made before or while the first load runs is part of it.
        5. ``registry.precedence``: runtime > higher priority > lower priority; equal priority:
           first added wins; independent of the order registrations happen in and of the order
           in which sources finish providing.
        6. ``registry.element-isolation``: an invalid element costs only itself.
        7. ``registry.undeclared-kinds``: an element of a kind its source's ``kinds()`` does not
           declare is skipped, and costs only itself; a source whose ``kinds()`` raises declares
           nothing.
        8. ``registry.source-isolation``: a raising source costs at most its own elements; every
           read still succeeds. Whatever it raises: ``SystemExit`` and other ``BaseException``
           subclasses included, but for cancellation, ``KeyboardInterrupt`` and
           ``GeneratorExit``, which propagate.
        9. ``registry.unavailable-keeps-last-good``: a source raising ``SourceUnavailableError``
           on reload keeps serving its previous collection.
    """

    async def tools(self) -> Sequence[Tool]:
        """Tool definitions, in deterministic order."""
        ...

    async def resources(self) -> Sequence[Resource]:
        """Resource definitions, in deterministic order."""
        ...

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        """Resource template definitions, in deterministic order."""
        ...

    async def prompts(self) -> Sequence[Prompt]:
        """Prompt definitions, in deterministic order."""
        ...


class ElementResolver(Protocol):
    """What the call/read/get/complete handlers need.

    Laws:
        1. ``registry.resolver-agrees``: everything listed resolves to the same definition; what
           is not listed does not resolve.
        2. ``registry.templates``: an exact resource beats a template; the most specific template
           wins, and between equally specific ones the one of the higher-precedence source;
           variables are extracted and percent-decoded.
        3. ``registry.resolved-whole``: a per-name read answers the whole element the loaded
           registry holds at that name (definition, handler, completion providers, tags),
           whether or not the catalogue has been loaded yet.
    """

    async def get_tool(self, name: str) -> Element | None:
        """The tool named ``name``, or None."""
        ...

    async def get_prompt(self, name: str) -> Element | None:
        """The prompt named ``name``, or None."""
        ...

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """The resource at ``uri`` (exact match first, else the most specific template), or None."""
        ...


@runtime_checkable
class ResourceCandidates(Protocol):
    """An optional addition to :class:`ElementResolver`: every element that could answer a URI.

    ``get_resource`` answers with the one winner; a server applying per-session visibility needs
    the runners-up too, so that a hidden winner makes way for the next visible candidate exactly
    as if it were missing. A resolver without this method is asked ``get_resource`` alone (its
    winner, if hidden, hides the URI).

    Laws:
        1. ``registry.candidates``: ``resource_candidates(uri)`` yields, best first, the exact
           resource at ``uri`` (if any) and then every template that matches ``uri`` in the
           order ``get_resource`` would prefer them, each with its variables; its first item
           is what ``get_resource(uri)`` returns; and none of its items wins once removed.
    """

    async def resource_candidates(self, uri: str) -> Iterable[ResolvedResource]:
        """The elements that could answer ``uri``, best first (an iterable consumed lazily)."""
        ...


class ElementWriter(Protocol):
    """Runtime registration.

    A registry that is also a :class:`ChangeNotifier` announces writes as its laws say.

    Laws:
        1. ``registry.register-inverse``: ``register(e)`` then ``unregister(e.ref)`` restores the
           previous catalogue.
    """

    async def register(self, element: Element) -> None:
        """Add or replace a runtime registration; it beats every source."""
        ...

    async def unregister(self, ref: ElementRef) -> bool:
        """Remove the runtime registration at ``ref``; return whether there was one."""
        ...


class DeferredRegistry(Protocol):
    """The load lifecycle, and what the registry may hold before it has loaded anything.

    The catalogue is first loaded by ``load()``, or by the first catalogue or resolver call.

    Laws:
        1. ``registry.load-idempotent``: ``load()`` twice provides each source once.
        2. ``registry.reload-atomic``: a read while ``reload()`` runs answers from a complete
           catalogue, the one before the reload or the one after it, never a mix or an empty one.
        3. ``registry.honest-kinds``: ``kinds()`` is the union of the sources' ``kinds()`` and the
           runtime registrations' kinds, computed without providing.
    """

    async def load(self) -> None:
        """Provide every source once (no-op when already loaded); concurrent calls share one load."""
        ...

    async def reload(self) -> None:
        """Provide every source again and swap in the new catalogue."""
        ...

    @property
    def loaded(self) -> bool:
        """Whether a load has completed."""
        ...

    def kinds(self) -> ElementKind:
        """The kinds the registry may hold, answered without providing (a server's capabilities)."""
        ...


@runtime_checkable
class ChangeNotifier(Protocol):
    """Change events: how a server learns that it must send ``notifications/*/list_changed``.

    One rule for every operation (``reload()``, ``register()``, ``unregister()``): once the
    catalogue has first been loaded, an operation that changed what the catalogue lists calls
    each listener exactly once with the union of the kinds whose listed definitions changed (as
    sets: order alone is no change), and an operation that changed nothing calls none. Before
    the first load completes nothing is emitted, neither by the initial load nor by writes made
    before it: no reader has seen a catalogue yet, and the first read answers with everything
    written so far.

    Laws:
        1. ``registry.change-events``: one event per operation, covering exactly the kinds whose
           listed definitions changed; none for an operation that changed nothing; none before
           and during the first load.
        2. ``registry.listener-isolation``: a listener that raises changes nothing: the operation
           completes, and every other listener is still called. Whatever it raises, as for a
           source (``registry.source-isolation``).
        3. ``registry.unsubscribe``: after calling the function ``subscribe`` returned, the
           listener is never called again; other listeners are unaffected.
    """

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each change; return a function that unsubscribes."""
        ...


@runtime_checkable
class ElementAtRef(Protocol):
    """Optional: the effective element at any ref, whatever its kind (``Registry.get``).

    A resolver without it is asked by kind (``get_tool``, ``get_prompt``, ``get_resource``); a
    template, which no URI names uniquely, is then reached through URIs it expands to.
    """

    async def get(self, ref: ElementRef) -> Element | None:
        """The effective element at ``ref``, or None."""
        ...


@runtime_checkable
class CatalogCollection(Protocol):
    """Optional: the whole effective catalogue as one collection (``Registry.elements``).

    A catalogue without it is listed and resolved element by element (``collect``).
    """

    async def elements(self) -> ElementCollection:
        """Every listed element, in catalogue order."""
        ...


@runtime_checkable
class ElementOrigin(Protocol):
    """Optional: where the effective element at a ref comes from, for aggregated servers."""

    def origin(self, ref: ElementRef) -> str | None:
        """A description of the source of the element at ``ref``, or None."""
        ...


@runtime_checkable
class CatalogSizes(Protocol):
    """Optional: how many elements of each kind the catalogue holds, for metrics and status pages.

    Laws: answers at once, loading and providing nothing, and may be asked from another thread
    (a metrics server's); None before the first load. Layer plumbing, not exported (ADR 0113).
    """

    def catalog_sizes(self) -> dict[ElementKind, int] | None:
        """Elements per kind in the catalogue now, or None before the first load."""
        ...


@runtime_checkable
class HealthReport(Protocol):
    """Optional: how every source is doing now, answered without loading or providing."""

    def health(self) -> RegistryHealth:
        """The registry's health now."""
        ...


@runtime_checkable
class BackgroundRecovery(Protocol):
    """Optional: failing sources retried in the background while a server serves."""

    def background(self) -> AbstractAsyncContextManager[None]:
        """While entered, retry failing sources; any number of entries may be open at once."""
        ...


@runtime_checkable
class ConfiguredSources(Protocol):
    """Optional: the sources a registry was given, with their priorities."""

    @property
    def sources(self) -> tuple[tuple[ElementSource, int], ...]:
        """The ``(source, priority)`` pairs, in the order they were added."""
        ...


@runtime_checkable
class SourceChangeNotifier(Protocol):
    """Optional: which sources' collections changed, what a deployment tells its other workers."""

    def subscribe_sources(self, listener: SourcesListener) -> Callable[[], None]:
        """Call ``listener(sources)`` after each operation that changed them; returns an unsubscribe."""
        ...
