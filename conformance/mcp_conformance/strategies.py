"""Hypothesis strategies for valid definitions, elements and collections.

Everything generated is valid by construction and serializable: handlers and completion
providers are :class:`~mcp_core.elements.HandlerRef` names of real handlers of the right kind
(shipped with the kit), so every collection round-trips through ``to_json()``/``from_json()`` and
passes a registry's handler-kind validation. ::

    from hypothesis import given
    from mcp_conformance import strategies as mst

    @given(mst.collections(ElementKind.TOOL | ElementKind.PROMPT))
    def test_my_source_round_trips(collection): ...

- Definitions: :func:`tools`, :func:`resources`, :func:`resource_templates`, :func:`prompts`,
  :func:`definitions`; their pieces :func:`tool_names`, :func:`uris`, :func:`uri_templates`,
  :func:`object_schemas`.
- :func:`elements` of the kinds asked for, :func:`collections`, :func:`element_kinds`.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Mapping
from typing import Any, Final

from hypothesis import strategies as st

from mcp_conformance._handlers import COMPLETION_PATH, HANDLER_PATHS
from mcp_core.elements import (
    SINGLE_KINDS,
    Annotations,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)

__all__ = [
    "collections",
    "definitions",
    "element_kinds",
    "elements",
    "handler_refs",
    "object_schemas",
    "prompts",
    "resource_templates",
    "resources",
    "tool_names",
    "tools",
    "uri_templates",
    "uris",
]

_NAME_CHARS: Final = string.ascii_letters + string.digits + "_.-"
_SEGMENT_CHARS: Final = string.ascii_lowercase + string.digits + "-._~"
_MIME_TYPES: Final = ("text/plain", "application/json", "image/png", "text/markdown; charset=utf-8")
_JSON_TYPES: Final = ("string", "integer", "number", "boolean", "array", "object", "null")

# Text without surrogates (what UTF-8 can carry) or control characters. Not codec="utf-8": that
# derives the character set from the codec, which costs seconds per process.
_texts: Final = st.text(alphabet=st.characters(exclude_categories=["Cs", "Cc"]), max_size=12)
_maybe_texts: Final = st.none() | _texts
_json_scalars: Final = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _texts
)


# Strategies are built once: building them (from_regex, recursive) costs more than drawing.
_names: Final = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=16)
# Built from text, not from_regex: a regex strategy costs several times more per draw.
_identifier: Final = st.builds(
    operator.add,
    st.sampled_from(string.ascii_lowercase),
    st.text(alphabet=string.ascii_lowercase + string.digits + "_", max_size=7),
)


def tool_names() -> st.SearchStrategy[str]:
    """Names valid for tools (and prompts): 1 to 16 letters, digits, ``_``, ``.`` or ``-``."""
    return _names


def _identifiers() -> st.SearchStrategy[str]:
    return _identifier


def handler_refs(kind: ElementKind) -> st.SearchStrategy[HandlerRef]:
    """References to the kit's real handlers of ``kind`` (one single kind)."""
    return st.sampled_from(HANDLER_PATHS[kind]).map(HandlerRef)


_scheme: Final = st.builds(
    operator.add,
    st.sampled_from(string.ascii_lowercase),
    st.text(alphabet=string.ascii_lowercase + string.digits + "+.-", max_size=5),
)
_segment: Final = st.text(alphabet=_SEGMENT_CHARS, min_size=1, max_size=6)


def _schemes() -> st.SearchStrategy[str]:
    return _scheme


def _segments() -> st.SearchStrategy[str]:
    return _segment


@st.composite
def uris(draw: st.DrawFn) -> str:
    """Absolute URIs ``scheme://authority/seg/...`` (every resource URI needs a scheme)."""
    scheme = draw(_schemes())
    path = draw(st.lists(_segments(), max_size=4))
    return f"{scheme}://" + "/".join([draw(_segments()), *path])


