"""Hypothesis strategies for elements, collections and healthy sources.

Self-contained (only ``hypothesis`` and ``mcp_core``) and typed, so that the conformance kit can
adopt them as they are. Everything generated is valid by construction and serializable: handlers
and completion providers are :class:`~mcp_core.elements.HandlerRef` names, so every collection
round-trips through ``to_json()`` / ``from_json()``.

- Definitions: :func:`tools`, :func:`resources`, :func:`resource_templates`, :func:`prompts`,
  :func:`definitions`; the pieces: :func:`tool_names`, :func:`uris`, :func:`uri_templates`,
  :func:`object_schemas`.
- :func:`elements` (of any of the four kinds, or of the kinds asked for), :func:`collections`.
- :func:`sources`: healthy :class:`CountingSource` values, whose declared kinds cover their
  content (possibly more) and which count ``provide()`` calls.
- Fixed examples for hand-written tests: :func:`tool_element`, :func:`resource_element`,
  :func:`template_element`, :func:`prompt_element`.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, Final, final

from hypothesis import strategies as st

from mcp_core.elements import (
    SINGLE_KINDS,
    Annotations,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)

__all__ = [
    "CountingSource",
    "collections",
    "definitions",
    "element_kinds",
    "elements",
    "handler_refs",
    "object_schemas",
    "prompt_element",
    "prompts",
    "resource_element",
    "resource_templates",
    "resources",
    "sources",
    "template_element",
    "tool_element",
    "tool_names",
    "tools",
    "uri_templates",
    "uris",
]

_NAME_CHARS: Final = string.ascii_letters + string.digits + "_.-"
_SEGMENT_CHARS: Final = string.ascii_lowercase + string.digits + "-._~"
_MIME_TYPES: Final = ("text/plain", "application/json", "image/png", "text/markdown; charset=utf-8")
_JSON_TYPES: Final = ("string", "integer", "number", "boolean", "array", "object", "null")

# Strategies are built once: composites draw from these shared instances. Plain alphabets rather
# than st.from_regex keep generation fast enough for law checks run over every unit.
_TEXTS: Final = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30
)
_OPTIONAL_TEXTS: Final = st.none() | _TEXTS
_NAMES: Final = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=40)
_IDENTIFIERS: Final = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_lowercase),
    st.text(alphabet=string.ascii_lowercase + string.digits + "_", max_size=11),
)
_SCHEMES: Final = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_lowercase),
    st.text(alphabet=string.ascii_lowercase + string.digits + "+.-", max_size=7),
)
_SEGMENTS: Final = st.text(alphabet=_SEGMENT_CHARS, min_size=1, max_size=10)
_HANDLER_REFS: Final = st.builds(
    lambda package, module, attr: HandlerRef(f"{package}.{module}:{attr}"),
    _IDENTIFIERS,
    _IDENTIFIERS,
    _IDENTIFIERS,
)


def tool_names() -> st.SearchStrategy[str]:
    """Names valid for tools (and prompts): 1 to 40 letters, digits, ``_``, ``.`` or ``-``."""
    return _NAMES


def handler_refs() -> st.SearchStrategy[HandlerRef]:
    """Import-path handler references such as ``HandlerRef("pkg.mod:attr")``."""
    return _HANDLER_REFS


_LISTS_OF_SEGMENTS: Final = st.lists(_SEGMENTS, max_size=4)


@st.composite
def uris(draw: st.DrawFn) -> str:
    """Absolute URIs ``scheme://authority/seg/...`` (every resource URI needs a scheme)."""
    scheme = draw(_SCHEMES)
    return f"{scheme}://" + "/".join([draw(_SEGMENTS), *draw(_LISTS_OF_SEGMENTS)])


_VARIABLE_NAMES: Final = st.lists(_IDENTIFIERS, min_size=1, max_size=4, unique=True)


@st.composite
def uri_templates(draw: st.DrawFn) -> str:
    """Matchable RFC 6570 templates with at least one expression, e.g. ``app://x/{id}{?q}``.

    Simple expressions sit between ``/`` literals (their values cannot contain ``/``, so every
    URI has one reading); an optional trailing form-style query adds level-3 parameters.
    """
    names = draw(_VARIABLE_NAMES)
    scheme = draw(_SCHEMES)
    n_path = draw(st.integers(min_value=1 if len(names) == 1 else 0, max_value=len(names)))
    path_vars, query_vars = names[:n_path], names[n_path:]
    parts = [draw(_SEGMENTS)]
    for name in path_vars:
        if draw(st.booleans()):
            parts.append(draw(_SEGMENTS))
        parts.append(f"{{{name}}}")
    template = f"{scheme}://" + "/".join(parts)
    if query_vars:
        template += "{?" + ",".join(query_vars) + "}"
    return template


