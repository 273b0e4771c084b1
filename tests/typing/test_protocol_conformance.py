"""Every reference class conforms to its Protocol structurally, checked by mypy --strict.

Nothing here inherits from a Protocol: the assignments below type-check only because the classes
have the right methods with the right signatures. The tests also run, so the file cannot rot.
"""

from __future__ import annotations

from pathlib import Path

from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
from mcp_core.registry import (
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
    Registry,
)
from mcp_core.sources import (
    CachedSource,
    CollectionFileSource,
    ElementSource,
    FilteredSource,
    IsolatedSource,
    LazySource,
    PrefixedSource,
    StaticSource,
    ValidatedSource,
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
