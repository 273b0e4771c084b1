"""Schema checks: the at-a-glance verdict never disagrees with jsonschema's meta-schema check."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from mcp_core.elements import Tool
from mcp_core.elements._json import thaw
from mcp_core.handlers import tool_from_function
from mcp_core.handlers._jsonschema import _meta_schema_problems, _plainly_valid, schema_problems

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Any JSON value: what a wrong-typed keyword value, an enum or a default may be.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
types = st.sampled_from(
    ["array", "boolean", "integer", "null", "number", "object", "string", "int"]
)
names = st.sampled_from(["a", "b", "c"])


def keyword_values(schemas: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    """A keyword and a value, right-typed for it or not."""
    right = st.one_of(
        st.tuples(st.just("type"), types | st.lists(types, max_size=3)),
        st.tuples(
            st.sampled_from(["properties", "$defs"]), st.dictionaries(names, schemas, max_size=3)
        ),
        st.tuples(st.sampled_from(["items", "additionalProperties", "not", "contains"]), schemas),
        st.tuples(
            st.sampled_from(["anyOf", "oneOf", "allOf", "prefixItems"]),
            st.lists(schemas, max_size=3),
        ),
        st.tuples(st.just("required"), st.lists(names, max_size=3)),
        st.tuples(
            st.sampled_from(
                ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]
            ),
            st.integers(-3, 3) | st.floats(allow_nan=False) | st.booleans(),
        ),
        st.tuples(
            st.sampled_from(["minLength", "maxLength", "minItems", "maxItems", "minProperties"]),
            st.integers(-2, 3) | st.booleans() | st.just(1.0),
        ),
        st.tuples(
            st.sampled_from(["title", "description", "format", "$comment"]), st.text(max_size=3)
        ),
        st.tuples(st.sampled_from(["uniqueItems", "deprecated", "readOnly"]), st.booleans()),
        st.tuples(st.sampled_from(["enum", "examples"]), st.lists(json_values, max_size=3)),
        st.tuples(st.sampled_from(["default", "const"]), json_values),
        st.tuples(
            st.just("$ref"),
            st.sampled_from(["#/$defs/a", "#/$defs/", "#/definitions/a", "a b", "#/$defs/é"]),
        ),
        st.tuples(st.just("pattern"), st.sampled_from(["^a", "(["])),
        st.tuples(
            st.just("$schema"),
            st.sampled_from([DRAFT_2020_12, "http://json-schema.org/draft-07/schema#", "x"]),
        ),
    )
    other = st.tuples(
        st.sampled_from(["x-extra", "foo", "$id", "if", "dependentRequired", "$anchor"]),
        json_values,
    )
    wrong = st.tuples(
        st.sampled_from(["type", "properties", "required", "items", "anyOf", "title"]), json_values
    )
    return right | other | wrong


schemas: st.SearchStrategy[Any] = st.recursive(
    st.booleans()
    | st.just({})
    | st.builds(dict, st.lists(keyword_values(st.just({"type": "string"})), max_size=3)),
    lambda inner: st.builds(dict, st.lists(keyword_values(inner), max_size=4)),
    max_leaves=8,
)


class Point(BaseModel):
    """A model parameter: its schema goes to $defs and is referenced."""

    x: int
    label: str = "p"


def everyday(
    n: int,
    *,
    s: str = "q",
    f: float | None = None,
    items: list[int] | None = None,
    mode: Literal["a", "b"] = "a",
    count: Annotated[int, Field(description="how many", ge=0, le=9)] = 1,
    point: Point | None = None,
    flags: dict[str, bool] | None = None,
) -> dict[str, int]:
    """A tool with everyday parameter types."""
    return {}


class TestAtAGlance:
    """The fast verdict is sound: it calls valid only what jsonschema calls valid."""

    @given(schemas)
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def test_plainly_valid_implies_valid(self, schema: Any) -> None:
        """A schema valid at a glance has no meta-schema problems; the public verdict is jsonschema's."""
        problems = _meta_schema_problems(schema) if isinstance(schema, dict) else []
        if _plainly_valid(schema, root=True):
            assert problems == []
        if isinstance(schema, dict):
            assert schema_problems(schema) == problems

    @pytest.mark.parametrize(
        "schema",
        [
            {"type": "object", "properties": {"a": {"type": 12}}},
            {"type": "object", "required": ["a", "a"]},
            {"type": "object", "properties": {"a": {"minimum": True}}},
            {"type": "object", "anyOf": []},
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}},
        ],
    )
    def test_invalid_schemas_are_not_plain(self, schema: dict[str, Any]) -> None:
        """Each of these goes to jsonschema, which finds the problem."""
        assert not _plainly_valid(schema, root=True)
        assert schema_problems(schema)

    def test_derived_schemas_are_plain(self) -> None:
        """The schemas derived from everyday signatures need no jsonschema to be admitted."""
        definition = tool_from_function(everyday).definition
        assert isinstance(definition, Tool)
        for schema in (definition.input_schema, definition.output_schema):
            assert _plainly_valid(thaw(schema), root=True), thaw(schema)
