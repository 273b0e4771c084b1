"""Every reference class conforms to its Protocol structurally, checked by mypy --strict.

Nothing here inherits from a Protocol: the assignments below type-check only because the classes
have the right methods with the right signatures. The tests also run, so the file cannot rot.
"""

from __future__ import annotations

from pathlib import Path

from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
from mcp_core.registry import (
    BackgroundRecovery,
    CatalogCollection,
    ChangeNotifier,
    ConfiguredSources,
    DeferredRegistry,
    ElementAtRef,
    ElementCatalog,
    ElementOrigin,
    ElementResolver,
    ElementWriter,
    HealthReport,
    Registry,
    ResourceCandidates,
    SourceChangeNotifier,
)
from mcp_core.registry._protocols import CatalogSizes
from mcp_core.server._events import InMemoryEventStore, RetainedBytes
from mcp_core.server._lifecycle import Draining, Lifecycle
from mcp_core.sources import (
    CachedSource,
    CacheInputs,
    CollectionFileSource,
    DiagnosticsReport,
    DiscoverySource,
    ElementLookup,
    ElementSource,
    FilteredSource,
    HandlerTargets,
    IsolatedSource,
    KindsPrefetch,
    LazySource,
    PrefixedSource,
    StaticSource,
    ValidatedSource,
    WrappingSource,
)
from mcp_core.stores import CacheStore, MemoryStore
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo, all_of, any_of, not_


def collection() -> ElementCollection:
    """A one-tool collection."""
    return ElementCollection(
        [
            Element(
                definition=Tool(name="t", input_schema={"type": "object"}),
                handler=HandlerRef("pkg:t"),
            )
        ]
    )


class TestStructuralConformance:
    """The reference implementations satisfy the Protocols without inheriting from them."""

    def test_registry_plays_every_role(self) -> None:
        """Registry is a catalog, resolver, writer, deferred registry and change notifier."""
        registry = Registry()
        catalog: ElementCatalog = registry
        resolver: ElementResolver = registry
        writer: ElementWriter = registry
        deferred: DeferredRegistry = registry
        notifier: ChangeNotifier = registry
        roles = (catalog, resolver, writer, deferred, notifier)
        assert {type(role) for role in roles} == {Registry}
        assert _protocol_bases(Registry) == ()

    def test_sources_and_wrappers_are_element_sources(self, tmp_path: Path) -> None:
        """Every built-in source and wrapper is an ElementSource."""
        static = StaticSource(collection())
        path = tmp_path / "c.json"
        path.write_text(collection().to_json())
        sources: list[ElementSource] = [
            static,
            LazySource(collection),
            CollectionFileSource(path),
            CachedSource(static, MemoryStore()),
            IsolatedSource(static),
            FilteredSource(static, lambda element: True),
            PrefixedSource(static, "app"),
            ValidatedSource(static),
        ]
        assert len(sources) == 8

    def test_registry_offers_every_capability(self) -> None:
        """Registry has every optional capability a server, a deployment or the CLI asks of it."""
        registry = Registry()
        offered: list[object] = []
        candidates: ResourceCandidates = registry
        at_ref: ElementAtRef = registry
        whole: CatalogCollection = registry
        origin: ElementOrigin = registry
        health: HealthReport = registry
        background: BackgroundRecovery = registry
        configured: ConfiguredSources = registry
        source_changes: SourceChangeNotifier = registry
        prefetch: KindsPrefetch = registry
        diagnostics: DiagnosticsReport = registry
        sizes: CatalogSizes = registry
        offered += [candidates, at_ref, whole, origin, health, background, configured]
        offered += [source_changes, prefetch, diagnostics, sizes]
        for capability in (
            ResourceCandidates,
            ElementAtRef,
            CatalogCollection,
            ElementOrigin,
            HealthReport,
            BackgroundRecovery,
            ConfiguredSources,
            SourceChangeNotifier,
            KindsPrefetch,
            DiagnosticsReport,
            CatalogSizes,
        ):
            assert isinstance(registry, capability), capability.__name__
        assert len(offered) == 11

    def test_sources_declare_their_capabilities(self) -> None:
        """The wrappers are WrappingSources; each source has the capabilities it implements."""
        static = StaticSource(collection())
        cached = CachedSource(static, MemoryStore())
        isolated, filtered = IsolatedSource(static), FilteredSource(static, lambda element: True)
        prefixed, validated = PrefixedSource(static, "app"), ValidatedSource(static)
        wrappers: list[WrappingSource] = [cached, isolated, filtered, prefixed, validated]
        lookups: list[ElementLookup] = [static, cached, isolated, filtered, prefixed, validated]
        targets: HandlerTargets = static
        inputs: list[CacheInputs] = [static, DiscoverySource(["json"]), filtered, prefixed]
        prefetch: KindsPrefetch = cached
        assert all(isinstance(w, WrappingSource) for w in wrappers)
        assert all(isinstance(s, ElementLookup) for s in lookups)
        assert isinstance(targets, HandlerTargets)
        assert isinstance(prefetch, KindsPrefetch)
        assert all(isinstance(s, CacheInputs) for s in inputs)
        assert not isinstance(static, WrappingSource | DiagnosticsReport | KindsPrefetch)

    def test_store_and_visibility(self) -> None:
        """MemoryStore is a CacheStore; the combinators are ElementVisibility rules."""
        store: CacheStore = MemoryStore()
        rules: list[ElementVisibility] = [ALWAYS, all_of(ALWAYS), any_of(ALWAYS), not_(ALWAYS)]
        session = SessionInfo(session_id="s", scopes=frozenset({"read"}))
        assert store is not None
        assert len(rules) == 4
        assert session.scopes == {"read"}


def _protocol_bases(cls: type) -> tuple[type, ...]:
    return tuple(base for base in cls.__mro__ if getattr(base, "_is_protocol", False))


class TestServerPlumbing:
    """The server's own capability Protocols (ADR 0113), met by the reference classes."""

    def test_event_store_and_lifecycle(self) -> None:
        """InMemoryEventStore says its bytes; a Lifecycle says whether it drains."""
        store: RetainedBytes = InMemoryEventStore()
        draining: Draining = Lifecycle()
        assert isinstance(store, RetainedBytes)
        assert isinstance(draining, Draining)
        assert store.retained_bytes == 0
        assert not draining.draining
