"""StaticSource: a fixed collection."""

from __future__ import annotations

import pytest

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import StaticSource
from tests.strategies import prompt_element, tool_element


class TestStaticSource:
    """StaticSource provides exactly the collection it was given."""

    async def test_provides_the_same_collection(self) -> None:
        """provide() returns the very collection given, every time."""
        collection = ElementCollection([tool_element("a"), prompt_element("p")])
        source = StaticSource(collection)
        assert await source.provide() is collection
        assert await source.provide() is collection
        assert source.collection is collection

    def test_kinds_are_the_collections(self) -> None:
        """kinds() is exactly the kinds present, so it never over-advertises."""
        source = StaticSource(ElementCollection([tool_element("a")]))
        assert source.kinds() == ElementKind.TOOL
        assert StaticSource(ElementCollection()).kinds() == ElementKind.NONE

    def test_rejects_what_is_not_a_collection(self) -> None:
        """A list of elements is refused with a hint to build an ElementCollection."""
        with pytest.raises(TypeError, match=r"ElementCollection\(elements\)"):
            StaticSource([tool_element("a")])  # type: ignore[arg-type]  # the mistake under test

    def test_cache_inputs_follow_the_content(self) -> None:
        """cache_inputs() is the content hash: equal content, equal inputs; else different."""
        one = StaticSource(ElementCollection([tool_element("a")]))
        same = StaticSource(ElementCollection([tool_element("a")]))
        other = StaticSource(ElementCollection([tool_element("b")]))
        assert one.cache_inputs() == same.cache_inputs() != other.cache_inputs()

    def test_repr_shows_the_collection(self) -> None:
        """The repr names the class and summarises the collection."""
        source = StaticSource(ElementCollection([tool_element("a")]))
        assert repr(source) == "StaticSource(ElementCollection(<1 elements, kinds=tool>))"
