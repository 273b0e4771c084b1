"""The registry checks' small world: a few keys per kind, varied elements, the oracle.

Each generated run draws its own :class:`Vocabulary` (three keys per kind: tool and prompt names,
resource URIs, URI templates, from the public strategies), so that sources and runtime
registrations collide often (precedence is only observable on collisions) while names and URIs
vary from run to run. Every element varies in every other field a registry could look at (title,
description, ``_meta``, icons, annotations, tags, handlers by reference or live, completions), so
a registry that drops elements by some property of theirs is caught: none of them may cost an
element its place. Each element records where it came from (``source 1 v0``, ``runtime #3``) in
its title, its description or its ``_meta``, so two candidates for one ref always differ and a
report names which one won.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

from hypothesis import strategies as st

from mcp_conformance import _handlers
from mcp_conformance._contract import KitBaseException
from mcp_conformance._handlers import COMPLETION_PATH, HANDLER_PATHS
from mcp_conformance.faults import MutableSource, invalid_element, is_invalid
from mcp_conformance.strategies import (
    definitions,
    element_kinds,
    tool_names,
    uri_templates,
    uris,
)
from mcp_core.elements import (
    SINGLE_KINDS,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    UriTemplate,
)

__all__ = [
    "ALL_SLOTS",
    "KINDS_FAILURES",
    "PRIORITIES",
    "Completes",
    "Features",
    "Slot",
    "SourceSpec",
    "Universe",
    "Vocabulary",
    "collection",
    "features",
    "listed_matches",
    "make_element",
    "origin_of",
    "show",
    "slots",
    "source_specs",
    "vocabularies",
]

PRIORITIES: Final = (-100, 0, 0, 7, 100)
"""Sampled priorities: the named ones, an int in between, and 0 twice so ties are common."""

Slot: TypeAlias = tuple[ElementKind, int]
"""A place an element can occupy: a kind and the index of one of the vocabulary's keys of it."""

ALL_SLOTS: Final[tuple[Slot, ...]] = tuple(
    (kind, index) for kind in SINGLE_KINDS for index in range(3)
)

_ORIGIN_META: Final = "kit.origin"


@final
@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The keys of one run: three per kind (names, URIs, templates), each distinct."""

    tools: tuple[str, str, str]
    resources: tuple[str, str, str]
    resource_templates: tuple[str, str, str]
    prompts: tuple[str, str, str]

    def key(self, slot: Slot) -> str:
        """The key at ``slot``."""
        kind, index = slot
        if kind is ElementKind.TOOL:
            return self.tools[index]
        if kind is ElementKind.RESOURCE:
            return self.resources[index]
        if kind is ElementKind.RESOURCE_TEMPLATE:
            return self.resource_templates[index]
        return self.prompts[index]

    def ref(self, slot: Slot) -> ElementRef:
        """The ref of the element at ``slot``."""
        return ElementRef(slot[0], self.key(slot))

    def probe_uris(self) -> tuple[str, ...]:
        """URIs worth resolving: every resource URI, its case twin, two expansions per template.

        One expansion is plain, the other's values need RFC 3986 percent-escapes (a ``/``, a
        space, a non-ASCII letter, a ``%``), which a template must match with its variables
        decoded.
        """
        expanded = tuple(
            parsed.expand({name: pattern.format(number) for number, name in enumerate(variables)})
            for template in self.resource_templates
            for parsed in (UriTemplate.parse(template),)
            for variables in (parsed.variables,)
            for pattern in ("v{}", _ESCAPED_VALUE)
        )
        twins = tuple(
            twin for uri in self.resources if (twin := _case_twin(uri)) not in self.resources
        )
        return tuple(dict.fromkeys((*self.resources, *twins, *expanded)))


_ESCAPED_VALUE: Final = "a/b é%{}"
"""A template value every URI form escapes: ``a%2Fb%20%C3%A9%25`` and a number."""


def _case_twin(key: str) -> str:
    """``key`` with the case of its last letter swapped (its path, for a URI): a different key."""
    head, _, tail = key.rpartition("/") if "://" in key else ("", "", key)
    for index in range(len(tail) - 1, -1, -1):
        if tail[index].swapcase() != tail[index]:
            twin = tail[:index] + tail[index].swapcase() + tail[index + 1 :]
            return f"{head}/{twin}" if head else twin
    return key


def _three(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str, str]]:
    return st.lists(strategy, min_size=3, max_size=3, unique=True).map(
        lambda keys: (keys[0], keys[1], keys[2])
    )


@st.composite
def _three_with_twins(draw: st.DrawFn, strategy: st.SearchStrategy[str]) -> tuple[str, str, str]:
    """Three keys, the second half the time the first's case twin (``lookup`` and ``lookuP``)."""
    first, second, third = draw(_three(strategy))
    twin = _case_twin(first)
    if twin not in {first, third} and draw(st.booleans()):
        second = twin
    return first, second, third