_PROPERTIES: Final = st.dictionaries(_IDENTIFIERS, st.sampled_from(_JSON_TYPES), max_size=4)


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """JSON Schemas (Draft 2020-12) whose root is ``{"type": "object"}``, as MCP tools require."""
    properties = draw(_PROPERTIES)
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = {name: {"type": kind} for name, kind in properties.items()}
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        if required:
            schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    if draw(st.booleans()):
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


_OBJECT_SCHEMAS: Final = object_schemas()
_OPTIONAL_BOOLS: Final = st.none() | st.booleans()
_TOOL_ANNOTATIONS: Final = st.none() | st.builds(
    ToolAnnotations,
    title=_OPTIONAL_TEXTS,
    read_only_hint=_OPTIONAL_BOOLS,
    destructive_hint=_OPTIONAL_BOOLS,
    idempotent_hint=_OPTIONAL_BOOLS,
    open_world_hint=_OPTIONAL_BOOLS,
)
_META: Final = st.none() | st.dictionaries(_IDENTIFIERS, st.integers(), max_size=2)
_ANNOTATIONS: Final = st.none() | st.builds(
    Annotations,
    audience=st.none() | st.lists(st.sampled_from(("user", "assistant")), unique=True),
    priority=st.none() | st.floats(min_value=0.0, max_value=1.0),
)
_MIMES: Final = st.none() | st.sampled_from(_MIME_TYPES)
_SIZES: Final = st.none() | st.integers(min_value=0, max_value=2**40)
_ARGUMENT_NAMES: Final = st.none() | st.lists(_IDENTIFIERS, max_size=4, unique=True)


@st.composite
def tools(draw: st.DrawFn) -> Tool:
    """Tool definitions with an object input schema and optionally every other field."""
    return Tool(
        name=draw(_NAMES),
        input_schema=draw(_OBJECT_SCHEMAS),
        title=draw(_OPTIONAL_TEXTS),
        description=draw(_OPTIONAL_TEXTS),
        output_schema=draw(st.none() | _OBJECT_SCHEMAS),
        annotations=draw(_TOOL_ANNOTATIONS),
        meta=draw(_META),
    )


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    """Resource definitions at absolute URIs."""
    return Resource(
        uri=draw(uris()),
        name=draw(_NAMES),
        title=draw(_OPTIONAL_TEXTS),
        description=draw(_OPTIONAL_TEXTS),
        mime_type=draw(_MIMES),
        size=draw(_SIZES),
        annotations=draw(_ANNOTATIONS),
    )


@st.composite
def resource_templates(draw: st.DrawFn) -> ResourceTemplate:
    """Resource template definitions with matchable templates."""
    return ResourceTemplate(
        uri_template=draw(uri_templates()),
        name=draw(_NAMES),
        title=draw(_OPTIONAL_TEXTS),
        description=draw(_OPTIONAL_TEXTS),
        mime_type=draw(_MIMES),
        annotations=draw(_ANNOTATIONS),
    )


@st.composite
def prompts(draw: st.DrawFn) -> Prompt:
    """Prompt definitions with zero or more uniquely named arguments."""
    names = draw(_ARGUMENT_NAMES)
    arguments = None
    if names is not None:
        arguments = [
            PromptArgument(
                name=name,
                description=draw(_OPTIONAL_TEXTS),
                required=draw(_OPTIONAL_BOOLS),
            )
            for name in names
        ]
    return Prompt(
        name=draw(_NAMES),
        title=draw(_OPTIONAL_TEXTS),
        description=draw(_OPTIONAL_TEXTS),
        arguments=arguments,
    )


_BY_KIND: Final[Mapping[ElementKind, st.SearchStrategy[Definition]]] = {
    ElementKind.TOOL: tools(),
    ElementKind.RESOURCE: resources(),
    ElementKind.RESOURCE_TEMPLATE: resource_templates(),
    ElementKind.PROMPT: prompts(),
}


def element_kinds() -> st.SearchStrategy[ElementKind]:
    """Any combination of kinds, from ``NONE`` to ``ALL``."""
    return st.sets(st.sampled_from(SINGLE_KINDS)).map(_union)


