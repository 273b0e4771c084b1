"""Admission: what an element must satisfy to enter a catalogue, checked once per element."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from typing import Any

import pytest

from mcp_core.elements import Element, Prompt, PromptArgument, Tool
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import Admission, ElementLimits, tool_from_function
from mcp_core.handlers._admission import DEFAULT_LIMITS


def tool(schema: dict[str, Any], *, name: str = "t", **fields: Any) -> Element:
    """A tool element with ``schema`` as its input schema."""
    return Element(definition=Tool(name=name, input_schema=schema, **fields), handler=lambda: 1)


def deep(levels: int) -> dict[str, Any]:
    """An input schema nesting ``levels`` properties (2 JSON levels each) under the root."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return {"type": "object", "properties": {"a": schema}}


class TestSchemas:
    """Schemas are checked against their dialect's meta-schema, patterns must compile."""

    @pytest.mark.parametrize(
        ("schema", "where"),
        [
            ({"type": "object", "properties": {"a": {"type": 12}}}, "$.properties.a.type"),
            ({"type": "object", "required": "a"}, "$.required"),
            (
                {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}},
                "$.properties.a.pattern",
            ),
            ({"type": "object", "patternProperties": {"([": {}}}, "$.patternProperties"),
        ],
    )
    def test_invalid_schemas_are_refused_naming_where(
        self, schema: dict[str, Any], where: str
    ) -> None:
        """The problem names the field and the JSONPath inside the schema."""
        problems = Admission().problems(tool(schema))
        assert len(problems) == 1
        assert problems[0].startswith(f"input_schema is not a valid JSON Schema at {where}")

    def test_output_schemas_too(self) -> None:
        """An output schema is checked like an input schema."""
        element = tool({"type": "object"}, output_schema={"type": "object", "minProperties": -1})
        [problem] = Admission().problems(element)
        assert problem.startswith("output_schema is not a valid JSON Schema at $.minProperties")

    def test_the_dialect_is_the_schemas_own(self) -> None:
        """A draft-07 schema is checked as draft-07 (its boolean exclusiveMinimum is invalid there)."""
        draft7 = "http://json-schema.org/draft-07/schema#"
        good = {"$schema": draft7, "type": "object", "properties": {"n": {"exclusiveMinimum": 0}}}
        bad = {"$schema": draft7, "type": "object", "properties": {"n": {"exclusiveMinimum": True}}}
        admission = Admission()
        assert admission.problems(tool(good)) == []
        assert admission.problems(tool(bad, name="u"))

    def test_one_and_true_are_not_confused_by_the_cache(self) -> None:
        """Equal-comparing schemas (1 == True) are checked separately."""
        admission = Admission()
        valid = {"type": "object", "minProperties": 1}
        invalid = {"type": "object", "minProperties": True}
        assert admission.problems(tool(valid)) == []
        assert admission.problems(tool(invalid, name="u"))

    def test_derived_schemas_pass(self) -> None:
        """What derivation writes is always admitted."""

        def f(a: int, b: list[str] | None = None) -> dict[str, int]:
            return {}

        assert Admission().problems(tool_from_function(f)) == []


