"""lookup(ref) through the built-in sources and wrappers, and CachedSource's kinds from its cache."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import SourceError, SourceUnavailableError
from mcp_core.sources import (
    CachedSource,
    ElementLookup,
    ElementSource,
    FilteredSource,
    IsolatedSource,
    LazySource,
    PrefixedSource,
    StaticSource,
    ValidatedSource,
    lookup_in,
    prefetch_kinds,
)
from mcp_core.sources._protocol import lookup_of
from mcp_core.stores import MemoryStore
from tests.strategies import BrokenStore, CountingSource, tool_element


class LookingUp:
    """A CountingSource that also answers lookup(ref), counting lookups; it may fail."""

    def __init__(self, inner: CountingSource) -> None:
        self.inner = inner
        self.lookups = 0
        self.fail_with: Exception | None = None

    def kinds(self) -> ElementKind:
        """The inner kinds."""
        return self.inner.kinds()

    async def provide(self) -> ElementCollection:
        """The inner collection."""
        return await self.inner.provide()

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The inner collection's element at ``ref`` (or the configured failure)."""
        self.lookups += 1
        if self.fail_with is not None:
            raise self.fail_with
        return self.inner.collection.get(ref)


def tools(*names: str) -> ElementCollection:
    """Tools with the given names."""
    return ElementCollection(tool_element(name) for name in names)


def looking_up(*names: str) -> LookingUp:
    """A source of those tools that answers lookups."""
    return LookingUp(CountingSource(tools(*names)))


TOOL_A = ElementRef.tool("a")


class TestWrappersPassLookupThrough:
    """Each wrapper answers lookup through its inner source's lookup, never by providing it."""

    async def test_prefixed_asks_only_for_its_own_names(self) -> None:
        """math_a reaches the inner 'a' (renamed back); any other name never reaches the inner."""
        inner = looking_up("a")
        prefixed = PrefixedSource(inner, "math")
        found = await prefixed.lookup(ElementRef.tool("math_a"))
        assert found is not None
        assert found.ref == ElementRef.tool("math_a")
        assert await prefixed.lookup(TOOL_A) is None
        assert await prefixed.lookup(ElementRef.tool("math_")) is None
        assert await prefixed.lookup(ElementRef.resource("math+file:///a")) is None
        assert (inner.lookups, inner.inner.provides) == (2, 0)

    async def test_filtered_applies_its_predicate_and_kinds(self) -> None:
        """An element the filter drops is not found; a kind outside the declared ones is not asked."""
        inner = looking_up("a", "b")
        filtered = FilteredSource(inner, lambda e: e.ref.key == "a", kinds=ElementKind.TOOL)
        assert await filtered.lookup(TOOL_A) == tool_element("a")
        assert await filtered.lookup(ElementRef.tool("b")) is None
        assert await filtered.lookup(ElementRef.prompt("a")) is None
        assert (inner.lookups, inner.inner.provides) == (2, 0)

    async def test_isolated_falls_back_to_its_last_good_collection(self) -> None:
        """A failing lookup answers from the last good collection (or nothing)."""
        inner = looking_up("a")
        isolated = IsolatedSource(inner)
        inner.fail_with = SourceUnavailableError("down")
        assert await isolated.lookup(TOOL_A) is None
        inner.fail_with = None
        await isolated.provide()
        inner.fail_with = SourceUnavailableError("down")
        assert await isolated.lookup(TOOL_A) == tool_element("a")

    async def test_validated_drops_an_element_with_problems(self) -> None:
        """The element's problems make it absent, as provide() would."""
        bad = tool_element("bad", input_schema={"type": "object", "properties": {"x": {"type": 1}}})
        validated = ValidatedSource(LookingUp(CountingSource(ElementCollection([bad]))))
        assert await validated.lookup(ElementRef.tool("bad")) is None

    async def test_without_an_inner_lookup_the_inner_provides(self) -> None:
        """A wrapper over a source without lookup answers by providing it."""
        inner = CountingSource(tools("a"))
        assert await PrefixedSource(inner, "p").lookup(ElementRef.tool("p_a")) is not None
        assert inner.provides == 1
        assert await lookup_in(inner, TOOL_A) == tool_element("a")


