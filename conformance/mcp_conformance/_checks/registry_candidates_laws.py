"""``registry.candidates``: every element that could answer a URI, best first.

``resource_candidates(uri)`` is optional (``ResourceCandidates``): a registry without it offers a
server only its winner, and the law is N/A (declared) for it. With it, for every URI of the run
(exact resource URIs, expansions of the templates, URIs several overlapping templates match, one
nothing matches), the kit checks, from the contract:

- the candidates are the elements the registry holds that match the URI, each once: the resource
  at exactly the URI and every template matching it, each the one precedence picks at its ref;
- the first is what ``get_resource(uri)`` answers, variables included;
- each next one is what ``get_resource(uri)`` answers from the same registry built without the
  ones before it (and after the last, nothing): the order is the resolver's own preference, ties
  between equally specific templates of different sources included.

Content comes from several sources of varied priority (and runtime registrations where the
registry has a writer), so equal refs shadow each other and equally specific templates tie.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeAlias

from hypothesis import strategies as st

from mcp_conformance._checks._needs import Needs, require
from mcp_conformance._contract import LawViolation, RegistryUnderTest, awaited, checked
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._machine import make_registry
from mcp_conformance._universe import (
    ALL_SLOTS,
    Features,
    Slot,
    SourceSpec,
    Universe,
    Vocabulary,
    features,
    make_element,
    show,
    source_specs,
    vocabularies,
)
from mcp_conformance.faults import MutableSource
from mcp_core.elements import (
    Definition,
    ElementCollection,
    ElementKind,
    ElementRef,
    UriTemplate,
)
from mcp_core.registry import ResolvedResource

_NOT_CLAIMED: Final = (
    "optional capability not implemented: it has no resource_candidates(uri) "
    "(ResourceCandidates), so a server can ask it for the winner only"
)
_NOWHERE: Final = "kit-unknown://nothing/here"
_RESOURCE_SLOTS: Final = tuple(
    slot for slot in ALL_SLOTS if slot[0] & (ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE)
)

Answer: TypeAlias = tuple[Definition, dict[str, str]] | None
"""A resolution as the law compares it: the definition and the variables (None: nothing)."""


def _answer(resolved: ResolvedResource | None) -> Answer:
    if resolved is None:
        return None
    return resolved.element.definition, dict(resolved.variables)


def _shown(answer: Answer) -> str:
    if answer is None:
        return "nothing"
    definition, variables = answer
    return f"{show(definition)}" + (f" with {variables}" if variables else "")


Runtime: TypeAlias = list[tuple[Slot, Features]]


@st.composite
def _cases(draw: st.DrawFn, *, writer: bool) -> tuple[Vocabulary, list[SourceSpec], Runtime]:
    words = draw(vocabularies(overlapping=draw(st.booleans())))
    specs = draw(source_specs(min_sources=1, max_sources=3))
    runtime: Runtime = []
    if writer:
        for slot in draw(st.lists(st.sampled_from(_RESOURCE_SLOTS), max_size=2, unique=True)):
            runtime.append((slot, draw(features(slot[0]))))
    return words, specs, runtime


class _World:
    """One run's content, and registries from the factory over it, whole or without some refs."""

    def __init__(
        self, kit: Kit, words: Vocabulary, specs: list[SourceSpec], runtime: Runtime
    ) -> None:
        self.kit = kit
        self.words = words
        self.composes = kit.capabilities.composes_sources
        self.specs = specs if self.composes else []
        self.contents = [
            spec.source(words, f"source {index} v0").content
            for index, spec in enumerate(self.specs)
        ]
        self.runtime = [
            make_element(words, slot, f"runtime #{number}", looks)
            for number, (slot, looks) in enumerate(runtime)
        ]
        self.universe = Universe.over(self.specs)
        self.universe.provided(self.contents)
        self.universe.runtime = {element.ref: element for element in self.runtime}
        self._without: dict[frozenset[ElementRef], RegistryUnderTest] = {}

    async def registry(self, gone: frozenset[ElementRef] = frozenset()) -> RegistryUnderTest:
        """A registry from the factory over the content, without the elements at ``gone``."""
        if gone in self._without:
            return self._without[gone]
        sources = [
            (
                MutableSource(
                    ElementCollection(e for e in content if e.ref not in gone),
                    kinds=spec.declared,
                    turns=spec.turns,
                ),
                spec.priority,
            )
            for spec, content in zip(self.specs, self.contents, strict=True)
        ]
        registry = await make_registry(self.kit, sources)
        for element in self.runtime:
            if element.ref not in gone:
                await registry.register(element)
        self._without[gone] = registry
        return registry

    def uris(self) -> list[str]:
        """Every URI worth asking: resources, template expansions, overlaps, and a miss."""
        found = dict.fromkeys(
            (*self.words.probe_uris(), "kit://items/v0", "kit://items/v0/meta", _NOWHERE)
        )
        return list(found)

    def matching(self, uri: str) -> dict[ElementRef, Definition]:
        """What the registry holds that could answer ``uri``: its winner at each matching ref."""
        return {
            ref: definition
            for ref, definition in self.universe.winners().items()
            if (ref.kind is ElementKind.RESOURCE and ref.key == uri)
            or (
                ref.kind is ElementKind.RESOURCE_TEMPLATE
                and UriTemplate.parse(ref.key).match(uri) is not None
            )
        }