# Half the time, templates that overlap (one matches what another expands to) and resource URIs
# that templates match: "exact beats template" and "the most specific template wins" are then
# exercised by every law that resolves, and so is an element that shadows another in resolution.
_OVERLAPPING: Final = (
    "kit://items/{id}",
    "kit://items/{id}/meta",
    "kit://{+path}",
    "kit://items/{id}{?fields}",
)
_UNDER_TEMPLATES: Final = st.sampled_from(
    (
        "kit://items/v0",
        "kit://items/v0/meta",
        "kit://notes/a",
        # Case twins, an escaped "/", and one letter in two Unicode forms (NFC, NFD), escaped.
        "kit://notes/A",
        "kit://items/a%2Fb",
        "kit://items/%C3%A9",
        "kit://items/e%CC%81",
    )
)


def _overlapping_templates() -> st.SearchStrategy[tuple[str, str, str]]:
    return st.permutations(_OVERLAPPING).map(lambda order: (order[0], order[1], order[2]))


def vocabularies(*, overlapping: bool = False) -> st.SearchStrategy[Vocabulary]:
    """Vocabularies drawn from the public name, URI and template strategies.

    ``overlapping``: always the overlapping templates, and resource URIs they match.
    """
    return st.builds(
        Vocabulary,
        tools=_three_with_twins(tool_names()),
        resources=_three(_UNDER_TEMPLATES | (st.nothing() if overlapping else uris())),
        resource_templates=_overlapping_templates()
        if overlapping
        else _overlapping_templates() | _three(uri_templates()),
        prompts=_three_with_twins(tool_names()),
    )


OriginField: TypeAlias = Literal["description", "title", "meta"]
Handler: TypeAlias = Literal["ref", "other-ref", "live", "other-live"]
Completes: TypeAlias = Literal["none", "first", "others", "all"]
"""Which of its arguments (a prompt's) or variables (a template's) an element completes."""


@final
@dataclass(frozen=True, slots=True)
class Features:
    """How an element looks beyond its key: every field a registry could be tempted to read.

    ``rich`` is a fully generated definition of the element's kind whose fields (all but the key)
    the element takes; ``origin_in`` is the field that records where the element came from;
    ``completions`` says which arguments or variables it has a completion provider for (two
    candidates at one key complete different ones, so a registry whose resolution keeps the
    providers of the element a winner shadows differs from one that does not).
    """

    origin_in: OriginField = "description"
    handler: Handler = "ref"
    tags: frozenset[str] = frozenset()
    completions: Completes = "none"
    rich: Definition | None = None


_TAGS: Final = ("public", "internal", "beta", "hidden", "scope:admin", "deprecated")


@st.composite
def _features(draw: st.DrawFn, kind: ElementKind) -> Features:
    # A rich definition costs ten times a plain one to draw: one element in four gets one.
    rich = draw(definitions(kind)) if draw(st.integers(min_value=0, max_value=3)) == 0 else None
    return Features(
        origin_in=draw(st.sampled_from(("description", "title", "meta"))),
        handler=draw(st.sampled_from(("ref", "other-ref", "live", "other-live"))),
        tags=draw(st.frozensets(st.sampled_from(_TAGS), max_size=2)),
        completions=draw(st.sampled_from(("none", "first", "others", "all"))),
        rich=rich,
    )


_BY_KIND: Final = {kind: _features(kind) for kind in SINGLE_KINDS}
_PLAIN: Final = Features()


