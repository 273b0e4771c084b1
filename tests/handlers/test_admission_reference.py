"""Admission gives the problems a straightforward reference gives, for generated definitions.

The reference below measures a definition by recursion over its JSON form as the rules in
``mcp_core.handlers._admission`` state them (depth, approximate size, lone surrogates, then the
meta-schema and ``$ref`` checks of a tool's schemas when it is not too deep), with no caches
and no fast path. Definitions are generated to hit every rule and its boundaries, sharing
document objects between them as derived definitions do, and are checked through one
``Admission`` (so its caches answer for the later ones) with small caches that start over.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core.elements import (
    Definition,
    Element,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from mcp_core.elements._json import thaw
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import Admission, ElementLimits
from mcp_core.handlers._jsonschema import reference_problems, schema_problems

_SURROGATE = "a string holds a lone surrogate, which has no UTF-8 encoding"

# -- the reference ----------------------------------------------------------------------------


def _measure(value: object) -> tuple[int, int, bool]:
    """Depth, approximate JSON size, and whether a string in ``value`` has a lone surrogate."""
    if isinstance(value, str):
        encoded = value.encode("utf-8", "replace")
        return 0, len(encoded) + 2, encoded != value.encode("utf-8", "surrogatepass")
    if isinstance(value, Mapping):
        members = [part for pair in value.items() for part in pair]
    elif isinstance(value, list | tuple):
        members = list(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        members = [getattr(value, f.name) for f in _fields(value)]
    else:
        return 0, len(str(value)), False
    inner = [_measure(member) for member in members if member is not None]
    depth = 1 + max((d for d, _, _ in inner), default=0)
    return depth, 2 + len(members) + sum(s for _, s, _ in inner), any(b for _, _, b in inner)


def _fields(value: object) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(value) if not f.name.startswith("_")]  # type: ignore[arg-type]  # a dataclass instance


def _schema_problems(schema: object) -> list[str]:
    # Problems come in the order of the schema's canonical form (keys sorted).
    plain = json.loads(json.dumps(thaw(schema), sort_keys=True))
    found = schema_problems(plain) + reference_problems(plain)
    return [f"{where}: {message}" for where, message in found]


def measure(definition: Definition) -> tuple[int, int, str | None]:
    """The nesting depth, approximate JSON size and first text problem of ``definition``."""
    depth, size, problem = 0, 2, None
    for f in _fields(definition):
        value = getattr(definition, f.name)
        if value is None:
            continue
        d, s, lone = _measure(value)
        depth, size = max(depth, d), size + len(f.name) + 4 + s
        if lone and problem is None:
            problem = f"{f.name}: {_SURROGATE}"
    return depth + 1, size, problem


def reference(definition: Definition, limits: ElementLimits) -> list[str]:
    """The problems of ``definition`` under ``limits``, computed the plain way."""
    depth, size, problem = measure(definition)
    found = []
    if problem is not None:
        found.append(f"its definition cannot be sent: {problem}")
    if depth > limits.max_depth:
        found.append(
            f"its definition nests {depth} levels of JSON objects and arrays, more than the "
            f"limit of {limits.max_depth} (clients cannot parse documents nested that "
            "deeply); flatten it, e.g. with $defs and $ref, or raise ElementLimits.max_depth"
        )
    if size > limits.max_bytes:
        found.append(
            f"its definition takes about {size} bytes of JSON, more than the limit of "
            f"{limits.max_bytes}; shrink it or raise ElementLimits.max_bytes"
        )
    if depth <= limits.max_depth and isinstance(definition, Tool):
        for name in ("input_schema", "output_schema"):
            schema = getattr(definition, name)
            if schema is not None:
                found.extend(
                    f"{name} is not a valid JSON Schema at {where}"
                    for where in _schema_problems(schema)[:3]
                )
    return found


# -- generated definitions --------------------------------------------------------------------

_odd = st.sampled_from(["\ud800", "\udfff", "é", "€", "😀", "\x00"])
texts = st.one_of(
    st.text(max_size=12),
    st.lists(st.one_of(st.characters(), _odd), max_size=8).map("".join),
    st.integers(0, 3000).map(lambda n: "x" * n),
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=12,
)


def _nest(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = {"type": "object", "properties": {"a": value}}
    return value


subschemas = st.recursive(
    st.sampled_from(
        [
            {"type": "string"},
            {"type": "integer", "minimum": 0},
            {"type": 12},  # invalid
            {"type": "string", "pattern": "(["},  # does not compile
            {"type": "string", "pattern": "^a+$"},
            {"$ref": "#"},  # loops
            {"$ref": "#/$defs/a"},
            {"$ref": "#/$defs/missing"},
            {"$ref": "https://example.com/other"},
            {"minProperties": True},
            {"minProperties": 1},
            {},
        ]
    ),
    lambda inner: (
        st.builds(
            lambda props, levels: _nest({"type": "object", "properties": props}, levels),
            st.dictionaries(texts, inner, max_size=3),
            st.integers(0, 40),
        )
        | st.builds(lambda items: {"type": "array", "items": items}, inner)
        | st.builds(lambda options: {"anyOf": options}, st.lists(inner, min_size=1, max_size=3))
    ),
    max_leaves=8,
)
schemas = st.builds(
    lambda props, extra, defs, description: {
        "type": "object",
        "properties": props,
        **extra,
        **({"$defs": {"a": defs}} if defs is not None else {}),
        **({"description": description} if description is not None else {}),
    },
    st.dictionaries(texts, subschemas, max_size=3),
    st.sampled_from(
        [{}, {"required": "a"}, {"required": ["a"]}, {"minProperties": -1}, {"$ref": "#"}]
    ),
    st.none() | subschemas,
    st.none() | texts,
)
names = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
optional_texts = st.none() | texts
icons = st.none() | st.lists(
    st.builds(Icon, src=texts.filter(bool), sizes=st.none() | st.lists(texts, max_size=2)),
    max_size=2,
)


@st.composite
def catalogues(draw: st.DrawFn) -> list[Definition]:
    """Definitions of every kind, tools sharing schema and meta objects as derived ones do."""
    shared_schemas = [
        Tool(name="s", input_schema=draw(schemas)).input_schema
        for _ in range(draw(st.integers(1, 3)))
    ]
    shared_metas = [draw(st.dictionaries(texts, json_values, max_size=3)) for _ in range(2)]
    frozen_metas = [Prompt(name="m", meta=meta).meta for meta in shared_metas]
    documents = st.sampled_from(shared_schemas) | schemas
    metas = st.none() | st.sampled_from(frozen_metas) | st.dictionaries(texts, json_values)
    tools = st.builds(
        Tool,
        name=names,
        input_schema=documents,
        title=optional_texts,
        description=optional_texts,
        output_schema=st.none() | documents,
        annotations=st.none() | st.builds(ToolAnnotations, title=optional_texts),
        execution=st.none() | st.builds(ToolExecution, task_support=st.just("optional")),
        icons=icons,
        meta=metas,
    )
    prompts = st.builds(
        Prompt,
        name=names,
        title=optional_texts,
        description=optional_texts,
        arguments=st.none()
        | st.lists(
            st.builds(PromptArgument, name=names, description=optional_texts),
            max_size=3,
            unique_by=lambda argument: argument.name,
        ),
        icons=icons,
        meta=metas,
    )
    resources = st.builds(
        Resource,
        uri=texts.map(lambda text: f"file:///{text}"),
        name=names,
        description=optional_texts,
        size=st.none() | st.integers(0, 10**12),
        meta=metas,
    )
    templates = st.builds(
        ResourceTemplate,
        uri_template=names.map(lambda name: f"app://{name}/{{id}}"),
        name=names,
        description=optional_texts,
        meta=metas,
    )
    kinds = st.one_of(tools, tools, prompts, resources, templates)
    return draw(st.lists(kinds, min_size=1, max_size=8))


limits = st.builds(
    ElementLimits, max_depth=st.integers(1, 64) | st.just(64), max_bytes=st.integers(1, 20_000)
)


def _agree(definitions: list[Definition], limits: ElementLimits, cache_size: int) -> None:
    admission = Admission(limits, cache_size=cache_size)
    for definition in [*definitions, *reversed(definitions)]:
        expected = reference(definition, limits)
        element = Element(definition=definition, handler=lambda: None)
        assert admission.problems(element) == expected
        assert _refusal(admission, element) == _message(definition, expected)
    # check() on definitions it has not seen (no verdict kept from problems()) says the same.
    fresh = Admission(limits, cache_size=cache_size)
    for definition in definitions:
        element = Element(definition=definition, handler=lambda: None)
        assert _refusal(fresh, element) == _message(definition, reference(definition, limits))


def _refusal(admission: Admission, element: Element) -> str | None:
    try:
        admission.check(element)
    except InvalidElementError as exc:
        return str(exc)
    return None


def _message(definition: Definition, problems: list[str]) -> str | None:
    return f"{definition.ref}: {'; '.join(problems)}" if problems else None


@given(catalogues(), limits, st.sampled_from([1, 2, 65_536]))
def test_admission_matches_the_reference(
    definitions: list[Definition], limits: ElementLimits, cache_size: int
) -> None:
    """problems() and check() say what the reference says, first time and from the caches."""
    _agree(definitions, limits, cache_size)


@settings(max_examples=300)
@given(catalogues(), st.data())
def test_admission_matches_the_reference_at_the_limits(
    definitions: list[Definition], data: st.DataObject
) -> None:
    """The same with limits one below, at, or one above the measure of one of the definitions."""
    depth, size, _ = measure(data.draw(st.sampled_from(definitions)))
    limits = ElementLimits(
        max_depth=max(1, depth + data.draw(st.integers(-1, 1))),
        max_bytes=max(1, size + data.draw(st.integers(-1, 1))),
    )
    _agree(definitions, limits, data.draw(st.sampled_from([1, 65_536])))
