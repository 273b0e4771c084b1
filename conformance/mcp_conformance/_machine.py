"""The registry state machine: random lifecycles checked against the oracle after every step.

One machine serves every model-based law. A :class:`Plan` says which faults the run injects and
which law it asserts; every other law is left to its own run, so a registry that breaks one law
fails that law's run and no other. Three kinds of assertion:

- against the oracle (:class:`~mcp_conformance._universe.Universe`): ``registry.model`` (which
  refs are listed, each a real candidate), ``registry.precedence`` (which candidate wins);
- against the registry itself: ``registry.resolver-agrees`` (the resolver answers what the
  catalogue lists), ``registry.register-inverse``, ``registry.change-events`` (events against
  the catalogue's own before/after);
- against a twin: the isolation laws run a second registry from the same factory whose sources
  never misbehave (a failing source's twin serves its last good collection, an invalid element
  is simply absent). "A fault costs only itself" then means: both list the same. A registry with
  an unrelated bug has it in both, so it does not fail the isolation laws for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, final

import anyio
import anyio.lowlevel
from hypothesis import seed
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from mcp_conformance._contract import (
    KitBaseException,
    LawViolation,
    Listing,
    RegistryUnderTest,
    Role,
    RoleStatus,
    checked,
    escaped,
    probe_roles,
    uncontained,
)
from mcp_conformance._diff import diff_definitions, diff_lists
from mcp_conformance._kit import Kit
from mcp_conformance._universe import (
    ALL_SLOTS,
    ContentItem,
    Features,
    Slot,
    SourceSpec,
    Universe,
    Vocabulary,
    collection,
    features,
    listed_matches,
    make_element,
    show,
    slots,
    source_specs,
    vocabularies,
)
from mcp_conformance.faults import MutableSource, is_invalid
from mcp_core.elements import (
    SINGLE_KINDS,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
)
from mcp_core.errors import SourceError, SourceUnavailableError

__all__ = [
    "PLANS",
    "Plan",
    "describe_change",
    "expected_resolutions",
    "make_registry",
    "reads_of",
    "resolve_all",
    "resolver_agrees",
    "run_machine",
]

T = TypeVar("T")

_GENERIC_FAILURES: Final[tuple[type[BaseException], ...]] = (
    RuntimeError,
    SourceError,
    ValueError,
    OSError,
    SystemExit,
    KitBaseException,
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """One law's run: what it asserts after every step and which faults it injects."""

    law: str
    asserts: Literal["model", "precedence", "resolver", "twin", "steps"]
    faults: Literal["none", "raising", "unavailable", "invalid", "undeclared"] = "none"
    events: bool = False
    inverse: bool = False

    @property
    def failures(self) -> tuple[type[BaseException], ...]:
        """What failing sources raise in this run."""
        if self.faults == "raising":
            return _GENERIC_FAILURES
        if self.faults == "unavailable":
            return (SourceUnavailableError,)
        return ()


PLANS: Final[dict[str, Plan]] = {
    plan.law: plan
    for plan in (
        Plan(law="registry.model", asserts="model"),
        Plan(law="registry.precedence", asserts="precedence"),
        Plan(law="registry.resolver-agrees", asserts="resolver"),
        Plan(law="registry.change-events", asserts="steps", events=True),
        Plan(law="registry.register-inverse", asserts="steps", inverse=True),
        Plan(law="registry.source-isolation", asserts="twin", faults="raising"),
        Plan(law="registry.unavailable-keeps-last-good", asserts="twin", faults="unavailable"),
        Plan(law="registry.element-isolation", asserts="twin", faults="invalid"),
        Plan(law="registry.undeclared-kinds", asserts="twin", faults="undeclared"),
    )
}


async def make_registry(kit: Kit, pairs: Sequence[tuple[object, int]]) -> RegistryUnderTest:
    """Call the target's factory (on the running loop, so it may create loop-bound state)."""
    obj = kit.target.factory(list(pairs))
    return RegistryUnderTest(obj, probe_roles(obj, kit.capabilities))