def features(kind: ElementKind) -> st.SearchStrategy[Features]:
    """Features for an element of ``kind`` (shrinking towards a plain element)."""
    return st.just(_PLAIN) | _BY_KIND[kind]


def _definition(kind: ElementKind, key: str, origin: str, looks: Features) -> Definition:
    base = looks.rich
    common: dict[str, object] = {}
    if looks.origin_in == "meta":
        meta = dict(getattr(base, "meta", None) or {})
        meta[_ORIGIN_META] = origin
        common["meta"] = meta
    else:
        common[looks.origin_in] = origin
    if kind is ElementKind.TOOL:
        made: Definition = Tool(name=key, input_schema={"type": "object"})
        key_field = "name"
    elif kind is ElementKind.RESOURCE:
        made = Resource(uri=key, name="resource")
        key_field = "uri"
    elif kind is ElementKind.RESOURCE_TEMPLATE:
        made = ResourceTemplate(uri_template=key, name="template")
        key_field = "uri_template"
    else:
        # Every plain prompt at a key takes the same arguments, so candidates share them.
        made = Prompt(name=key, arguments=_PROMPT_ARGUMENTS)
        key_field = "name"
    if base is not None and type(base) is type(made):
        made = base
    return dataclasses.replace(made, **{key_field: key}, **common)  # type: ignore[arg-type]  # every definition has these fields


_PROMPT_ARGUMENTS: Final = (PromptArgument(name="topic"), PromptArgument(name="style"))

_LIVE: Final[dict[ElementKind, tuple[object, object]]] = {
    ElementKind.TOOL: (_handlers.tool, _handlers.other_tool),
    ElementKind.RESOURCE: (_handlers.resource, _handlers.other_resource),
    ElementKind.RESOURCE_TEMPLATE: (_handlers.resource_template, _handlers.other_resource_template),
    ElementKind.PROMPT: (_handlers.prompt, _handlers.other_prompt),
}


def make_element(
    vocabulary: Vocabulary,
    slot: Slot,
    origin: str,
    looks: Features = _PLAIN,
    *,
    invalid: bool = False,
) -> Element:
    """The element at ``slot`` recording ``origin``: valid, or the kit's invalid one."""
    kind = slot[0]
    if invalid:
        # The origin says so, so that a report naming it needs no decoding.
        plain = dataclasses.replace(looks, rich=None)
        return invalid_element(
            _definition(kind, vocabulary.key(slot), f"{origin} (wrong-kind handler)", plain)
        )
    made = _definition(kind, vocabulary.key(slot), origin, looks)
    handler: object
    if looks.handler in {"ref", "other-ref"}:
        handler = HandlerRef(HANDLER_PATHS[kind][looks.handler == "other-ref"])
    else:
        handler = _LIVE[kind][looks.handler == "other-live"]
    names: tuple[str, ...] = ()
    if isinstance(made, ResourceTemplate):
        names = tuple(made.template.variables)
    elif isinstance(made, Prompt):
        names = tuple(argument.name for argument in made.arguments or ())
    completed = {"none": (), "first": names[:1], "others": names[1:], "all": names}
    completions = dict.fromkeys(completed[looks.completions], HandlerRef(COMPLETION_PATH))
    return Element(
        definition=made, handler=handler, completions=completions or None, tags=looks.tags
    )


def origin_of(definition: Definition) -> str | None:
    """Where a kit-made definition came from, or None for one the kit did not make."""
    meta = getattr(definition, "meta", None) or {}
    for candidate in (meta.get(_ORIGIN_META), definition.title, definition.description):
        if isinstance(candidate, str) and candidate.startswith(("source ", "runtime", "invalid")):
            return candidate
    return None


def show(definition: Definition) -> str:
    """``tool 'x' from source 1 v0``: a definition as the reports name it."""
    origin = origin_of(definition)
    return (
        f"{definition.ref} from {origin}" if origin else f"{definition.ref} (not made by the kit)"
    )


ContentItem: TypeAlias = tuple[Slot, bool, Features]
"""An element of a source's content: its slot, whether it is invalid, how it looks."""


