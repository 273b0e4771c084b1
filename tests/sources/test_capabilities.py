"""The capability helpers follow ``inner``: a wrapper writes only what it changes.

A third-party wrapper that holds ``inner`` and writes nothing but ``kinds()`` and ``provide()``
still passes on its inner source's diagnostics, handler targets, read-ahead and identity; a
wrapper that has its own answer is asked first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import (
    DiagnosticsReport,
    ElementLookup,
    ElementSource,
    FilteredSource,
    IsolatedSource,
    PrefixedSource,
    SourceDiagnostic,
    StaticSource,
    WrappingSource,
    diagnostics_of,
    handler_targets_of,
    lookup_in,
    prefetch_kinds,
    source_chain,
    source_identity,
)
from tests.strategies import CountingSource, tool_element

GOOD = ElementCollection([tool_element("a"), tool_element("b")])


class Passing:
    """A third-party wrapper: ``inner``, ``kinds()`` and ``provide()``, nothing else."""

    def __init__(self, inner: ElementSource) -> None:
        self._inner = inner

    @property
    def inner(self) -> ElementSource:
        return self._inner

    def kinds(self) -> ElementKind:
        return self._inner.kinds()

    async def provide(self) -> ElementCollection:
        return await self._inner.provide()


class Prefetching:
    """A source that reads its kinds ahead, counting the read-aheads."""

    def __init__(self) -> None:
        self.prefetched = 0

    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        return GOOD

    async def prefetch_kinds(self) -> None:
        self.prefetched += 1


class Repeating(Passing):
    """An older-style wrapper whose diagnostics() repeats its inner source's."""

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        own = SourceDiagnostic(source="Repeating", kind="stale", message="old", at=1.0)
        return (own, *diagnostics_of(self._inner))


class TestFollowingInner:
    """Each helper asks a source, then the sources it wraps."""

    def test_a_bare_wrapper_is_a_wrapping_source_and_nothing_more(self) -> None:
        """``inner`` alone makes a WrappingSource; no capability is claimed by accident."""
        wrapper = Passing(StaticSource(GOOD))
        assert isinstance(wrapper, WrappingSource)
        assert not isinstance(wrapper, ElementLookup | DiagnosticsReport)
        assert list(source_chain(wrapper)) == [wrapper, wrapper.inner]

    def test_handler_targets_pass_through_a_wrapper_that_writes_none(self) -> None:
        """The inner source's targets, through any number of wrappers that keep handlers."""
        static = StaticSource(GOOD)
        wrapped = Passing(FilteredSource(PrefixedSource(static, "p"), lambda e: True))
        assert handler_targets_of(wrapped) == handler_targets_of(static) != None  # noqa: E711
        assert handler_targets_of(CountingSource(GOOD)) is None

    def test_handler_targets_must_be_a_set_of_strings(self) -> None:
        """A wrong answer is a TypeError naming the source's type."""

        class Wrong(Passing):
            def handler_targets(self) -> object:
                return ["not", "a", "set"]

        with pytest.raises(TypeError, match=r"Wrong\.handler_targets\(\) must return a set"):
            handler_targets_of(Passing(Wrong(StaticSource(GOOD))))

    async def test_diagnostics_are_collected_along_the_chain(self) -> None:
        """Outermost first, each wrapper's own, then its inner source's; none twice."""
        failing = CountingSource(GOOD)
        failing.fail_with = RuntimeError("down")
        isolated = IsolatedSource(failing)
        outer = Repeating(Passing(isolated))
        await outer.provide()
        found = diagnostics_of(outer)
        assert [d.kind for d in found] == ["stale", "failed"]
        assert found[1] == isolated.diagnostics()[0]

    async def test_prefetch_reaches_the_inner_source(self) -> None:
        """A wrapper without prefetch_kinds() lets its inner source read ahead, once."""
        inner = Prefetching()
        await prefetch_kinds(FilteredSource(Passing(inner), lambda e: True))
        await prefetch_kinds(CountingSource(GOOD))  # nothing to read ahead: no error
        assert inner.prefetched == 1

    def test_identity_nests_the_inner_sources(self) -> None:
        """A wrapper's own settings, then its inner source's identity, all the way down."""
        static = StaticSource(GOOD)
        identity = source_identity(PrefixedSource(Passing(static), "p"))
        assert identity["inputs"] == {"prefix": "p", "separator": "_"}
        passing = identity["inner"]
        assert isinstance(passing, Mapping)
        assert passing["inputs"] is None
        assert passing["inner"] == source_identity(static)
        assert source_identity(PrefixedSource(static, "q")) != source_identity(
            PrefixedSource(static, "p")
        )

    async def test_lookup_without_the_capability_provides(self) -> None:
        """lookup_in asks lookup() where there is one, else provides (it never follows inner)."""
        counting = CountingSource(GOOD)
        wrapper = Passing(counting)
        assert await lookup_in(wrapper, tool_element("a").ref) == tool_element("a")
        assert counting.provides == 1

    def test_a_cycle_of_wrappers_is_walked_once(self) -> None:
        """A wrapper that (wrongly) wraps itself ends the walk instead of looping."""

        class Loop(Passing):
            @property
            def inner(self) -> ElementSource:
                return self

        loop = Loop(StaticSource(GOOD))
        assert list(source_chain(loop)) == [loop]
        assert diagnostics_of(loop) == ()
