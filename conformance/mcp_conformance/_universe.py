"""The registry checks' small world: few keys per kind, self-describing elements, the oracle.

Keys are few on purpose, so that sources and runtime registrations collide often (precedence is
only observable on collisions); every element's description records its origin, so two
candidates for one ref always differ and the catalogue shows which one won.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from hypothesis import strategies as st

from mcp_conformance._handlers import HANDLER_PATHS
from mcp_conformance.faults import invalid_element, is_invalid
from mcp_core.elements import (
    SINGLE_KINDS,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)

__all__ = [
    "ALL_SLOTS",
    "KEYS",
    "PRIORITIES",
    "Slot",
    "SourceSpec",
    "Universe",
    "collection",
    "definition",
    "element",
    "probe_uri",
    "ref_of",
    "slots",
    "source_specs",
]

KEYS: Final = ("a", "b", "c")
PRIORITIES: Final = (-100, 0, 0, 7, 100)
"""Sampled priorities: the named ones, an int in between, and 0 twice so ties are common."""

Slot = tuple[ElementKind, str]
"""A (kind, key) place an element can occupy."""


def definition(kind: ElementKind, key: str, origin: str) -> Definition:
    """The definition at ``(kind, key)`` whose description is ``origin``."""
    if kind is ElementKind.TOOL:
        return Tool(name=key, input_schema={"type": "object"}, description=origin)
    if kind is ElementKind.RESOURCE:
        return Resource(uri=f"kit://res/{key}", name=key, description=origin)
    if kind is ElementKind.RESOURCE_TEMPLATE:
        return ResourceTemplate(
            uri_template=f"kit://tpl/{key}/{{id}}", name=key, description=origin
        )
    return Prompt(name=key, description=origin)


def element(kind: ElementKind, key: str, origin: str, *, invalid: bool = False) -> Element:
    """A valid element (a real handler of its kind, by reference), or the kit's invalid one."""
    if invalid:
        # The origin says so, so that a report naming it needs no decoding.
        return invalid_element(definition(kind, key, f"{origin} (wrong-kind handler)"))
    made = definition(kind, key, origin)
    return Element(definition=made, handler=HandlerRef(HANDLER_PATHS[kind][0]))


def ref_of(kind: ElementKind, key: str) -> ElementRef:
    """The ref of the element at ``(kind, key)``."""
    return definition(kind, key, "").ref


def probe_uri(ref: ElementRef) -> str | None:
    """A URI that resolves to ``ref`` (resources and templates), else None."""
    if ref.kind is ElementKind.RESOURCE:
        return ref.key
    if ref.kind is ElementKind.RESOURCE_TEMPLATE:
        return ref.key.replace("{id}", "v")
    return None


ALL_SLOTS: Final[tuple[Slot, ...]] = tuple((kind, key) for kind in SINGLE_KINDS for key in KEYS)


def slots(
    *, invalid: bool = False, max_size: int = 5
) -> st.SearchStrategy[list[tuple[Slot, bool]]]:
    """Distinct slots, each flagged invalid at times when ``invalid`` is allowed."""
    flag = st.booleans() if invalid else st.just(value=False)
    return st.lists(
        st.tuples(st.sampled_from(ALL_SLOTS), flag),
        max_size=max_size,
        unique_by=lambda item: item[0],
    )


@final
@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One source of a generated registry: its priority, first content, and what it raises."""

    priority: int
    content: tuple[tuple[Slot, bool], ...]
    failing: type[Exception] | None = None


def source_specs(
    *,
    invalid: bool = False,
    failures: Sequence[type[Exception]] = (),
    min_sources: int = 0,
    max_sources: int = 4,
) -> st.SearchStrategy[list[SourceSpec]]:
    """Lists of source specs: with invalid elements when asked, failing with ``failures``."""
    spec = st.builds(
        SourceSpec,
        priority=st.sampled_from(PRIORITIES),
        content=slots(invalid=invalid).map(tuple),
        failing=st.none() | st.sampled_from(failures) if failures else st.none(),
    )
    return st.lists(spec, min_size=min_sources, max_size=max_sources)


def collection(items: Iterable[tuple[Slot, bool]], origin: str) -> ElementCollection:
    """The collection of ``items`` whose elements all record ``origin``."""
    return ElementCollection(element(kind, key, origin, invalid=bad) for (kind, key), bad in items)


@dataclass(slots=True)
class _SourceState:
    priority: int
    last_good: ElementCollection | None = None


@final
@dataclass(slots=True)
class Universe:
    """The oracle: what a registry over these sources and runtime registrations must serve.

    It tracks each source's last good collection (what a load or reload must keep serving) and the
    runtime registrations; :meth:`winners` applies the one precedence rule: runtime first, then
    sources by descending priority, then the source added first. Invalid elements are no
    candidates at all.
    """

    sources: list[_SourceState] = field(default_factory=list)
    runtime: dict[ElementRef, Element] = field(default_factory=dict)
    loaded: bool = False

    @classmethod
    def over(cls, priorities: Sequence[int]) -> Universe:
        """A universe over sources of these priorities, in the order they were added."""
        return cls([_SourceState(priority) for priority in priorities])

    def provided(self, outcomes: Sequence[ElementCollection | None]) -> ElementKind:
        """Record a (re)load where source ``i`` returned ``outcomes[i]`` (None: it raised).

        Returns the kinds whose source content changed: what the (re)load touched.
        """
        touched = ElementKind.NONE
        for state, outcome in zip(self.sources, outcomes, strict=True):
            if outcome is None:
                continue
            before = state.last_good or ElementCollection()
            touched |= _difference_kinds(before, outcome)
            state.last_good = outcome
        self.loaded = True
        return touched

    def candidates(self, ref: ElementRef) -> list[Element]:
        """Every valid element at ``ref``, best first."""
        found = [self.runtime[ref]] if ref in self.runtime else []
        ranked = sorted(range(len(self.sources)), key=lambda i: (-self.sources[i].priority, i))
        for index in ranked:
            last_good = self.sources[index].last_good
            candidate = last_good.get(ref) if last_good is not None else None
            if candidate is not None and not is_invalid(candidate):
                found.append(candidate)
        return found

    def refs(self) -> set[ElementRef]:
        """Every ref with at least one valid candidate."""
        refs = set(self.runtime)
        for state in self.sources:
            if state.last_good is not None:
                refs.update(e.ref for e in state.last_good if not is_invalid(e))
        return refs

    def winners(self) -> dict[ElementRef, Definition]:
        """The definition that must be listed at each ref."""
        return {ref: self.candidates(ref)[0].definition for ref in self.refs()}


def _difference_kinds(before: ElementCollection, after: ElementCollection) -> ElementKind:
    kinds = ElementKind.NONE
    for ref in {*before.refs, *after.refs}:
        if before.get(ref) != after.get(ref):
            kinds |= ref.kind
    return kinds
