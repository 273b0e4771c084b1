"""FilteredSource: keeps the elements a predicate accepts."""

from __future__ import annotations

import pytest

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import FilteredSource
from tests.strategies import CountingSource, prompt_element, resource_element, tool_element

COLLECTION = ElementCollection(
    [
        tool_element("public", tags=frozenset({"public"})),
        tool_element("admin"),
        prompt_element("greet"),
        resource_element(),
    ]
)


def is_public_or_prompt(element: Element) -> bool:
    """Keep public tools and every prompt."""
    return "public" in element.tags or element.kind is ElementKind.PROMPT


class TestFilteredSource:
    """FilteredSource provides the accepted subset, in order."""

    async def test_keeps_accepted_elements_in_order(self) -> None:
        """Only elements the predicate accepts remain, in their original order."""
        source = FilteredSource(CountingSource(COLLECTION), is_public_or_prompt)
        assert [e.ref.key for e in await source.provide()] == ["public", "greet"]

    async def test_keeping_everything_returns_the_inner_collection(self) -> None:
        """A predicate that keeps everything passes the inner collection through."""
        source = FilteredSource(CountingSource(COLLECTION), lambda element: True)
        assert await source.provide() is COLLECTION

    def test_kinds_may_over_advertise_without_a_declaration(self) -> None:
        """Without kinds=, kinds() is the inner source's (the predicate is not consulted)."""
        source = FilteredSource(CountingSource(COLLECTION), is_public_or_prompt)
        assert source.kinds() == COLLECTION.kinds

    async def test_declared_kinds_narrow_and_are_enforced(self) -> None:
        """kinds= narrows kinds() and drops elements of other kinds even if the predicate keeps them."""
        source = FilteredSource(
            CountingSource(COLLECTION), lambda element: True, kinds=ElementKind.TOOL
        )
        assert source.kinds() == ElementKind.TOOL
        assert [e.ref.key for e in await source.provide()] == ["public", "admin"]

    async def test_predicate_errors_propagate(self) -> None:
        """A raising predicate is a bug and surfaces as such."""

        def broken(element: Element) -> bool:
            raise KeyError(element.ref.key)

        with pytest.raises(KeyError):
            await FilteredSource(CountingSource(COLLECTION), broken).provide()

    def test_predicate_must_be_callable(self) -> None:
        """A non-callable predicate is refused at construction."""
        with pytest.raises(TypeError, match="callable predicate"):
            FilteredSource(CountingSource(COLLECTION), "public")  # type: ignore[arg-type]  # the mistake under test

    def test_repr_names_the_predicate(self) -> None:
        """The repr names the inner source, the predicate and declared kinds."""
        source = FilteredSource(
            CountingSource(COLLECTION), is_public_or_prompt, kinds=ElementKind.TOOL
        )
        assert repr(source) == (
            f"FilteredSource(CountingSource({COLLECTION!r}), {__name__}.is_public_or_prompt, kinds=tool)"
        )
