"""Property: a derived input schema accepts exactly the arguments the function's types accept.

Signatures are generated within the supported type set (int, float, str, bool, string Literals,
a string enum, Optional[...], list[...], with and without defaults), functions are built from
them, and candidate argument objects (valid and invalid) are checked two ways that must agree:

- the JSON Schema verdict on the *published* schema (jsonschema, Draft 2020-12);
- an independent oracle: a pydantic model built here from the same parameter specs, validating
  the candidate as JSON in strict mode (no ``"3"`` → 3 coercion, no extra keys).

Where both accept, calling the tool through the Invoker must hand the function exactly the
oracle's values; where they reject, the Invoker must raise ArgumentValidationError.

Two places where JSON and Python equality differ are kept out of the generated values and pinned
by examples instead: an integral float (``3.0`` is a JSON integer; pydantic's strict mode wants
an int) and booleans against integer literals (pydantic's strict mode reads ``true`` as ``1``).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, Literal, Optional

import anyio
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_core.elements._json import thaw
from mcp_core.errors import ArgumentValidationError
from mcp_core.handlers import Invoker, tool_from_function
from mcp_core.handlers._functions import DirectResultCheck, _direct_output_schema
from mcp_core.handlers.testing import RecordingGateway


class Shade(enum.Enum):
    """The string enum of the generated signatures."""

    LIGHT = "light"
    DARK = "dark"


EMPTY: Any = object()
NAMES = ("a", "b", "count", "json", "model_config", "_private", "uri", "schema", "value", "text")


@dataclass(frozen=True)
class Spec:
    """One generated parameter: its name, annotation, a strategy for valid values, its default."""

    name: str
    annotation: Any
    values: st.SearchStrategy[Any]
    default: Any = EMPTY


def _no_integral(value: float) -> bool:
    return not value.is_integer()


INTS = st.integers(-(2**53), 2**53)
FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(_no_integral)
TEXT = st.text(max_size=6)


@st.composite
def base_types(draw: st.DrawFn) -> tuple[Any, st.SearchStrategy[Any]]:
    """A scalar annotation and a strategy for JSON values it accepts."""
    choice = draw(st.sampled_from(["int", "float", "str", "bool", "literal", "enum"]))
    if choice == "int":
        return int, INTS
    if choice == "float":
        return float, st.one_of(INTS, FLOATS)
    if choice == "str":
        return str, TEXT
    if choice == "bool":
        return bool, st.booleans()
    if choice == "enum":
        return Shade, st.sampled_from([member.value for member in Shade])
    members = tuple(
        draw(st.lists(st.sampled_from(["x", "y", "zz", "0"]), min_size=1, max_size=3, unique=True))
    )
    return Literal[members], st.sampled_from(members)


@st.composite
def specs(draw: st.DrawFn) -> list[Spec]:
    """A signature: unique names, each with a type from the supported set and maybe a default."""
    names = draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True))
    result = []
    for name in names:
        annotation, values = draw(base_types())
        wrapper = draw(st.sampled_from(["plain", "optional", "list"]))
        if wrapper == "optional":
            annotation, values = Optional[annotation], st.one_of(st.none(), values)  # noqa: UP045 -- Optional is part of the supported set under test
        elif wrapper == "list":
            annotation, values = list[annotation], st.lists(values, max_size=3)  # type: ignore[valid-type]  # built at runtime
        default = draw(st.one_of(st.just(EMPTY), values)) if draw(st.booleans()) else EMPTY
        result.append(Spec(name, annotation, values, default))
    return result


ANY_JSON = st.one_of(
    st.none(),
    st.booleans(),
    INTS,
    FLOATS,
    TEXT,
    st.sampled_from(["light", "x", "3", "true"]),
    st.lists(st.one_of(INTS, TEXT, st.booleans(), st.none()), max_size=3),
    st.dictionaries(TEXT, INTS, max_size=2),
)


@st.composite
def candidates(draw: st.DrawFn, params: list[Spec]) -> dict[str, Any]:
    """An argument object: each parameter omitted, valid, or any JSON value; maybe an extra key."""
    arguments: dict[str, Any] = {}
    for spec in params:
        how = draw(st.sampled_from(["omit", "valid", "valid", "any"]))
        if how == "valid":
            arguments[spec.name] = draw(spec.values)
        elif how == "any":
            arguments[spec.name] = draw(ANY_JSON)
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.sampled_from(["extra", "A", "model_fields"]))] = draw(ANY_JSON)
    return arguments


def build_function(params: list[Spec], sink: list[dict[str, Any]]) -> Any:
    """A real function with the generated signature that appends what it received to ``sink``."""
    namespace: dict[str, Any] = {"sink": sink}
    parts = []
    for index, spec in enumerate(params):
        namespace[f"T{index}"] = spec.annotation
        namespace[f"D{index}"] = spec.default
        parts.append(f"{spec.name}: T{index}" + ("" if spec.default is EMPTY else f" = D{index}"))
    signature = f"*, {', '.join(parts)}" if parts else ""
    names = ", ".join(f"{spec.name!r}: {spec.name}" for spec in params)
    exec(f"def generated({signature}) -> None:\n    sink.append({{{names}}})\n", namespace)  # noqa: S102 -- the function under test
    return namespace["generated"]


def oracle(params: list[Spec]) -> type[pydantic.BaseModel]:
    """The independent model: same types and defaults, strict JSON validation, no extra keys."""
    fields: dict[str, Any] = {
        f"f{index}": (
            spec.annotation,
            pydantic.Field(... if spec.default is EMPTY else spec.default, alias=spec.name),
        )
        for index, spec in enumerate(params)
    }
    return pydantic.create_model(
        "Oracle", __config__=pydantic.ConfigDict(extra="forbid", strict=True), **fields
    )


class TestDerivedSchemaAgreement:
    """The published schema and the function's types agree on every candidate."""

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def test_schema_verdict_equals_type_verdict(self, data: st.DataObject) -> None:
        """Jsonschema and the strict pydantic oracle accept the same candidates; calls agree too."""
        params = data.draw(specs())
        sink: list[dict[str, Any]] = []
        element = tool_from_function(build_function(params, sink))
        schema = thaw(element.definition.input_schema)  # type: ignore[union-attr]  # a tool
        validator = Draft202012Validator(schema)
        model = oracle(params)
        invoker, gateway = Invoker(), RecordingGateway()
        for _ in range(5):
            arguments = data.draw(candidates(params))
            schema_accepts = validator.is_valid(arguments)
            validated: pydantic.BaseModel | None
            try:
                validated = model.model_validate_json(json.dumps(arguments))
            except pydantic.ValidationError:
                validated = None
            types_accept = validated is not None
            assert schema_accepts == types_accept, (schema, arguments)
            sink.clear()
            if validated is not None:
                result = anyio.run(invoker.call_tool, element, arguments, gateway)
                assert "isError" not in result, result
                expected = {spec.name: getattr(validated, f"f{i}") for i, spec in enumerate(params)}
                assert sink == [expected]
                assert [type(v) for v in sink[0].values()] == [type(v) for v in expected.values()]
            else:
                with pytest.raises(ArgumentValidationError):
                    anyio.run(invoker.call_tool, element, arguments, gateway)
                assert sink == []


