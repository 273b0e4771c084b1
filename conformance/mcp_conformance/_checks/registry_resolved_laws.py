"""``registry.resolved-whole``: a per-name read answers the whole element a loaded registry holds.

A resolver may answer a name before the catalogue is loaded, asking only the sources it needs
(the reference ``Registry`` does, stopping at the first source that has the name). What it
answers must then be what the same registry answers once loaded: not only the definition
(``registry.first-read-complete`` and ``registry.resolver-agrees`` compare those) but the
handler, the completion providers and the tags — the providers especially, since a registry
that lets the providers of a shadowed element follow the winner does so when it merges, and a
per-name read that stops at the winner skips that merge. The kit's candidates at one key take the
same arguments or variables and complete different ones of them, half the sources answer
``lookup(ref)`` (``ElementLookup``), so both ways a registry may ask a source per name are taken,
and half of them declare narrower kinds than they hold (or have a ``kinds()`` that raises), so a
per-name read must skip what the load skips.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Final, TypeAlias

import anyio.lowlevel
from hypothesis import strategies as st

from mcp_conformance._checks._needs import Needs, require
from mcp_conformance._contract import LawViolation, RegistryUnderTest, checked, uncontained
from mcp_conformance._diff import diff_elements
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._machine import PLANS, make_registry
from mcp_conformance._universe import (
    ALL_SLOTS,
    KINDS_FAILURES,
    PRIORITIES,
    Completes,
    ContentItem,
    SourceSpec,
    Vocabulary,
    features,
    show,
    vocabularies,
)
from mcp_conformance.faults import MutableSource
from mcp_conformance.strategies import element_kinds
from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.registry import ElementAtRef

_NEEDS: Final = Needs(roles=("resolver",), sources=True)

Answer: TypeAlias = tuple[Element, dict[str, str]] | None
"""What a per-name read answered: the element and the variables of a template match, or None."""

Read: TypeAlias = tuple[str, Callable[[], Awaitable[Answer]]]


class _LookingUp:
    """A kit source that also answers ``lookup(ref)`` (``ElementLookup``) from its content.

    It takes as many turns of the event loop per lookup as its source takes per provide, and
    raises what its source raises while that fails.
    """

    def __init__(self, source: MutableSource) -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"_LookingUp({self.source!r})"

    def kinds(self) -> ElementKind:
        return self.source.kinds()

    async def provide(self) -> ElementCollection:
        return await self.source.provide()

    async def lookup(self, ref: ElementRef) -> Element | None:
        for _ in range(self.source.turns + 1):
            await anyio.lowlevel.checkpoint()
        if self.source.fail_with is not None:
            raise self.source.fail_with
        return self.source.content.get(ref)


_COMPLETES: Final[tuple[Completes, ...]] = ("none", "first", "others", "all")
_COMPLETING: Final = ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE
_ALWAYS: Final = 2
"""How many sources, the first ones, hold every contested slot."""


@st.composite
def _contested(draw: st.DrawFn) -> list[SourceSpec]:
    """Two to four sources holding elements at the same few slots, completing different parts.

    Every source holds each contested slot at times, the first two always, so a per-name read
    finds a winner and elements it shadows; each element completes none, the first, the other or
    all of its arguments or variables. Half the sources declare narrower kinds than they hold, or
    have a ``kinds()`` that raises.
    """
    # At least one slot whose elements complete something: a prompt's or a template's.
    completing = draw(st.sampled_from([s for s in ALL_SLOTS if s[0] & _COMPLETING]))
    others = draw(st.lists(st.sampled_from(ALL_SLOTS), max_size=3, unique=True))
    contested = [completing, *(slot for slot in others if slot != completing)]
    specs = []
    for number in range(draw(st.integers(min_value=2, max_value=4))):
        content: list[ContentItem] = []
        for slot in contested:
            if number < _ALWAYS or draw(st.booleans()):
                looks = draw(features(slot[0]))
                completes = draw(st.sampled_from(_COMPLETES))
                content.append((slot, False, dataclasses.replace(looks, completions=completes)))
        # Half the sources declare every kind; the others narrower kinds, or a kinds() that
        # raises (they declare nothing): their elements of other kinds are skipped, per name too.
        declares = draw(st.sampled_from(("all", "all", "narrow", "raising")))
        specs.append(
            SourceSpec(
                priority=draw(st.sampled_from(PRIORITIES)),
                content=tuple(content),
                turns=draw(st.integers(min_value=0, max_value=4)),
                declared=draw(element_kinds()) if declares == "narrow" else ElementKind.ALL,
                kinds_failing=(
                    draw(st.sampled_from(KINDS_FAILURES)) if declares == "raising" else None
                ),
            )
        )
    return specs


def _sources(
    words: Vocabulary, specs: Sequence[SourceSpec], lookups: Sequence[bool]
) -> list[tuple[object, int]]:
    pairs: list[tuple[object, int]] = []
    for index, (spec, lookup) in enumerate(zip(specs, lookups, strict=False)):
        source = spec.source(words, f"source {index} v0")
        pairs.append((_LookingUp(source) if lookup else source, spec.priority))
    return pairs


def _reads(registry: RegistryUnderTest, words: Vocabulary) -> list[Read]:
    """Every per-name read of the vocabulary the registry offers."""

    def element(read: Callable[[], Awaitable[Element | None]]) -> Callable[[], Awaitable[Answer]]:
        async def answer() -> Answer:
            found = await read()
            return (found, {}) if found is not None else None

        return answer

    def resource(uri: str) -> Callable[[], Awaitable[Answer]]:
        async def answer() -> Answer:
            found = await registry.get_resource(uri)
            return (found.element, dict(found.variables)) if found is not None else None

        return answer

    reads: list[Read] = [
        (f"get_tool({name!r})", element(partial(registry.get_tool, name))) for name in words.tools
    ]
    reads.extend(
        (f"get_prompt({name!r})", element(partial(registry.get_prompt, name)))
        for name in words.prompts
    )
    reads.extend((f"get_resource({uri!r})", resource(uri)) for uri in words.probe_uris())
    at_ref = registry.obj
    if isinstance(at_ref, ElementAtRef):
        # Optional (ElementAtRef): the one per-name read that reaches a template by its key.
        for slot in ALL_SLOTS:
            ref = words.ref(slot)

            async def get(ref: ElementRef = ref) -> Element | None:
                found = await at_ref.get(ref)
                return checked(found, Element | None, what=f"get({ref})")  # type: ignore[no-any-return]  # checked

            reads.append((f"get({ref})", element(get)))
    return reads


def _describe(answer: Answer) -> str:
    if answer is None:
        return "nothing"
    found, variables = answer
    return show(found.definition) + (f" with variables {variables}" if variables else "")


def _differences(loaded: Answer, first: Answer) -> str:
    if loaded is None or first is None:
        return ""
    found = diff_elements(loaded[0], first[0]) if loaded[0] != first[0] else []
    if loaded[1] != first[1]:
        found.append(f"variables: {loaded[1]} -> {first[1]}")
    return f"; they differ (loaded -> first read) in {'; '.join(found)}" if found else ""


async def _loaded_answers(registry: RegistryUnderTest, words: Vocabulary) -> dict[str, Answer]:
    """Every read's answer once the catalogue is loaded (load(), else a catalogue read)."""
    if registry.plays("deferred"):
        await registry.load()
    elif registry.plays("catalog"):
        await registry.tools()
    return {label: await read() for label, read in _reads(registry, words)}