@final
class _Twin:
    """The well-behaved stand-in for a kit source in the isolation runs.

    It provides what the original would if failures, invalid elements and elements of undeclared
    kinds cost only themselves: the original's content without them, or, while the original
    raises, the last good collection the oracle recorded for it (nothing if there is none). It
    takes as many turns of the event loop as the original, so both registries see their sources
    finish in the same order. It keeps no state of its own, so a registry that provides more
    often than it should cannot skew it.
    """

    def __init__(self, original: MutableSource, universe: Universe, index: int) -> None:
        self.original = original
        self.universe = universe
        self.index = index

    def __repr__(self) -> str:
        return f"_Twin({self.original!r})"

    def kinds(self) -> ElementKind:
        return self.declared

    @property
    def declared(self) -> ElementKind:
        """What the original declares: nothing when its ``kinds()`` raises."""
        if self.original.kinds_fail_with is not None:
            return ElementKind.NONE
        return self.original.declared

    async def provide(self) -> ElementCollection:
        for _ in range(self.original.turns + 1):
            await anyio.lowlevel.checkpoint()
        if self.original.fail_with is None:
            content: ElementCollection | None = self.original.content
        else:
            content = self.universe.sources[self.index].last_good
        declared = self.declared
        return ElementCollection(
            e for e in content or () if not is_invalid(e) and e.kind & declared
        )