class TestLazySourceLookup:
    """LazySource answers one ref with its lookup callable, without calling the factory."""

    async def test_the_lookup_callable_spares_the_factory(self) -> None:
        """Until the factory has run, the lookup callable answers; afterwards its result does."""
        calls: list[str] = []

        def factory() -> ElementCollection:
            calls.append("factory")
            return tools("a", "b")

        async def one(ref: ElementRef) -> Element | None:
            calls.append(f"lookup {ref.key}")
            return tools("a", "b").get(ref)

        lazy = LazySource(factory, kinds=ElementKind.TOOL, lookup=one)
        assert await lazy.lookup(TOOL_A) == tool_element("a")
        assert await lazy.lookup(ElementRef.tool("z")) is None
        assert calls == ["lookup a", "lookup z"]
        await lazy.provide()
        assert await lazy.lookup(TOOL_A) == tool_element("a")
        assert calls == ["lookup a", "lookup z", "factory"]

    async def test_a_lookup_answering_another_ref_is_refused(self) -> None:
        """Answering the wrong ref, or an undeclared kind, is a SourceError naming both."""
        lazy = LazySource(lambda: tools("a"), kinds=ElementKind.PROMPT, lookup=lambda ref: None)
        assert await lazy.lookup(TOOL_A) is None
        wrong = LazySource(lambda: tools("a"), lookup=lambda ref: tool_element("b"))
        with pytest.raises(SourceError, match=r"lookup\(tool 'a'\) answered the element tool 'b'"):
            await wrong.lookup(TOOL_A)
        undeclared = LazySource(
            lambda: tools("a"), kinds=ElementKind.PROMPT, lookup=lambda ref: tool_element("a")
        )
        with pytest.raises(SourceError, match="of a declared kind"):
            await undeclared.lookup(TOOL_A)

    def test_the_lookup_must_be_callable(self) -> None:
        """A non-callable lookup is refused at construction."""
        with pytest.raises(TypeError, match="lookup must be a callable"):
            LazySource(tools, lookup="nope")  # type: ignore[arg-type]  # the misuse