def _union(kinds: set[ElementKind]) -> ElementKind:
    result = ElementKind.NONE
    for kind in kinds:
        result |= kind
    return result


def definitions(kinds: ElementKind = ElementKind.ALL) -> st.SearchStrategy[Definition]:
    """Definitions of the kinds in ``kinds`` (which must name at least one)."""
    chosen = [_BY_KIND[kind] for kind in SINGLE_KINDS if kind in kinds]
    if not chosen:
        raise ValueError("definitions() needs at least one kind")
    return st.one_of(chosen)


_TAGS: Final = st.frozensets(_IDENTIFIERS, max_size=3)


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
    wants_completions = draw(st.booleans())
    if completable and wants_completions:
        chosen = draw(st.lists(st.sampled_from(completable), min_size=1, unique=True))
        completions = {name: draw(_HANDLER_REFS) for name in chosen}
    return Element(
        definition=definition,
        handler=draw(_HANDLER_REFS),
        completions=completions,
        tags=draw(_TAGS),
    )


def collections(
    kinds: ElementKind = ElementKind.ALL, *, max_size: int = 6
) -> st.SearchStrategy[ElementCollection]:
    """Collections of up to ``max_size`` elements of the kinds in ``kinds``, refs unique."""
    if not kinds:
        return st.just(ElementCollection())
    return st.lists(elements(kinds), max_size=max_size, unique_by=lambda element: element.ref).map(
        ElementCollection
    )


@final
class CountingSource:
    """A healthy source: provides ``collection``, advertises ``declared``, counts its calls.

    ``declared`` defaults to the collection's kinds and must cover them (a source may
    over-advertise, never under-advertise). Set ``fail_with`` to make ``provide()`` raise it,
    and ``collection`` to change what it provides (an outside change).
    """

    __slots__ = ("collection", "declared", "fail_with", "kinds_calls", "provides")

    def __init__(self, collection: ElementCollection, declared: ElementKind | None = None) -> None:
        declared = collection.kinds if declared is None else declared
        if collection.kinds & ~declared:
            raise ValueError("a CountingSource must declare every kind it provides")
        self.collection = collection
        self.declared = declared
        self.fail_with: Exception | None = None
        self.provides = 0
        self.kinds_calls = 0

    def __repr__(self) -> str:
        return f"CountingSource({self.collection!r})"

    def kinds(self) -> ElementKind:
        """The declared kinds; never provides."""
        self.kinds_calls += 1
        return self.declared

    async def provide(self) -> ElementCollection:
        """The collection (or the configured failure); counts the call."""
        self.provides += 1
        if self.fail_with is not None:
            raise self.fail_with
        return self.collection


@st.composite
def sources(draw: st.DrawFn, kinds: ElementKind = ElementKind.ALL) -> CountingSource:
    """Healthy :class:`CountingSource` values over :func:`collections` of ``kinds``.

    The declared kinds are the content's plus, at times, more of ``kinds``.
    """
    collection = draw(collections(kinds))
    extra = draw(element_kinds()) & kinds
    return CountingSource(collection, collection.kinds | extra)


def tool_element(
    name: str = "tool",
    *,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    tags: frozenset[str] = frozenset(),
    handler: object = None,
) -> Element:
    """A tool element with a reference handler ``tests.handlers:<name>`` unless given one."""
    return Element(
        definition=Tool(
            name=name,
            input_schema=input_schema if input_schema is not None else {"type": "object"},
            output_schema=output_schema,
        ),
        handler=handler if handler is not None else HandlerRef(f"tests.handlers:{_attr(name)}"),
        tags=tags,
    )


def resource_element(uri: str = "app://resource", *, name: str = "resource") -> Element:
    """A resource element with a reference handler."""
    return Element(
        definition=Resource(uri=uri, name=name), handler=HandlerRef("tests.handlers:resource")
    )


def template_element(uri_template: str = "app://items/{id}", *, name: str = "items") -> Element:
    """A resource template element with a reference handler."""
    return Element(
        definition=ResourceTemplate(uri_template=uri_template, name=name),
        handler=HandlerRef("tests.handlers:template"),
    )


def prompt_element(name: str = "prompt") -> Element:
    """A prompt element with a reference handler."""
    return Element(
        definition=Prompt(name=name), handler=HandlerRef(f"tests.handlers:{_attr(name)}")
    )


def _attr(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name)
    return cleaned if cleaned[:1].isalpha() else f"h_{cleaned}"