@final
class _Loop:
    """One event loop for a whole machine run: the registry's loop-bound state lives across steps.

    (Not ``asyncio.Runner``: it reinstalls a SIGINT handler on every ``run``, which costs more
    than the steps themselves.)
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, awaitable: Awaitable[T]) -> T:
        try:
            return self._loop.run_until_complete(awaitable)
        except BaseException as exc:
            if uncontained(exc):
                raise escaped(exc) from exc
            raise

    def close(self) -> None:
        loop = self._loop
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def run_machine(kit: Kit, plan: Plan, roles: dict[Role, RoleStatus]) -> None:
    """Run ``plan``'s state machine against the target under the profile's settings."""
    machine = _machine(kit, plan, roles)
    if kit.session.seed is not None:
        machine = seed(kit.session.seed)(machine)
    run_state_machine_as_test(machine, settings=kit.settings())


def _machine(kit: Kit, plan: Plan, roles: dict[Role, RoleStatus]) -> type[RuleBasedStateMachine]:  # noqa: C901 -- one machine, its rules enabled by the plan
    writer = roles["writer"].present
    deferred = roles["deferred"].present
    composes = kit.capabilities.composes_sources
    invalid = plan.faults == "invalid"
    specs = (
        source_specs(
            invalid=invalid,
            failures=plan.failures,
            undeclared=plan.faults == "undeclared",
            ties=True,
        )
        if composes
        else st.just([])
    )
    slot_strategy = st.sampled_from(ALL_SLOTS)

    class RegistryMachine(RuleBasedStateMachine):
        """Random registry lifecycles for one law."""

        def __init__(self) -> None:
            super().__init__()
            kit.counted()
            self.loop = _Loop()
            self.universe = Universe()
            self.vocabulary: Vocabulary | None = None
            self.sources: list[MutableSource] = []
            self.items: list[list[ContentItem]] = []
            """What each source's content was made of: its slots, flags and looks."""
            self.registries: list[RegistryUnderTest] = []
            self.events: list[object] = []
            self.serial = 0

        def teardown(self) -> None:
            self.loop.close()

        # -- plumbing ---------------------------------------------------------------------------

        def run(self, awaitable: Awaitable[T]) -> T:
            return self.loop.run(awaitable)

        @property
        def registry(self) -> RegistryUnderTest:
            return self.registries[0]

        @property
        def words(self) -> Vocabulary:
            assert self.vocabulary is not None  # noqa: S101 -- build() always runs first
            return self.vocabulary

        def origin(self, what: str) -> str:
            self.serial += 1
            return f"{what} #{self.serial}"

        def outcomes(self) -> list[ElementCollection | None]:
            return [None if s.fail_with is not None else s.content for s in self.sources]

        def step(
            self,
            action: Callable[[RegistryUnderTest], Awaitable[T]],
            *,
            loads: bool = False,
            reloads: bool = False,
        ) -> T:
            """Apply ``action`` to the registry (and its twin), update the oracle, check events."""
            initial = not self.universe.loaded
            before: Listing | None = None
            mark = len(self.events)
            if plan.events and not initial:
                before = self.run(self.registry.listing())
            result = self.run(action(self.registry))
            for twin in self.registries[1:]:
                self.run(action(twin))
            if reloads or (loads and initial):
                self.universe.provided(self.outcomes())
            if plan.events:
                self.check_events(mark, before)
            return result

        # -- rules --------------------------------------------------------------------------------

        @initialize(vocabulary=vocabularies(), specs=specs)
        def build(self, vocabulary: Vocabulary, specs: list[SourceSpec]) -> None:
            self.vocabulary = vocabulary
            self.sources = [
                spec.source(vocabulary, f"source {i} v0") for i, spec in enumerate(specs)
            ]
            self.items = [list(spec.content) for spec in specs]
            self.universe = Universe.over(specs)
            priorities = [spec.priority for spec in specs]
            self.registries.append(
                self.run(make_registry(kit, list(zip(self.sources, priorities, strict=True))))
            )
            if plan.asserts == "twin":
                twins = [
                    _Twin(source, self.universe, index) for index, source in enumerate(self.sources)
                ]
                self.registries.append(
                    self.run(make_registry(kit, list(zip(twins, priorities, strict=True))))
                )
            if plan.events:
                self.registry.subscribe(self.events.append)

        @precondition(lambda _: writer)
        @rule(slot=slot_strategy, data=st.data())
        def register(self, slot: Slot, data: st.DataObject) -> None:
            looks: Features = data.draw(features(slot[0]), label="looks")
            new = make_element(self.words, slot, self.origin("runtime"), looks)
            self.step(lambda registry: registry.register(new))
            self.universe.runtime[new.ref] = new

        @precondition(lambda self: writer and self.universe.loaded and self.held_by_sources())
        @rule(pick=st.integers(min_value=0, max_value=50))
        def register_copy(self, pick: int) -> None:
            # A runtime registration that repeats a source's definition (an equal definition, not
            # the same object): it changes no listed definition while it wins, nor when it goes.
            held = self.held_by_sources()
            element = held[pick % len(held)]
            copy = dataclasses.replace(element, definition=dataclasses.replace(element.definition))
            self.step(lambda registry: registry.register(copy))
            self.universe.runtime[copy.ref] = copy

        def held_by_sources(self) -> list[Element]:
            """At each ref the sources hold, the element that wins among them."""
            runtime = self.universe.runtime
            found = []
            for ref in sorted(self.universe.refs(), key=str):
                ranked = [c for c in self.universe.candidates(ref) if c is not runtime.get(ref)]
                found.extend(ranked[:1])
            return found

        @precondition(lambda _: writer)
        @rule(slot=slot_strategy, held=st.none() | st.integers(min_value=0, max_value=50))
        def unregister(self, slot: Slot, held: int | None) -> None:
            # Half the time a ref that has a runtime registration, if any has one.
            registered = sorted(self.universe.runtime, key=str)
            ref = (
                registered[held % len(registered)]
                if held is not None and registered
                else self.words.ref(slot)
            )
            there = ref in self.universe.runtime
            removed = self.step(lambda registry: registry.unregister(ref))
            if plan.asserts == "model" and removed is not there:
                raise LawViolation(
                    f"unregister({ref}) returned {removed}, but there was "
                    f"{'a' if there else 'no'} runtime registration at that ref"
                )
            self.universe.runtime.pop(ref, None)

        @rule()
        def read(self) -> None:
            self.step(lambda registry: registry.listing(), loads=True)

        @precondition(lambda self: not self.universe.loaded)
        @rule(readers=st.integers(min_value=2, max_value=5))
        def concurrent_first_reads(self, readers: int) -> None:
            probes = self.words

            async def together(registry: RegistryUnderTest) -> None:
                reads = list(reads_of(registry, probes).values())
                async with anyio.create_task_group() as group:
                    for index in range(readers):
                        group.start_soon(reads[index % len(reads)])

            self.step(together, loads=True)

        @precondition(lambda _: deferred)
        @rule()
        def load(self) -> None:
            self.step(lambda registry: registry.load(), loads=True)

        @precondition(lambda _: deferred)
        @rule()
        def reload(self) -> None:
            self.step(lambda registry: registry.reload(), reloads=True)

        @precondition(lambda self: self.universe.loaded and self.sources)
        @rule(index=st.integers(min_value=0, max_value=3), content=slots(invalid=invalid))
        def change_content(self, index: int, content: list[ContentItem]) -> None:
            # An outside change: the registry must not see it before a reload.
            index %= len(self.sources)
            self.sources[index].content = collection(
                self.words, content, self.origin(f"source {index}")
            )
            self.items[index] = content

        if plan.events:
            # Only where events are checked: a rule added to every plan would change the
            # derandomized draws of the laws that do not need it.

            @precondition(lambda self: self.universe.loaded and self.sources)
            @rule()
            def rewrite_every_source(self) -> None:
                # An outside change to every source at once: the same slots, looks and flags in a
                # new version (each element records it), so the next reload serves as many
                # elements under the same refs, none of them the same object or equal to it.
                for index, items in enumerate(self.items):
                    self.sources[index].content = collection(
                        self.words, items, self.origin(f"source {index}")
                    )

            @precondition(lambda self: writer and self.universe.loaded and self.held_by_sources())
            @rule(pick=st.integers(min_value=0, max_value=50))
            def copy_comes_and_goes(self, pick: int) -> None:
                # A copy of a definition a source holds, registered and unregistered again: it
                # changes no listed definition either time, so neither step may announce one (a
                # registry comparing definitions by identity does). Apart from register_copy and
                # unregister, which meet this way only now and then.
                held = self.held_by_sources()
                ref = held[pick % len(held)].ref
                self.register_copy(pick)
                self.step(lambda registry: registry.unregister(ref))
                self.universe.runtime.pop(ref, None)

        @precondition(lambda self: bool(plan.failures) and self.universe.loaded and self.sources)
        @rule(
            index=st.integers(min_value=0, max_value=3),
            error=st.sampled_from(plan.failures or (RuntimeError,)),
        )
        def break_source(self, index: int, error: type[BaseException]) -> None:
            index %= len(self.sources)
            self.sources[index].fail_with = error(f"source {index} is down")

        @precondition(lambda self: bool(plan.failures) and self.sources)
        @rule(index=st.integers(min_value=0, max_value=3))
        def heal_source(self, index: int) -> None:
            self.sources[index % len(self.sources)].fail_with = None

        @precondition(lambda _: invalid and writer)
        @rule(slot=slot_strategy)
        def register_invalid(self, slot: Slot) -> None:
            bad = make_element(self.words, slot, self.origin("invalid runtime"), invalid=True)

            async def attempt(registry: RegistryUnderTest) -> None:
                if registry is not self.registry:
                    return  # the twin never sees the invalid element
                # Rejecting the write (raising) is one correct answer; accepting and skipping it,
                # the other.
                with contextlib.suppress(Exception):
                    await registry.register(bad)

            self.step(attempt)

        @precondition(lambda _: plan.inverse and writer)
        @rule(slot=slot_strategy, data=st.data())
        def register_then_unregister(self, slot: Slot, data: st.DataObject) -> None:
            ref = self.words.ref(slot)
            if ref in self.universe.runtime:
                return  # the law is about a ref without a runtime registration of its own
            looks: Features = data.draw(features(slot[0]), label="looks")
            new = make_element(self.words, slot, self.origin("runtime"), looks)
            before = self.step(lambda registry: registry.listing(), loads=True)
            self.run(self.registry.register(new))
            removed = self.run(self.registry.unregister(ref))
            after = self.run(self.registry.listing())
            if removed is not True:
                raise LawViolation(f"unregister({ref}) returned {removed} right after register()")
            if after != before:
                raise LawViolation(
                    f"register() then unregister() of {ref} changed the catalogue: "
                    f"{describe_change(before, after)}"
                )

        # -- assertions --------------------------------------------------------------------------

        if plan.asserts != "steps":

            @precondition(lambda self: self.universe.loaded)
            @invariant()
            def agrees(self) -> None:
                if plan.asserts == "model":
                    self.check_model()
                elif plan.asserts == "precedence":
                    self.check_precedence()
                elif plan.asserts == "resolver":
                    self.check_resolver()
                else:
                    self.check_twin()

        def check_model(self) -> None:
            listing = self.run(self.registry.listing())
            counts = listing.refs()
            twice = sorted(str(ref) for ref, count in counts.items() if count > 1)
            if twice:
                raise LawViolation(f"the catalogue lists {', '.join(twice)} more than once")
            expected = self.universe.refs()
            missing = sorted(self.show_ref(ref) for ref in expected - set(counts))
            extra = sorted(str(ref) for ref in set(counts) - expected)
            if missing or extra:
                raise LawViolation(
                    f"the catalogue does not match the model: missing {missing or 'nothing'}, "
                    f"unexpected {extra or 'nothing'}"
                )
            for definition in listing.definitions:
                held = [c.definition for c in self.universe.candidates(definition.ref)]
                if definition not in held:
                    closest = "; ".join(diff_definitions(held[0], definition)) if held else ""
                    raise LawViolation(
                        f"the catalogue lists {show(definition)}, which no source or runtime "
                        f"registration holds now (candidates: {[show(d) for d in held]}"
                        + (f"; it differs from the first in {closest}" if closest else "")
                        + ")"
                    )

        def show_ref(self, ref: ElementRef) -> str:
            candidates = self.universe.candidates(ref)
            return show(candidates[0].definition) if candidates else str(ref)

        def check_precedence(self) -> None:
            listing = self.run(self.registry.listing())
            winners = self.universe.winners()
            listed: dict[ElementRef, set[Definition]] = {}
            for definition in listing.definitions:
                listed.setdefault(definition.ref, set()).add(definition)
            for ref, found in listed.items():
                winner = winners.get(ref)
                if winner is not None and found != {winner}:
                    ranking = [show(c.definition) for c in self.universe.candidates(ref)]
                    turns = [source.turns for source in self.sources]
                    raise LawViolation(
                        f"{ref}: the catalogue lists {sorted(show(d) for d in found)}, but "
                        f"precedence picks {show(winner)} (candidates, best first: {ranking}; "
                        f"the sources took {turns} turns of the event loop to provide)"
                    )

        def check_resolver(self) -> None:
            self.run(resolver_agrees(self.registry, self.words))

        def check_twin(self) -> None:
            served = self.run(self.registry.listing())
            healthy = self.run(self.registries[1].listing())
            if served.changed_kinds(healthy):
                raise LawViolation(
                    f"the fault cost more than itself: {describe_change(healthy, served)} "
                    "(compared with the same registry over sources without the fault)"
                )

        def check_events(self, mark: int, before: Listing | None) -> None:
            emitted = [
                checked(kinds, ElementKind, what="a change event") for kinds in self.events[mark:]
            ]
            if before is None:
                if emitted:
                    raise LawViolation(
                        f"emitted {[e.label or 'no kinds' for e in emitted]} before the first load "
                        "completed (nothing is emitted until a catalogue has been loaded)"
                    )
                return
            after = self.run(self.registry.listing())
            changed = before.changed_kinds(after)
            if len(emitted) > 1:
                raise LawViolation(
                    f"one operation emitted {len(emitted)} changes "
                    f"{[e.label or 'no kinds' for e in emitted]}; it must emit one, "
                    f"for {changed.label or 'nothing (so none at all)'}"
                )
            event = emitted[0] if emitted else None
            if event is not None and not event:
                raise LawViolation("emitted a change of no kinds (ElementKind.NONE)")
            if (event or ElementKind.NONE) != changed:
                what = f"emitted {event.label}" if event is not None else "emitted nothing"
                raise LawViolation(
                    f"{what}, but the listed definitions changed for "
                    f"{changed.label or 'no kind'}"
                    + (f" ({describe_change(before, after)})" if changed else "")
                )

    return RegistryMachine


