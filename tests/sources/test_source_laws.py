"""The source and wrapper laws (docs/architecture.md §3.2), as hypothesis properties, for every built-in.

Each ``Test<Unit>Laws`` class says how to build its unit over generated content; the law
checks themselves are written once, in :class:`SourceLaws` and :class:`WrapperLaws`.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import itertools
import tempfile
import types
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings

from mcp_conformance.strategies import collections, element_kinds
from mcp_core.elements import (
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    Prompt,
    Resource,
    Tool,
)
from mcp_core.sources import (
    CachedSource,
    CollectionFileSource,
    ElementSource,
    EntryPointSource,
    FilteredSource,
    IsolatedSource,
    LazySource,
    PrefixedSource,
    StaticSource,
    ValidatedSource,
)
from mcp_core.stores import MemoryStore
from tests.strategies import CountingSource, sources

# The law checks are inherited by one class per unit, so hypothesis sees each method run by
# several classes ("differing executors"). That is the point here: every class builds a different
# unit over the same strategies, and an example replayed from the database for another unit is
# as valid a test of it. Deadlines are off because file and store round trips vary on CI.
LAWS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.differing_executors]
)


class SourceLaws:
    """``source.*`` laws for a source built by :meth:`make` over a generated collection."""

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """A source that provides ``collection`` and may declare ``declared`` kinds."""
        raise NotImplementedError

    def content_calls(self) -> int:
        """How often the unit produced its content (factory calls, inner provides) so far."""
        return 0

    @LAWS
    @given(collection=collections(), extra=element_kinds())
    async def test_returns_collection(
        self, collection: ElementCollection, extra: ElementKind
    ) -> None:
        """source.returns-collection: provide() gives an ElementCollection, kinds() an ElementKind."""
        source = self.make(collection, collection.kinds | extra)
        assert isinstance(source.kinds(), ElementKind)
        assert isinstance(await source.provide(), ElementCollection)

    @LAWS
    @given(collection=collections(), extra=element_kinds())
    async def test_idempotent(self, collection: ElementCollection, extra: ElementKind) -> None:
        """source.idempotent: two provide() calls with no outside change are equal."""
        source = self.make(collection, collection.kinds | extra)
        assert await source.provide() == await source.provide()

    @LAWS
    @given(collection=collections(), extra=element_kinds())
    async def test_kinds_cover(self, collection: ElementCollection, extra: ElementKind) -> None:
        """source.kinds-cover: every provided element's kind is in kinds()."""
        source = self.make(collection, collection.kinds | extra)
        provided = await source.provide()
        assert all(element.kind in source.kinds() for element in provided)

    @LAWS
    @given(collection=collections(), extra=element_kinds())
    async def test_kinds_without_provide(
        self, collection: ElementCollection, extra: ElementKind
    ) -> None:
        """source.kinds-without-provide: kinds() answers without providing anything."""
        source = self.make(collection, collection.kinds | extra)
        before = self.content_calls()
        refuse = mock.Mock(side_effect=AssertionError("kinds() called provide()"))
        with mock.patch.object(type(source), "provide", refuse):
            source.kinds()
        assert refuse.call_count == 0
        assert self.content_calls() == before

    @LAWS
    @given(collection=collections(), extra=element_kinds())
    async def test_json_roundtrip(self, collection: ElementCollection, extra: ElementKind) -> None:
        """source.json-roundtrip: a serializable provided collection survives to_json/from_json."""
        provided = await self.make(collection, collection.kinds | extra).provide()
        assert provided.is_serializable
        assert ElementCollection.from_json(provided.to_json()) == provided


class WrapperLaws(SourceLaws):
    """``wrapper.*`` laws (and the source laws) for a wrapper built by :meth:`wrap`."""

    def setup_method(self) -> None:
        """Start each test with no inner sources."""
        self.inners: list[CountingSource] = []

    def wrap(self, inner: ElementSource) -> ElementSource:
        """The wrapper under test around ``inner``."""
        raise NotImplementedError

    def expected(self, wrapper: ElementSource, inner: ElementCollection) -> ElementCollection:
        """What the wrapper provides over a healthy inner collection: by default, the same."""
        return inner

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """The wrapper around a healthy, counting inner source."""
        inner = CountingSource(collection, declared)
        self.inners.append(inner)
        return self.wrap(inner)

    def content_calls(self) -> int:
        """Inner provide() calls so far."""
        return sum(inner.provides for inner in self.inners)

    @LAWS
    @given(inner=sources())
    async def test_transparent(self, inner: CountingSource) -> None:
        """wrapper.transparent: over a healthy inner source it provides the declared relation."""
        wrapper = self.wrap(inner)
        assert await wrapper.provide() == self.expected(wrapper, inner.collection)

    @LAWS
    @given(inner=sources())
    async def test_kinds_consistent(self, inner: CountingSource) -> None:
        """wrapper.kinds: what it provides is in its kinds, which never exceed the inner's."""
        wrapper = self.wrap(inner)
        provided = await wrapper.provide()
        assert provided.kinds in wrapper.kinds()
        assert wrapper.kinds() in inner.kinds()


class TestStaticSourceLaws(SourceLaws):
    """StaticSource satisfies every source law."""

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """A StaticSource of ``collection`` (its kinds are exactly the content's)."""
        return StaticSource(collection)


class TestLazySourceLaws(SourceLaws):
    """LazySource satisfies every source law."""

    def setup_method(self) -> None:
        """Reset the factory call counter."""
        self.calls = 0

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """A LazySource whose factory returns the collection's elements as a list."""

        def factory() -> Sequence[Element]:
            self.calls += 1
            return list(collection)

        return LazySource(factory, kinds=declared)

    def content_calls(self) -> int:
        """Factory calls so far."""
        return self.calls