@st.composite
def _content_item(draw: st.DrawFn, invalid: bool) -> ContentItem:
    slot = draw(st.sampled_from(ALL_SLOTS))
    bad = draw(st.booleans()) if invalid else False
    return (slot, bad, draw(features(slot[0])))


def slots(*, invalid: bool = False, max_size: int = 5) -> st.SearchStrategy[list[ContentItem]]:
    """Content: distinct slots, each flagged invalid at times when ``invalid`` is allowed."""
    return st.lists(_content_item(invalid), max_size=max_size, unique_by=lambda item: item[0])


@final
@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One source of a generated registry.

    Its priority, first content, what it raises (if anything), the kinds it declares, and how
    many turns of the event loop each ``provide()`` takes (so sources finish in varied orders).
    """

    priority: int
    content: tuple[ContentItem, ...]
    failing: type[BaseException] | None = None
    declared: ElementKind = ElementKind.ALL
    turns: int = 0
    kinds_failing: type[BaseException] | None = None
    """What ``kinds()`` raises, if it raises: such a source declares nothing."""

    @property
    def declares(self) -> ElementKind:
        """The kinds the source declares: none when its ``kinds()`` raises."""
        return ElementKind.NONE if self.kinds_failing is not None else self.declared

    def source(self, vocabulary: Vocabulary, origin: str) -> MutableSource:
        """A fresh source for this spec."""
        made = MutableSource(
            collection(vocabulary, self.content, origin), kinds=self.declared, turns=self.turns
        )
        if self.failing is not None:
            made.fail_with = self.failing(f"{origin} is down")
        if self.kinds_failing is not None:
            made.kinds_fail_with = self.kinds_failing(f"{origin}: kinds() is broken")
        return made


KINDS_FAILURES: Final[tuple[type[BaseException], ...]] = (
    RuntimeError,
    ValueError,
    LookupError,
    SystemExit,
    KitBaseException,
)
"""What a source's ``kinds()`` raises where the kit makes it raise (``undeclared`` specs)."""


def source_specs(
    *,
    invalid: bool = False,
    failures: Sequence[type[BaseException]] = (),
    undeclared: bool = False,
    min_sources: int = 0,
    max_sources: int = 4,
    ties: bool = False,
) -> st.SearchStrategy[list[SourceSpec]]:
    """Source specs: invalid elements, failures and narrow ``kinds()`` only where asked.

    ``undeclared``: sources declare narrow kinds, and some have a ``kinds()`` that raises (one
    of :data:`KINDS_FAILURES`): such a source declares nothing, so its elements are all skipped.

    ``ties``: half the time, two or more sources that hold elements at the same slots (see
    :func:`_contested`), so that every such draw has a winner to pick at each contested slot.
    """
    spec = st.builds(
        SourceSpec,
        priority=st.sampled_from(PRIORITIES),
        content=slots(invalid=invalid).map(tuple),
        failing=st.none() | st.sampled_from(failures) if failures else st.none(),
        declared=element_kinds() if undeclared else st.just(ElementKind.ALL),
        turns=st.integers(min_value=0, max_value=4),
        kinds_failing=st.none() | st.sampled_from(KINDS_FAILURES) if undeclared else st.none(),
    )
    specs = st.lists(spec, min_size=min_sources, max_size=max_sources)
    if not ties:
        return specs
    contested = st.lists(spec, min_size=max(2, min_sources), max_size=max(2, max_sources))
    return specs | _contested(contested, invalid)


_RANKS: Final = tuple(sorted(set(PRIORITIES)))
"""The distinct priorities, for contested sources that must each rank differently."""