def reads_of(
    registry: RegistryUnderTest, words: Vocabulary
) -> dict[str, Callable[[], Coroutine[Any, Any, object]]]:
    """Every read the registry's roles offer, each a zero-argument coroutine function."""
    reads: dict[str, Callable[[], Coroutine[Any, Any, object]]] = {}
    if registry.plays("catalog"):
        reads.update(
            tools=registry.tools,
            resources=registry.resources,
            resource_templates=registry.resource_templates,
            prompts=registry.prompts,
        )
    if registry.plays("resolver"):
        tool, prompt, uri = words.tools[0], words.prompts[0], words.probe_uris()[-1]
        reads[f"get_tool({tool!r})"] = lambda: registry.get_tool(tool)
        reads[f"get_prompt({prompt!r})"] = lambda: registry.get_prompt(prompt)
        reads[f"get_resource({uri!r})"] = lambda: registry.get_resource(uri)
    return reads


async def resolve_all(
    registry: RegistryUnderTest, words: Vocabulary
) -> dict[str, Definition | None]:
    """What every probe of the vocabulary resolves to, by probe."""
    found: dict[str, Definition | None] = {}
    for name in words.tools:
        element = await registry.get_tool(name)
        found[f"get_tool({name!r})"] = element.definition if element is not None else None
    for name in words.prompts:
        element = await registry.get_prompt(name)
        found[f"get_prompt({name!r})"] = element.definition if element is not None else None
    for uri in words.probe_uris():
        resolved = await registry.get_resource(uri)
        found[f"get_resource({uri!r})"] = (
            resolved.element.definition if resolved is not None else None
        )
    return found


