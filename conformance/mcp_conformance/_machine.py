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
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, final

import anyio
import anyio.lowlevel
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
    LawViolation,
    Listing,
    RegistryUnderTest,
    Role,
    RoleStatus,
    checked,
    probe_roles,
)
from mcp_conformance._kit import Kit
from mcp_conformance._universe import (
    ALL_SLOTS,
    SourceSpec,
    Universe,
    collection,
    element,
    probe_uri,
    ref_of,
    slots,
    source_specs,
)
from mcp_conformance.faults import MutableSource, is_invalid
from mcp_core.elements import Definition, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import SourceError, SourceUnavailableError

__all__ = ["PLANS", "Plan", "make_registry", "run_machine"]

T = TypeVar("T")

_GENERIC_FAILURES: Final[tuple[type[Exception], ...]] = (
    RuntimeError,
    SourceError,
    ValueError,
    OSError,
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """One law's run: what it asserts after every step and which faults it injects."""

    law: str
    asserts: Literal["model", "precedence", "resolver", "twin", "steps"]
    faults: Literal["none", "raising", "unavailable", "invalid"] = "none"
    events: bool = False
    inverse: bool = False

    @property
    def failures(self) -> tuple[type[Exception], ...]:
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
    )
}


async def make_registry(kit: Kit, pairs: Sequence[tuple[object, int]]) -> RegistryUnderTest:
    """Call the target's factory (on the running loop, so it may create loop-bound state)."""
    obj = kit.target.factory(list(pairs))
    return RegistryUnderTest(obj, probe_roles(obj, kit.capabilities))


@final
class _Twin:
    """The well-behaved stand-in for a kit source in the isolation runs.

    It provides what the original would if failures and invalid elements cost only themselves:
    the original's content without invalid elements, or, while the original raises, the last
    good collection the oracle recorded for it (nothing if there is none). It keeps no state
    of its own, so a registry that provides more often than it should cannot skew it.
    """

    def __init__(self, original: MutableSource, universe: Universe, index: int) -> None:
        self.original = original
        self.universe = universe
        self.index = index

    def __repr__(self) -> str:
        return f"_Twin({self.original!r})"

    def kinds(self) -> ElementKind:
        return self.original.declared

    async def provide(self) -> ElementCollection:
        await anyio.lowlevel.checkpoint()
        if self.original.fail_with is None:
            content: ElementCollection | None = self.original.content
        else:
            content = self.universe.sources[self.index].last_good
        return ElementCollection(e for e in content or () if not is_invalid(e))