@st.composite
def _contested(
    draw: st.DrawFn, specs: st.SearchStrategy[list[SourceSpec]], invalid: bool
) -> list[SourceSpec]:
    """Two or more sources that all hold elements at the same (contested) slots.

    Half the time they are tied: of equal priority, finishing in the reverse of the order they
    were added (the one added first takes the most turns of the event loop), so that "added
    first" and "finished first" name different winners at every contested slot. Otherwise each
    has a priority of its own, in a drawn order, and takes its own drawn turns: "highest priority"
    then names a winner that neither the order of adding nor the order of finishing decides, and
    a registry that ranks sources any other way (the wrong way round, last writer wins) shows it
    at the first read. Plain draws find such a registry only when two sources of different
    priorities happen to share a slot: about one run in five of the fast profile did not.
    """
    drawn = draw(specs)[: len(_RANKS)]
    tied = draw(st.booleans(), label="tied")
    ranks = draw(st.permutations(_RANKS), label="ranks")
    contested = draw(slots(invalid=invalid, max_size=4).filter(bool))
    found = []
    for number, spec in enumerate(drawn):
        # Each source also holds every contested slot, with elements of its own.
        own = {item[0]: item for item in spec.content}
        content = {slot: (slot, bad, looks) for slot, bad, looks in contested}
        content.update(own)
        found.append(
            dataclasses.replace(
                spec,
                content=tuple(content.values()),
                priority=drawn[0].priority if tied else ranks[number],
                turns=len(drawn) - number if tied else spec.turns,
            )
        )
    return found


def collection(
    vocabulary: Vocabulary, items: Iterable[ContentItem], origin: str
) -> ElementCollection:
    """The collection of ``items`` whose elements all record ``origin``."""
    return ElementCollection(
        make_element(vocabulary, slot, origin, looks, invalid=bad) for slot, bad, looks in items
    )


def listed_matches(listed: Mapping[ElementRef, Definition], uri: str) -> tuple[Definition, ...]:
    """Every listed definition ``get_resource(uri)`` may answer with.

    That is the resource at exactly ``uri`` and every listed template that matches it. Which of
    them wins (exact first, then the most specific template) is ``registry.templates``; that one
    of them resolves, and nothing else, is ``registry.resolver-agrees``.
    """
    found = [
        definition
        for ref, definition in listed.items()
        if ref.kind is ElementKind.RESOURCE and ref.key == uri
    ]
    found.extend(
        definition
        for ref, definition in listed.items()
        if ref.kind is ElementKind.RESOURCE_TEMPLATE
        and UriTemplate.parse(ref.key).match(uri) is not None
    )
    return tuple(found)


@dataclass(slots=True)
class _SourceState:
    priority: int
    declared: ElementKind
    last_good: ElementCollection | None = None


@final
@dataclass(slots=True)
class Universe:
    """The oracle: what a registry over these sources and runtime registrations must serve.

    It tracks each source's last good collection (what a load or reload must keep serving) and the
    runtime registrations; :meth:`winners` applies the one precedence rule: runtime first, then
    sources by descending priority, then the source added first. Invalid elements and elements of
    kinds their source does not declare are no candidates at all.
    """

    sources: list[_SourceState] = field(default_factory=list)
    runtime: dict[ElementRef, Element] = field(default_factory=dict)
    loaded: bool = False

    @classmethod
    def over(cls, specs: Sequence[SourceSpec]) -> Universe:
        """A universe over sources of these specs, in the order they were added."""
        return cls([_SourceState(spec.priority, spec.declares) for spec in specs])

    def provided(self, outcomes: Sequence[ElementCollection | None]) -> None:
        """Record a (re)load where source ``i`` returned ``outcomes[i]`` (None: it raised)."""
        for state, outcome in zip(self.sources, outcomes, strict=True):
            if outcome is not None:
                state.last_good = outcome
        self.loaded = True

    def candidates(self, ref: ElementRef) -> list[Element]:
        """Every valid element at ``ref``, best first."""
        found = [self.runtime[ref]] if ref in self.runtime else []
        ranked = sorted(range(len(self.sources)), key=lambda i: (-self.sources[i].priority, i))
        for index in ranked:
            state = self.sources[index]
            candidate = state.last_good.get(ref) if state.last_good is not None else None
            if candidate is not None and not is_invalid(candidate) and ref.kind & state.declared:
                found.append(candidate)
        return found

    def refs(self) -> set[ElementRef]:
        """Every ref with at least one valid candidate."""
        refs = set(self.runtime)
        for state in self.sources:
            if state.last_good is not None:
                refs.update(
                    e.ref for e in state.last_good if not is_invalid(e) and e.kind & state.declared
                )
        return refs

    def winners(self) -> dict[ElementRef, Definition]:
        """The definition that must be listed at each ref."""
        return {ref: self.candidates(ref)[0].definition for ref in self.refs()}