class TestDirectResultCheck:
    """The jsonschema-free check of scalar results agrees with the wrapped output schema."""

    @given(
        st.sampled_from([int, float, bool]),
        st.one_of(ANY_JSON, st.floats(allow_nan=False, allow_infinity=False)),
    )
    def test_same_verdict_as_jsonschema(self, returns: type, value: object) -> None:
        """For every JSON value, the direct check and jsonschema accept alike."""
        schema = _direct_output_schema(returns)
        check = DirectResultCheck(returns)
        validator = Draft202012Validator(thaw(schema))
        for instance in ({"result": value}, {}, {"result": value, "extra": 1}):
            assert (check.problems(instance) == []) == validator.is_valid(instance), instance


class TestJsonNumberEdgeCases:
    """The two JSON/Python equality differences the property leaves out, pinned by example."""

    async def test_integral_float_is_an_integer(self) -> None:
        """``3.0`` is a JSON integer: accepted, and the function receives the int 3."""
        received: list[object] = []

        def f(n: int) -> None:
            received.append(n)

        await Invoker().call_tool(tool_from_function(f), {"n": 3.0}, RecordingGateway())
        assert received == [3]
        assert type(received[0]) is int

    @pytest.mark.parametrize("value", [True, 1.5])
    async def test_booleans_and_fractions_are_not_integers(self, value: object) -> None:
        """JSON keeps booleans and integers apart, so ``true`` is no ``1`` for a Literal[1]."""

        def f(n: Literal[1, 2]) -> None:
            pass

        with pytest.raises(ArgumentValidationError):
            await Invoker().call_tool(tool_from_function(f), {"n": value}, RecordingGateway())