def expected_resolutions(listing: Listing, words: Vocabulary) -> dict[str, tuple[Definition, ...]]:
    """What every probe may resolve to given ``listing`` (empty: nothing may resolve).

    A URI may resolve to any listed element matching it: which one wins is registry.templates.
    """
    listed = {definition.ref: definition for definition in listing.definitions}
    expected: dict[str, tuple[Definition, ...]] = {}
    for name in words.tools:
        found = listed.get(ElementRef(ElementKind.TOOL, name))
        expected[f"get_tool({name!r})"] = (found,) if found is not None else ()
    for name in words.prompts:
        found = listed.get(ElementRef(ElementKind.PROMPT, name))
        expected[f"get_prompt({name!r})"] = (found,) if found is not None else ()
    for uri in words.probe_uris():
        expected[f"get_resource({uri!r})"] = listed_matches(listed, uri)
    return expected


async def resolver_agrees(registry: RegistryUnderTest, words: Vocabulary) -> None:
    """Everything listed resolves to the listed definition; nothing unlisted resolves."""
    listing = await registry.listing()
    expected = expected_resolutions(listing, words)
    for probe, found in (await resolve_all(registry, words)).items():
        allowed = expected[probe]
        if found is None and allowed:
            raise LawViolation(f"{probe} resolved to nothing, but {show(allowed[0])} is listed")
        if found is not None and found not in allowed:
            if not allowed:
                raise LawViolation(
                    f"{probe} resolved to {show(found)}, which the catalogue does not list"
                    + (
                        " (matching template, but not listed)"
                        if found.ref.kind is ElementKind.RESOURCE_TEMPLATE
                        else ""
                    )
                )
            same_ref = [d for d in allowed if d.ref == found.ref]
            raise LawViolation(
                f"{probe} resolved to {show(found)}, but the catalogue lists "
                + (
                    f"{show(same_ref[0])}; they differ in "
                    f"{'; '.join(diff_definitions(same_ref[0], found))}"
                    if same_ref
                    else f"only {' or '.join(show(d) for d in allowed)} for it"
                )
            )


def describe_change(before: Listing, after: Listing) -> str:
    """What changed between two listings, kind by kind."""
    parts = [
        f"{kind.label}: {diff_lists(before.of(kind), after.of(kind), show=show)}"
        for kind in SINGLE_KINDS
        if Counter(before.of(kind)) != Counter(after.of(kind))
    ]
    return "; ".join(parts) or "same definitions, in another order"