@st.composite
def uri_templates(draw: st.DrawFn) -> str:
    """Matchable RFC 6570 templates with at least one expression, e.g. ``app://x/{id}{?q}``.

    Simple expressions sit between ``/`` literals (their values cannot contain ``/``, so every
    URI has one reading); an optional trailing form-style query adds level-3 parameters.
    """
    names = draw(st.lists(_identifiers(), min_size=1, max_size=4, unique=True))
    scheme = draw(_schemes())
    n_path = draw(st.integers(min_value=1 if len(names) == 1 else 0, max_value=len(names)))
    path_vars, query_vars = names[:n_path], names[n_path:]
    parts = [draw(_segments())]
    for name in path_vars:
        if draw(st.booleans()):
            parts.append(draw(_segments()))
        parts.append(f"{{{name}}}")
    template = f"{scheme}://" + "/".join(parts)
    if query_vars:
        template += "{?" + ",".join(query_vars) + "}"
    return template


@st.composite
def _object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(_identifiers(), st.sampled_from(_JSON_TYPES), max_size=4))
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = {name: {"type": kind} for name, kind in properties.items()}
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        if required:
            schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


_object_schema: Final = _object_schemas()


def object_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """JSON Schemas (Draft 2020-12) whose root is ``{"type": "object"}``, as MCP tools require."""
    return _object_schema


_json_values: Final = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_identifier, inner, max_size=3),
    max_leaves=4,
)
_meta: Final[st.SearchStrategy[Mapping[str, Any] | None]] = st.none() | st.dictionaries(
    _identifier, _json_values, max_size=3
)


def _metas() -> st.SearchStrategy[Mapping[str, Any] | None]:
    return _meta


_icon_lists: Final[st.SearchStrategy[list[Icon] | None]] = st.none() | st.lists(
    st.builds(
        Icon,
        src=uris(),
        mime_type=st.none() | st.sampled_from(("image/png", "image/svg+xml")),
        sizes=st.none() | st.lists(st.sampled_from(("48x48", "96x96", "any")), max_size=2),
        theme=st.none() | st.sampled_from(("dark", "light")),
    ),
    max_size=2,
)


def _icons() -> st.SearchStrategy[list[Icon] | None]:
    return _icon_lists


_annotation: Final[st.SearchStrategy[Annotations | None]] = st.none() | st.builds(
    Annotations,
    audience=st.none() | st.lists(st.sampled_from(("user", "assistant")), unique=True),
    priority=st.none() | st.floats(min_value=0.0, max_value=1.0),
    last_modified=st.none() | st.just("2025-01-12T15:00:58Z"),
)


def _annotations() -> st.SearchStrategy[Annotations | None]:
    return _annotation


_tool_annotations: Final = st.none() | st.builds(
    ToolAnnotations,
    title=_maybe_texts,
    read_only_hint=st.none() | st.booleans(),
    destructive_hint=st.none() | st.booleans(),
    idempotent_hint=st.none() | st.booleans(),
    open_world_hint=st.none() | st.booleans(),
)


_execution: Final = st.none() | st.builds(
    ToolExecution, task_support=st.none() | st.sampled_from(("forbidden", "optional", "required"))
)


@st.composite
def tools(draw: st.DrawFn) -> Tool:
    """Tool definitions with an object input schema and, at times, every other field."""
    return Tool(
        name=draw(tool_names()),
        input_schema=draw(object_schemas()),
        title=draw(_maybe_texts),
        description=draw(_maybe_texts),
        output_schema=draw(st.none() | object_schemas()),
        annotations=draw(_tool_annotations),
        execution=draw(_execution),
        icons=draw(_icons()),
        meta=draw(_metas()),
    )


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    """Resource definitions at absolute URIs."""
    return Resource(
        uri=draw(uris()),
        name=draw(tool_names()),
        title=draw(_maybe_texts),
        description=draw(_maybe_texts),
        mime_type=draw(st.none() | st.sampled_from(_MIME_TYPES)),
        size=draw(st.none() | st.integers(min_value=0, max_value=2**40)),
        annotations=draw(_annotations()),
        icons=draw(_icons()),
        meta=draw(_metas()),
    )