@checks("registry.resolved-whole")
def test_registry_resolved_whole(kit: Kit) -> None:
    """A per-name read of a fresh registry answers what the loaded registry answers, whole."""
    require(kit, _NEEDS)

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[bool], st.DataObject],
    ) -> None:
        words, specs, lookups, data = example

        async def fresh() -> RegistryUnderTest:
            return await make_registry(kit, _sources(words, specs, lookups))

        def violation(label: str, first: Answer, loaded: Answer, how: str) -> LawViolation:
            return LawViolation(
                f"{label} answered {_describe(first)} {how}, but {_describe(loaded)} once the "
                f"catalogue was loaded{_differences(loaded, first)} (sources with lookup(ref): "
                f"{[i for i, lookup in enumerate(lookups) if lookup]}; the sources took "
                f"{[spec.turns for spec in specs]} turns of the event loop to provide; a read "
                "answers the whole element the loaded registry holds, completion providers "
                "included)"
            )

        registry = await fresh()
        expected = await _loaded_answers(registry, words)
        # Each read as the very first of a fresh registry.
        for index in range(len(expected)):
            label, read = _reads(await fresh(), words)[index]
            answer = await read()
            if answer != expected[label]:
                raise violation(label, answer, expected[label], "as a fresh registry's first read")
        # Every read, in a generated order, on one registry as the reads before left it.
        registry = await fresh()
        reads = _reads(registry, words)
        order = data.draw(st.permutations(range(len(reads))), label="order")
        first: dict[str, Answer] = {}
        for index in order:
            label, read = reads[index]
            first[label] = await read()
        loaded = await _loaded_answers(registry, words)
        for label, answer in first.items():
            if answer != loaded[label]:
                after = [reads[i][0] for i in order]
                after = after[: after.index(label)]
                how = f"after {after} on a fresh registry" if after else "as its first read"
                raise violation(label, answer, loaded[label], how)

    kit.given(
        st.tuples(
            vocabularies(),
            _contested(),
            st.lists(st.booleans(), min_size=4, max_size=4),
            st.data(),
        ),
        body,
        name="registry_resolved_whole",
    )