class TestLimits:
    """Nesting depth, size and text are bounded; the bounds are configurable."""

    def test_depth_at_the_limit_passes_one_more_is_refused(self) -> None:
        """The definition object is level 1; its schema may nest max_depth - 1 levels."""
        limits = ElementLimits(max_depth=10)
        admission = Admission(limits)
        # root object (2) + 2 per property level: deep(3) nests 2 + 2*3 + 1 = 9 under the definition
        assert admission.problems(tool(deep(3))) == []
        [problem] = admission.problems(tool(deep(4), name="u"))
        assert problem.startswith("its definition nests 12 levels of JSON objects and arrays")
        assert "ElementLimits.max_depth" in problem

    def test_the_default_refuses_a_600_deep_schema_without_recursing(self) -> None:
        """The issue's ~600-level schema is refused, and checking it does not blow the stack."""
        [problem] = Admission().problems(tool(deep(300)))
        assert f"more than the limit of {DEFAULT_LIMITS.max_depth}" in problem

    def test_size(self) -> None:
        """A definition larger than max_bytes is refused with its size."""
        admission = Admission(ElementLimits(max_bytes=1000))
        assert admission.problems(tool({"type": "object"}, description="x" * 500)) == []
        [problem] = admission.problems(tool({"type": "object"}, name="u", description="x" * 2000))
        assert problem.startswith("its definition takes about 20")
        assert "more than the limit of 1000" in problem

    def test_lone_surrogates_anywhere(self) -> None:
        """A lone surrogate in a description or a prompt argument cannot be sent."""
        admission = Admission()
        [problem] = admission.problems(tool({"type": "object"}, description="a\ud800"))
        assert problem == (
            "its definition cannot be sent: description: a string holds a lone surrogate, "
            "which has no UTF-8 encoding"
        )
        prompt = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="x", description="\udfff")]),
            handler=lambda x: x,
        )
        assert admission.problems(prompt)

    @pytest.mark.parametrize("field", ["max_depth", "max_bytes"])
    @pytest.mark.parametrize("value", [0, -1, 1.5, True, "64"])
    def test_limits_must_be_positive_ints(self, field: str, value: object) -> None:
        """Nonsense limits are refused when configured."""
        with pytest.raises(ValueError, match=f"ElementLimits.{field} must be a positive int"):
            ElementLimits(**{field: value})  # type: ignore[arg-type]  # the misuse under test

    def test_check_raises_naming_the_element(self) -> None:
        """check() raises InvalidElementError with the ref and every problem."""
        with pytest.raises(InvalidElementError, match=r"^tool 't': input_schema") as caught:
            Admission().check(tool({"type": "object", "required": "a"}))
        assert str(caught.value.ref) == "tool 't'"

    def test_verdicts_are_kept_per_definition(self) -> None:
        """The second check of the same definition costs a lookup (same answer)."""
        admission = Admission()
        element = tool(deep(40))
        first = admission.problems(element)
        assert admission.problems(element) == first
        assert first


class TestVerdictsLiveOnTheDefinition:
    """A verdict is kept on the definition itself: no table beside a catalogue holds it alive."""

    def test_checking_adds_no_reference_to_the_definition(self) -> None:
        """After admitting (or refusing) a definition, the admission holds no reference to it."""
        admission = Admission()
        for element in (tool({"type": "object"}), tool({"type": "object", "required": "a"})):
            definition = element.definition
            before = sys.getrefcount(definition)
            with contextlib.suppress(InvalidElementError):
                admission.check(element)
            assert admission.problems(element) == admission.problems(element)
            assert sys.getrefcount(definition) == before

    def test_a_verdict_is_reused_under_the_same_limits_only(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Another admission with the same limits object reuses it; other limits decide anew."""
        decided: list[object] = []
        decide = Admission._decide  # counting the decisions under test

        def counting(self: Admission, definition: Any) -> tuple[str, ...]:
            decided.append(definition)
            return decide(self, definition)

        monkeypatch.setattr(Admission, "_decide", counting)
        element = tool(deep(10))
        Admission().check(element)
        Admission(DEFAULT_LIMITS).check(element)
        assert decided == [element.definition]
        with pytest.raises(InvalidElementError, match="nests"):
            Admission(ElementLimits(max_depth=8)).check(element)
        assert len(decided) == 2
        Admission().check(element)  # the first limits' verdict was replaced: decided again
        assert len(decided) == 3

    def test_a_refusal_is_remembered_with_its_message(self) -> None:
        """The second check of a refused definition says the same, without deciding again."""
        admission = Admission()
        element = tool({"type": "object", "required": "a"})
        first = admission.problems(element)
        assert first
        assert admission.problems(element) == first
        with pytest.raises(InvalidElementError, match="required"):
            admission.check(element)

    def test_a_copy_with_another_field_is_judged_on_its_own(self) -> None:
        """``dataclasses.replace`` makes a definition without a verdict: it is decided itself."""
        admission = Admission(ElementLimits(max_bytes=200))
        element = tool({"type": "object"})
        admission.check(element)
        longer = dataclasses.replace(element.definition, description="x" * 400)
        with pytest.raises(InvalidElementError, match="bytes"):
            admission.check(Element(definition=longer, handler=lambda: 1))