@st.composite
def resource_templates(draw: st.DrawFn) -> ResourceTemplate:
    """Resource template definitions with matchable templates."""
    return ResourceTemplate(
        uri_template=draw(uri_templates()),
        name=draw(tool_names()),
        title=draw(_maybe_texts),
        description=draw(_maybe_texts),
        mime_type=draw(st.none() | st.sampled_from(_MIME_TYPES)),
        annotations=draw(_annotations()),
        icons=draw(_icons()),
        meta=draw(_metas()),
    )


@st.composite
def prompts(draw: st.DrawFn) -> Prompt:
    """Prompt definitions with zero or more uniquely named arguments."""
    names = draw(st.none() | st.lists(_identifiers(), max_size=4, unique=True))
    arguments = None
    if names is not None:
        arguments = [
            PromptArgument(
                name=name,
                title=draw(_maybe_texts),
                description=draw(_maybe_texts),
                required=draw(st.none() | st.booleans()),
            )
            for name in names
        ]
    return Prompt(
        name=draw(tool_names()),
        title=draw(_maybe_texts),
        description=draw(_maybe_texts),
        arguments=arguments,
        icons=draw(_icons()),
        meta=draw(_metas()),
    )


_BY_KIND: Final[Mapping[ElementKind, st.SearchStrategy[Definition]]] = {
    ElementKind.TOOL: tools(),
    ElementKind.RESOURCE: resources(),
    ElementKind.RESOURCE_TEMPLATE: resource_templates(),
    ElementKind.PROMPT: prompts(),
}


def _union(kinds: set[ElementKind]) -> ElementKind:
    result = ElementKind.NONE
    for kind in kinds:
        result |= kind
    return result


def element_kinds() -> st.SearchStrategy[ElementKind]:
    """Any combination of kinds, from ``NONE`` to ``ALL``."""
    return st.sets(st.sampled_from(SINGLE_KINDS)).map(_union)


def definitions(kinds: ElementKind = ElementKind.ALL) -> st.SearchStrategy[Definition]:
    """Definitions of the kinds in ``kinds`` (which must name at least one)."""
    chosen = [_BY_KIND[kind] for kind in SINGLE_KINDS if kind in kinds]
    if not chosen:
        raise ValueError("definitions() needs at least one kind")
    return _ALL_DEFINITIONS if len(chosen) == len(SINGLE_KINDS) else st.one_of(chosen)


_ALL_DEFINITIONS: Final = st.one_of(list(_BY_KIND.values()))


@st.composite
def elements(draw: st.DrawFn, kinds: ElementKind = ElementKind.ALL) -> Element:
    """Serializable elements of the kinds in ``kinds``, with completions and tags at times."""
    definition = draw(definitions(kinds))
    if isinstance(definition, Prompt):
        completable = [argument.name for argument in definition.arguments or ()]
    elif isinstance(definition, ResourceTemplate):
        completable = list(definition.template.variables)
    else:
        completable = []
    completions = None
    with_completions: bool = draw(_booleans) if completable else False
    if with_completions:
        chosen = draw(st.lists(st.sampled_from(completable), min_size=1, unique=True))
        completions = dict.fromkeys(chosen, HandlerRef(COMPLETION_PATH))
    return Element(
        definition=definition,
        handler=draw(handler_refs(definition.ref.kind)),
        completions=completions,
        tags=draw(_tags),
    )


_booleans: Final = st.booleans()
# A small vocabulary, so that tag-based filters (a wrapper's predicate, visibility) see both
# tagged and untagged elements often.
_tags: Final = st.frozensets(st.sampled_from(("public", "internal", "beta", "math")), max_size=2)


def collections(
    kinds: ElementKind = ElementKind.ALL, *, max_size: int = 8
) -> st.SearchStrategy[ElementCollection]:
    """Collections of up to ``max_size`` elements of the kinds in ``kinds``, refs unique."""
    if not kinds:
        return st.just(ElementCollection())
    return st.lists(
        _ELEMENTS[kinds] if kinds in _ELEMENTS else elements(kinds),
        max_size=max_size,
        unique_by=lambda element: element.ref,
    ).map(ElementCollection)


_ELEMENTS: Final[dict[ElementKind, st.SearchStrategy[Element]]] = {ElementKind.ALL: elements()}
