"""The public strategies generate valid, serializable, resolvable elements."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from mcp_conformance import strategies as mst
from mcp_core.elements import Element, ElementCollection, ElementKind, ResourceTemplate, UriTemplate
from mcp_core.handlers import Invoker

_settings = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class TestStrategies:
    """What the kit generates is what it promises."""

    @_settings
    @given(mst.collections())
    def test_collections_round_trip_through_json(self, collection: ElementCollection) -> None:
        """Every generated collection is serializable and survives to_json/from_json."""
        assert collection.is_serializable
        assert ElementCollection.from_json(collection.to_json()) == collection

    @_settings
    @given(mst.elements())
    def test_handlers_resolve_to_the_right_kind(self, element: Element) -> None:
        """The invoker resolves every handler and completion reference and finds no problem."""
        assert Invoker().check(element) == []

    @_settings
    @given(mst.uri_templates())
    def test_templates_match_what_they_expand(self, text: str) -> None:
        """A generated template parses, and reads back the values it expands."""
        template = UriTemplate.parse(text)
        values = {name: f"v{index}" for index, name in enumerate(template.variables)}
        assert template.match(template.expand(values)) == values

    @_settings
    @given(mst.collections(ElementKind.TOOL | ElementKind.PROMPT))
    def test_collections_keep_to_the_kinds_asked_for(self, collection: ElementCollection) -> None:
        """Only tools and prompts when only they are asked for."""
        assert collection.kinds in ElementKind.TOOL | ElementKind.PROMPT

    @_settings
    @given(mst.resource_templates())
    def test_resource_templates_are_matchable(self, definition: ResourceTemplate) -> None:
        """Every generated template has at least one variable."""
        assert definition.template.variables