async def _candidates(registry: RegistryUnderTest, uri: str) -> list[ResolvedResource]:
    what = f"resource_candidates({uri!r})"
    found = registry.obj.resource_candidates(uri)  # type: ignore[attr-defined]  # probed
    items = await awaited(found, Iterable[object], what=what)
    return [checked(item, ResolvedResource, what=f"{what}: an item") for item in items]


async def _check_uri(world: _World, uri: str) -> None:
    registry = await world.registry()
    candidates = await _candidates(registry, uri)
    shown = [_shown(_answer(candidate)) for candidate in candidates]
    refs = [candidate.element.ref for candidate in candidates]
    twice = sorted({str(ref) for ref in refs if refs.count(ref) > 1})
    if twice:
        raise LawViolation(f"resource_candidates({uri!r}) yields {', '.join(twice)} more than once")
    held = world.matching(uri)
    missing = sorted(show(held[ref]) for ref in held.keys() - set(refs))
    extra = sorted(str(ref) for ref in set(refs) - held.keys())
    if missing or extra:
        raise LawViolation(
            f"resource_candidates({uri!r}) yields {shown}: missing {missing or 'nothing'}, "
            f"unexpected {extra or 'nothing'} (the candidates are the resource at exactly the URI "
            "and every template matching it)"
        )
    for candidate in candidates:
        definition = candidate.element.definition
        if definition != held[definition.ref]:
            raise LawViolation(
                f"resource_candidates({uri!r}) yields {show(definition)}, but precedence serves "
                f"{show(held[definition.ref])} at {definition.ref}"
            )
    winner = _answer(await registry.get_resource(uri))
    first = _answer(candidates[0]) if candidates else None
    if first != winner:
        raise LawViolation(
            f"resource_candidates({uri!r}) yields {shown}, best first, but get_resource({uri!r}) "
            f"answers {_shown(winner)}: the first candidate is the winner"
        )
    for number in range(1, len(candidates) + 1):
        gone = frozenset(refs[:number])
        without = await world.registry(gone)
        answer = _answer(await without.get_resource(uri))
        expected = _answer(candidates[number]) if number < len(candidates) else None
        if answer != expected:
            raise LawViolation(
                f"resource_candidates({uri!r}) yields {shown}, best first; without the first "
                f"{number} ({', '.join(str(ref) for ref in refs[:number])}) the same registry "
                f"answers get_resource({uri!r}) with {_shown(answer)}, but candidate {number + 1} "
                f"is {_shown(expected)}: each next candidate is what would win without the ones "
                "before it"
            )


@checks("registry.candidates")
def test_registry_candidates(kit: Kit) -> None:
    """Every element that could answer a URI, best first, in the resolver's own order."""
    roles = require(kit, Needs(roles=("resolver",)))
    if "ResourceCandidates" not in kit.session.optional:
        kit.not_applicable(_NOT_CLAIMED, why="declared")

    async def body(example: tuple[Vocabulary, list[SourceSpec], Runtime]) -> None:
        world = _World(kit, *example)
        for uri in world.uris():
            await _check_uri(world, uri)

    writer = roles["writer"].present
    kit.given(_cases(writer=writer), body, name="registry_candidates")