def check_per_name_isolation(kit: Kit) -> None:
    """``registry.source-isolation`` before the first load: per-name reads past raising sources.

    A resolver that answers a name before the catalogue is loaded asks the sources it needs one
    by one, by ``lookup(ref)`` where a source has it, else by providing it. Here some sources
    raise from both, from the start (one of them always answers ``lookup(ref)``), whatever they
    raise. Each read, as the first read of a fresh registry, must succeed and answer what the
    same read answers once loaded over the same sources without the fault (a source that never
    provided contributes nothing). Not applicable to a registry without the resolver role.
    """
    if not kit.session.roles["resolver"].present:
        return

    async def body(
        example: tuple[
            Vocabulary, list[SourceSpec], list[bool], list[bool], int, type[BaseException]
        ],
    ) -> None:
        words, specs, lookups, failing, broken, error = example
        broken %= len(specs)
        raising = [index for index in range(len(specs)) if index == broken or failing[index]]
        looking = [lookup or index == broken for index, lookup in enumerate(lookups)]
        healthy = [
            dataclasses.replace(spec, content=()) if index in raising else spec
            for index, spec in enumerate(specs)
        ]
        expected = await _loaded_answers(
            await make_registry(kit, _sources(words, healthy, looking)), words
        )
        faulty = [
            dataclasses.replace(spec, failing=error) if index in raising else spec
            for index, spec in enumerate(specs)
        ]
        for index in range(len(expected)):
            registry = await make_registry(kit, _sources(words, faulty, looking))
            label, read = _reads(registry, words)[index]
            how = (
                f"as the first read of a fresh registry whose sources {raising} raise "
                f"{error.__name__} from provide() (and from lookup(ref), sources "
                f"{[i for i in raising if looking[i]]})"
            )
            try:
                answer = await read()
            except LawViolation:
                raise
            except BaseException as exc:
                if not isinstance(exc, Exception) and not uncontained(exc):
                    raise
                raise LawViolation(
                    f"{label} raised {type(exc).__name__}: {exc} {how}; every read "
                    "succeeds whatever a source raises"
                ) from exc
            if answer != expected[label]:
                raise LawViolation(
                    f"{label} answered {_describe(answer)} {how}, but "
                    f"{_describe(expected[label])} once loaded over the same sources without "
                    f"the fault{_differences(expected[label], answer)}: a raising source "
                    "costs at most its own elements"
                )

    kit.given(
        st.tuples(
            vocabularies(),
            _contested(),
            st.lists(st.booleans(), min_size=4, max_size=4),
            st.lists(st.booleans(), min_size=4, max_size=4),
            st.integers(min_value=0, max_value=3),
            st.sampled_from(PLANS["registry.source-isolation"].failures),
        ),
        body,
        name="registry_source_isolation_per_name",
    )