@final
class _Loop:
    """One event loop for a whole machine run: the registry's loop-bound state lives across steps.

    (Not ``asyncio.Runner``: it reinstalls a SIGINT handler on every ``run``, which costs more
    than the steps themselves.)
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, awaitable: Awaitable[T]) -> T:
        return self._loop.run_until_complete(awaitable)

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


def _show(definition: Definition) -> str:
    return f"{definition.ref} from {definition.description}"


def run_machine(kit: Kit, plan: Plan, roles: dict[Role, RoleStatus]) -> None:
    """Run ``plan``'s state machine against the target under the profile's settings."""
    run_state_machine_as_test(_machine(kit, plan, roles), settings=kit.settings())


def _machine(kit: Kit, plan: Plan, roles: dict[Role, RoleStatus]) -> type[RuleBasedStateMachine]:  # noqa: C901 -- one machine, its rules enabled by the plan
    writer = roles["writer"].present
    deferred = roles["deferred"].present
    resolver = roles["resolver"].present
    composes = kit.capabilities.composes_sources
    invalid = plan.faults == "invalid"
    specs = source_specs(invalid=invalid, failures=plan.failures) if composes else st.just([])

    class RegistryMachine(RuleBasedStateMachine):
        """Random registry lifecycles for one law."""

        def __init__(self) -> None:
            super().__init__()
            kit.counted()
            self.loop = _Loop()
            self.universe = Universe()
            self.sources: list[MutableSource] = []
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

        def origin(self, what: str) -> str:
            self.serial += 1
            return f"{what} #{self.serial}"

        def outcomes(self) -> list[ElementCollection | None]:
            return [None if s.fail_with is not None else s.content for s in self.sources]

        def step(
            self,
            action: Callable[[RegistryUnderTest], Awaitable[T]],
            *,
            touched: ElementKind = ElementKind.NONE,
            loads: bool = False,
            reloads: bool = False,
        ) -> T:
            """Apply ``action`` to the registry (and its twin), update the oracle, check events."""
            initial = (loads or reloads) and not self.universe.loaded
            before: Listing | None = None
            mark = len(self.events)
            if plan.events and self.universe.loaded:
                before = self.run(self.registry.listing())
            result = self.run(action(self.registry))
            for twin in self.registries[1:]:
                self.run(action(twin))
            if reloads or initial:
                touched_by_load = self.universe.provided(self.outcomes())
                if reloads and not initial:
                    touched |= touched_by_load
            if plan.events:
                self.check_events(mark, before, touched, initial=initial)
            return result

        # -- rules --------------------------------------------------------------------------------

        @initialize(specs=specs)
        def build(self, specs: list[SourceSpec]) -> None:
            for index, spec in enumerate(specs):
                source = MutableSource(collection(spec.content, f"source {index} v0"))
                if spec.failing is not None:
                    source.fail_with = spec.failing(f"source {index} is down")
                self.sources.append(source)
            self.universe = Universe.over([spec.priority for spec in specs])
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
        @rule(slot=st.sampled_from(ALL_SLOTS))
        def register(self, slot: tuple[ElementKind, str]) -> None:
            kind, key = slot
            new = element(kind, key, self.origin("runtime"))
            self.step(lambda registry: registry.register(new), touched=kind)
            self.universe.runtime[new.ref] = new

        @precondition(lambda _: writer)
        @rule(slot=st.sampled_from(ALL_SLOTS))
        def unregister(self, slot: tuple[ElementKind, str]) -> None:
            ref = ref_of(*slot)
            held = ref in self.universe.runtime
            removed = self.step(
                lambda registry: registry.unregister(ref),
                touched=ref.kind if held else ElementKind.NONE,
            )
            if plan.asserts == "model" and removed is not held:
                raise LawViolation(
                    f"unregister({ref}) returned {removed}, but there was "
                    f"{'a' if held else 'no'} runtime registration at that ref"
                )
            self.universe.runtime.pop(ref, None)

        @rule()
        def read(self) -> None:
            self.step(lambda registry: registry.listing(), loads=True)

        @precondition(lambda self: not self.universe.loaded)
        @rule(readers=st.integers(min_value=2, max_value=5))
        def concurrent_first_reads(self, readers: int) -> None:
            async def together(registry: RegistryUnderTest) -> None:
                reads: list[Callable[[], Coroutine[Any, Any, object]]] = [
                    registry.tools,
                    registry.prompts,
                    registry.resources,
                    registry.resource_templates,
                ]
                if resolver:
                    reads += [
                        lambda: registry.get_tool("a"),
                        lambda: registry.get_resource("kit://res/a"),
                    ]
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
        def change_content(
            self, index: int, content: list[tuple[tuple[ElementKind, str], bool]]
        ) -> None:
            # An outside change: the registry must not see it before a reload.
            index %= len(self.sources)
            self.sources[index].content = collection(content, self.origin(f"source {index}"))

        @precondition(lambda self: bool(plan.failures) and self.universe.loaded and self.sources)
        @rule(
            index=st.integers(min_value=0, max_value=3),
            error=st.sampled_from(plan.failures or (RuntimeError,)),
        )
        def break_source(self, index: int, error: type[Exception]) -> None:
            index %= len(self.sources)
            self.sources[index].fail_with = error(f"source {index} is down")

        @precondition(lambda self: bool(plan.failures) and self.sources)
        @rule(index=st.integers(min_value=0, max_value=3))
        def heal_source(self, index: int) -> None:
            self.sources[index % len(self.sources)].fail_with = None

        @precondition(lambda _: invalid and writer)
        @rule(slot=st.sampled_from(ALL_SLOTS))
        def register_invalid(self, slot: tuple[ElementKind, str]) -> None:
            bad = element(*slot, self.origin("invalid runtime"), invalid=True)

            async def attempt(registry: RegistryUnderTest) -> None:
                if registry is not self.registry:
                    return  # the twin never sees the invalid element
                # Rejecting the write (raising) is one correct answer; accepting and skipping it,
                # the other.
                with contextlib.suppress(Exception):
                    await registry.register(bad)

            self.step(attempt)

        @precondition(lambda _: plan.inverse and writer)
        @rule(slot=st.sampled_from(ALL_SLOTS))
        def register_then_unregister(self, slot: tuple[ElementKind, str]) -> None:
            ref = ref_of(*slot)
            if ref in self.universe.runtime:
                return  # the law is about a ref without a runtime registration of its own
            new = element(*slot, self.origin("runtime"))
            before = self.step(lambda registry: registry.listing(), loads=True)
            self.run(self.registry.register(new))
            removed = self.run(self.registry.unregister(ref))
            after = self.run(self.registry.listing())
            if removed is not True:
                raise LawViolation(f"unregister({ref}) returned {removed} right after register()")
            if after != before:
                raise LawViolation(
                    f"register() then unregister() of {ref} changed the catalogue: "
                    f"{_describe_change(before, after)}"
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
            missing = sorted(str(ref) for ref in expected - set(counts))
            extra = sorted(str(ref) for ref in set(counts) - expected)
            if missing or extra:
                raise LawViolation(
                    f"the catalogue does not match the model: missing {missing or 'nothing'}, "
                    f"unexpected {extra or 'nothing'}"
                )
            for definition in listing.definitions:
                held = [c.definition for c in self.universe.candidates(definition.ref)]
                if definition not in held:
                    raise LawViolation(
                        f"the catalogue lists {_show(definition)}, which no source or runtime "
                        f"registration holds now (candidates: {[_show(d) for d in held]})"
                    )

        def check_precedence(self) -> None:
            listing = self.run(self.registry.listing())
            winners = self.universe.winners()
            listed: dict[ElementRef, set[Definition]] = {}
            for definition in listing.definitions:
                listed.setdefault(definition.ref, set()).add(definition)
            for ref, found in listed.items():
                winner = winners.get(ref)
                if winner is not None and found != {winner}:
                    ranking = [_show(c.definition) for c in self.universe.candidates(ref)]
                    raise LawViolation(
                        f"{ref}: the catalogue lists {sorted(_show(d) for d in found)}, but "
                        f"precedence picks {_show(winner)} (candidates, best first: {ranking})"
                    )

        def check_resolver(self) -> None:
            self.run(self.resolver_agrees())

        async def resolver_agrees(self) -> None:
            listing = await self.registry.listing()
            listed = {definition.ref: definition for definition in listing.definitions}
            for kind, key in ALL_SLOTS:
                ref = ref_of(kind, key)
                found = await self.resolve(ref)
                if ref in listed and found != listed[ref]:
                    shown = _show(found) if found is not None else "nothing"
                    raise LawViolation(
                        f"{ref} is listed as {_show(listed[ref])} but resolves to {shown}"
                    )
                if ref not in listed and found is not None:
                    raise LawViolation(f"{ref} is not listed but resolves to {_show(found)}")

        async def resolve(self, ref: ElementRef) -> Definition | None:
            registry = self.registry
            if ref.kind is ElementKind.TOOL:
                found = await registry.get_tool(ref.key)
            elif ref.kind is ElementKind.PROMPT:
                found = await registry.get_prompt(ref.key)
            else:
                resolved = await registry.get_resource(probe_uri(ref) or ref.key)
                found = resolved.element if resolved is not None else None
            return found.definition if found is not None else None

        def check_twin(self) -> None:
            served = self.run(self.registry.listing())
            healthy = self.run(self.registries[1].listing())
            if served.changed_kinds(healthy):
                raise LawViolation(
                    f"the fault cost more than itself: {_describe_change(healthy, served)} "
                    "(compared with the same registry over sources without the fault)"
                )

        def check_events(
            self, mark: int, before: Listing | None, touched: ElementKind, *, initial: bool
        ) -> None:
            after = self.run(self.registry.listing()) if before is not None else None
            emitted = [
                checked(kinds, ElementKind, what="a change event") for kinds in self.events[mark:]
            ]
            if len(emitted) > 1:
                raise LawViolation(f"one operation emitted {len(emitted)} changes: {emitted}")
            if initial:
                if emitted:
                    raise LawViolation(f"the initial load emitted {emitted[0].label}")
                return
            event: ElementKind = emitted[0] if emitted else ElementKind.NONE
            if event & ~touched:
                raise LawViolation(
                    f"emitted {event.label} for an operation that touched only "
                    f"{touched.label or 'nothing'}"
                )
            if before is None or after is None:
                return  # a write before the initial load: nothing was listed yet to change
            changed = before.changed_kinds(after)
            if changed & ~event:
                raise LawViolation(
                    f"the catalogue changed for {changed.label} "
                    f"({_describe_change(before, after)}) but the change emitted was "
                    f"{event.label or 'none'}"
                )

    return RegistryMachine


def _describe_change(before: Listing, after: Listing) -> str:
    parts = []
    old, new = Counter(before.definitions), Counter(after.definitions)
    gone = sorted(_show(d) for d in old - new)
    came = sorted(_show(d) for d in new - old)
    if gone:
        parts.append(f"lost {gone}")
    if came:
        parts.append(f"gained {came}")
    if not parts:
        parts.append("same definitions, different order")
    return "; ".join(parts)