class TestCachedSourceLookupAndKinds:
    """CachedSource answers lookups from a fresh entry, and kinds() from what it recorded."""

    async def test_a_fresh_entry_answers_lookups(self) -> None:
        """Once cached, lookups touch neither the inner source's provide nor its lookup."""
        inner = looking_up("a")
        store = MemoryStore()
        await CachedSource(inner, store).provide()
        cached = CachedSource(inner, store)
        assert await cached.lookup(TOOL_A) == tool_element("a")
        assert (inner.lookups, inner.inner.provides) == (0, 1)

    async def test_a_miss_asks_the_inner_lookup_and_stores_nothing(self) -> None:
        """Without an entry the inner source's lookup answers; one element is not the collection."""
        inner = looking_up("a")
        store = MemoryStore()
        cached = CachedSource(inner, store)
        assert await cached.lookup(TOOL_A) == tool_element("a")
        assert await store.get(cached.cache_key) is None
        assert inner.inner.provides == 0

    async def test_a_failing_inner_lookup_serves_the_stale_entry(self) -> None:
        """Past its ttl, an entry still answers when the inner lookup fails, as provide() would."""
        now = [1_000.0]
        inner = looking_up("a")
        store = MemoryStore()
        cached = CachedSource(inner, store, ttl=10, clock=lambda: now[0])
        await cached.provide()
        now[0] += 60
        inner.fail_with = SourceUnavailableError("down")
        assert await cached.lookup(TOOL_A) == tool_element("a")
        no_stale = CachedSource(inner, MemoryStore(), serve_stale_on_error=False)
        with pytest.raises(SourceUnavailableError):
            await no_stale.lookup(TOOL_A)

    async def test_kinds_come_from_the_entry_once_read(self) -> None:
        """After prefetch_kinds() (or any read), kinds() never asks the inner source."""
        writer = CountingSource(tools("a"), ElementKind.TOOL | ElementKind.PROMPT)
        store = MemoryStore()
        await CachedSource(writer, store).provide()
        reader = CountingSource(tools("a"), ElementKind.TOOL | ElementKind.PROMPT)
        cached = CachedSource(reader, store)
        await prefetch_kinds(cached)
        assert cached.kinds() == ElementKind.TOOL | ElementKind.PROMPT
        assert (reader.kinds_calls, reader.provides) == (0, 0)

    async def test_without_an_entry_kinds_ask_the_inner_source(self) -> None:
        """No entry (or a store that fails): the inner source answers kinds() as before."""
        inner = CountingSource(tools("a"))
        cached = CachedSource(inner, BrokenStore())
        await cached.prefetch_kinds()
        assert cached.kinds() == ElementKind.TOOL
        assert inner.kinds_calls == 1

    async def test_wrappers_pass_prefetch_on(self) -> None:
        """A CachedSource inside a PrefixedSource gets its read-ahead too."""
        store = MemoryStore()
        await CachedSource(CountingSource(tools("a")), store).provide()
        reader = CountingSource(tools("a"))
        wrapped = PrefixedSource(IsolatedSource(CachedSource(reader, store)), "p")
        await prefetch_kinds(wrapped)
        assert wrapped.kinds() == ElementKind.TOOL
        assert reader.kinds_calls == 0
        await prefetch_kinds(StaticSource(tools("a")))  # nothing to read ahead: a no-op


class _Forwarding:
    """A wrapper that forwards unknown attributes to its inner object (``lookup`` too, if any)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def kinds(self) -> ElementKind:
        """The inner source's kinds."""
        return cast("CountingSource", self._inner).kinds()

    async def provide(self) -> ElementCollection:
        """The inner source's collection."""
        return await cast("CountingSource", self._inner).provide()


class _NoLookup(_Forwarding):
    """A source whose class says it has no ``lookup``."""

    lookup = None


def _with_instance_lookup() -> _Forwarding:
    """A source whose ``lookup`` is set on the instance, not its class."""
    inner = looking_up("a")
    holder = _Forwarding(inner.inner)
    holder.__dict__["lookup"] = inner.lookup
    return holder


# shape → (the source, whether its class offers lookup)
_SHAPES: dict[str, tuple[Callable[[], ElementSource], bool]] = {
    "class method": (lambda: looking_up("a"), True),
    "no lookup": (lambda: CountingSource(tools("a")), False),
    "lookup = None": (lambda: _NoLookup(CountingSource(tools("a"))), False),
    "instance attribute": (_with_instance_lookup, False),
    "forwarding to a lookup": (lambda: _Forwarding(looking_up("a")), False),
    "forwarding to none": (lambda: _Forwarding(CountingSource(tools("a"))), False),
    "static source": (lambda: StaticSource(tools("a")), True),
    "prefixed": (lambda: PrefixedSource(CountingSource(tools("a")), "p"), True),
}


@pytest.mark.parametrize("shape", list(_SHAPES))
async def test_lookup_of_is_the_class_offering_it_and_lookup_in_agrees(shape: str) -> None:
    """``lookup_of`` finds a lookup where the class offers one; the answer is the same either way."""
    make, offered = _SHAPES[shape]
    source = make()
    assert (lookup_of(source) is not None) is offered
    if offered:
        assert isinstance(source, ElementLookup)
    expected = (await make().provide()).get(TOOL_A)
    assert await lookup_in(source, TOOL_A) == expected