# The plugins TestEntryPointSourceLaws "installs": entry points name attributes of this.
PLUGINS = types.SimpleNamespace()


class TestEntryPointSourceLaws(SourceLaws):
    """EntryPointSource satisfies every source law over a group of installed plugins."""

    def setup_method(self) -> None:
        """Installed entry points, by group; the metadata lookup answers from them."""
        self.groups: dict[str, list[importlib.metadata.EntryPoint]] = {}
        self.names = itertools.count()

        def entry_points(*, group: str) -> list[importlib.metadata.EntryPoint]:
            return self.groups.get(group, [])

        self.patch = mock.patch("importlib.metadata.entry_points", entry_points)
        self.patch.start()

    def teardown_method(self) -> None:
        """Stop answering for the metadata."""
        self.patch.stop()

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """A group whose one plugin is ``collection``; every other source declares its kinds."""
        number = next(self.names)
        setattr(PLUGINS, f"p{number}", collection)
        group = f"laws.g{number}"
        value = f"{__name__}:PLUGINS.p{number}"
        self.groups[group] = [importlib.metadata.EntryPoint(f"p{number}", value, group)]
        return EntryPointSource(group, kinds=declared if number % 2 else ElementKind.ALL)


class TestCollectionFileSourceLaws(SourceLaws):
    """CollectionFileSource satisfies every source law, declared kinds or not."""

    def setup_method(self) -> None:
        """A scratch directory for the dumped files."""
        self.scratch = tempfile.TemporaryDirectory()
        self.names = itertools.count()

    def teardown_method(self) -> None:
        """Remove the scratch directory."""
        self.scratch.cleanup()

    def make(self, collection: ElementCollection, declared: ElementKind) -> ElementSource:
        """A file source over a fresh dump; every other one declares its kinds."""
        number = next(self.names)
        path = Path(self.scratch.name) / f"collection-{number}.json"
        path.write_text(collection.to_json(), encoding="utf-8")
        return CollectionFileSource(path, kinds=declared if number % 2 else None)


class TestCachedSourceLaws(WrapperLaws):
    """CachedSource over a fresh MemoryStore is transparent and satisfies the source laws."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """A CachedSource with a TTL, in its own store."""
        return CachedSource(inner, MemoryStore(), ttl=60)

    @LAWS
    @given(inner=sources())
    async def test_transparent_from_the_cache(self, inner: CountingSource) -> None:
        """wrapper.transparent: a second provide(), served from the store, equals the inner's."""
        wrapper = self.wrap(inner)
        await wrapper.provide()
        assert await wrapper.provide() == inner.collection
        assert inner.provides == 1


class TestIsolatedSourceLaws(WrapperLaws):
    """IsolatedSource is transparent over a healthy source."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """An IsolatedSource."""
        return IsolatedSource(inner)


class TestFilteredSourceLaws(WrapperLaws):
    """FilteredSource with a keep-everything predicate is transparent."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """A FilteredSource that keeps every element."""
        return FilteredSource(inner, lambda element: True)


class TestFilteredSourceRelationLaws(WrapperLaws):
    """FilteredSource with a real predicate and declared kinds provides exactly the kept subset."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """Keep tagged elements that are tools or prompts."""
        return FilteredSource(
            inner, lambda element: bool(element.tags), kinds=ElementKind.TOOL | ElementKind.PROMPT
        )

    def expected(self, wrapper: ElementSource, inner: ElementCollection) -> ElementCollection:
        """The tagged tools and prompts, in order."""
        wanted = ElementKind.TOOL | ElementKind.PROMPT
        return ElementCollection(e for e in inner if e.tags and e.kind in wanted)


class TestPrefixedSourceLaws(WrapperLaws):
    """PrefixedSource provides exactly the inner elements renamed, in order."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """A PrefixedSource with prefix 'app'."""
        return PrefixedSource(inner, "app")

    def expected(self, wrapper: ElementSource, inner: ElementCollection) -> ElementCollection:
        """The inner collection with every element's ref renamed, in the same order."""
        assert isinstance(wrapper, PrefixedSource)
        return _renamed(wrapper, inner)

    @LAWS
    @given(inner=sources())
    async def test_relation(self, inner: CountingSource) -> None:
        """wrapper.transparent (declared relation): element i is inner element i at rename(ref)."""
        wrapper = PrefixedSource(inner, "app", separator="__")
        provided = list(await wrapper.provide())
        assert len(provided) == len(inner.collection)
        for mine, theirs in zip(provided, inner.collection, strict=True):
            assert mine.ref == wrapper.rename(theirs.ref)
            assert mine.handler == theirs.handler
            assert mine.completions == theirs.completions
            assert mine.tags == theirs.tags


def _renamed(wrapper: PrefixedSource, inner: ElementCollection) -> ElementCollection:
    """The inner collection as the relation says it must come out: same order, refs renamed."""
    return ElementCollection(
        dataclasses.replace(
            element, definition=_with_key(element.definition, wrapper.rename(element.ref).key)
        )
        for element in inner
    )


def _with_key(definition: Definition, key: str) -> Definition:
    """``definition`` with its identifying field (name, uri or uri_template) set to ``key``."""
    if isinstance(definition, Tool | Prompt):
        return dataclasses.replace(definition, name=key)
    if isinstance(definition, Resource):
        return dataclasses.replace(definition, uri=key)
    return dataclasses.replace(definition, uri_template=key)


class TestValidatedSourceLaws(WrapperLaws):
    """ValidatedSource is transparent over a source of valid elements."""

    def wrap(self, inner: ElementSource) -> ElementSource:
        """A ValidatedSource without an invoker."""
        return ValidatedSource(inner)
