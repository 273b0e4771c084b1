"""Registry laws: one check each, model-based where a sequence of operations matters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

import anyio
import anyio.lowlevel
from hypothesis import strategies as st

from mcp_conformance._checks._needs import Needs, require
from mcp_conformance._checks.registry_resolved_laws import check_per_name_isolation
from mcp_conformance._contract import (
    KitBaseException,
    LawViolation,
    RegistryUnderTest,
    Role,
    RoleStatus,
    uncontained,
)
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._machine import (
    PLANS,
    describe_change,
    make_registry,
    reads_of,
    run_machine,
)
from mcp_conformance._universe import (
    ALL_SLOTS,
    ContentItem,
    Features,
    Slot,
    SourceSpec,
    Vocabulary,
    collection,
    features,
    make_element,
    show,
    slots,
    source_specs,
    vocabularies,
)
from mcp_conformance.faults import MutableSource, SlowSource
from mcp_conformance.strategies import element_kinds
from mcp_core.elements import (
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Resource,
    ResourceTemplate,
    UriTemplate,
    most_specific_first,
)
from mcp_core.registry import ResolvedResource

# -- what each law needs -------------------------------------------------------------------------


_EVENTS: Final = Needs(roles=("change_events", "catalog"), changes=True)
_NEEDS: Final[dict[str, Needs]] = {
    "registry.model": Needs(roles=("catalog",)),
    "registry.resolver-agrees": Needs(roles=("catalog", "resolver")),
    "registry.load-idempotent": Needs(roles=("deferred", "catalog"), sources=True),
    "registry.single-flight": Needs(sources=True),
    "registry.first-read-complete": Needs(sources=True),
    "registry.lazy": Needs(sources=True),
    "registry.precedence": Needs(roles=("catalog",), sources=True),
    "registry.element-isolation": Needs(roles=("catalog",)),
    "registry.undeclared-kinds": Needs(roles=("catalog",), sources=True),
    "registry.source-isolation": Needs(roles=("catalog",), sources=True),
    "registry.unavailable-keeps-last-good": Needs(roles=("catalog", "deferred"), sources=True),
    "registry.reload-atomic": Needs(roles=("deferred",), sources=True),
    "registry.register-inverse": Needs(roles=("catalog", "writer")),
    "registry.templates": Needs(roles=("resolver",)),
    "registry.honest-kinds": Needs(roles=("deferred",)),
    "registry.change-events": _EVENTS,
    "registry.listener-isolation": _EVENTS,
    "registry.unsubscribe": _EVENTS,
}


def _require(kit: Kit, law_id: str) -> dict[Role, RoleStatus]:
    roles = require(kit, _NEEDS[law_id])
    capabilities = kit.capabilities
    if law_id == "registry.element-isolation" and not capabilities.validates_elements:
        kit.not_applicable(
            f"not claimed (validates_elements=False): {capabilities.reason}", why="declared"
        )
    return roles


def _over(words: Vocabulary, specs: Sequence[SourceSpec]) -> list[tuple[MutableSource, int]]:
    return [(spec.source(words, f"source {i}"), spec.priority) for i, spec in enumerate(specs)]


def _provided(sources: Sequence[tuple[MutableSource | SlowSource, int]]) -> list[int]:
    return [source.provides for source, _ in sources]


async def _first_load(registry: RegistryUnderTest) -> None:
    """Load the catalogue the way the registry offers: load(), else a first read."""
    if registry.plays("deferred"):
        await registry.load()
    elif registry.plays("catalog"):
        await registry.tools()
    else:
        await registry.get_tool("a")


# -- model-based laws ----------------------------------------------------------------------------


def _model_based(kit: Kit, law_id: str) -> None:
    run_machine(kit, PLANS[law_id], _require(kit, law_id))


@checks("registry.model")
def test_registry_model(kit: Kit) -> None:
    """The catalogue lists exactly the model's refs, each a definition some input holds now."""
    _model_based(kit, "registry.model")


@checks("registry.resolver-agrees")
def test_registry_resolver_agrees(kit: Kit) -> None:
    """Everything listed resolves to the listed definition; nothing unlisted resolves."""
    _model_based(kit, "registry.resolver-agrees")


@checks("registry.precedence")
def test_registry_precedence(kit: Kit) -> None:
    """Each listed ref shows the winner, whatever order the sources finish providing in."""
    _model_based(kit, "registry.precedence")


@checks("registry.element-isolation")
def test_registry_element_isolation(kit: Kit) -> None:
    """Invalid elements (wrong-kind handlers) cost only themselves."""
    _model_based(kit, "registry.element-isolation")


@checks("registry.undeclared-kinds")
def test_registry_undeclared_kinds(kit: Kit) -> None:
    """Elements of kinds their source does not declare are skipped, and cost only themselves."""
    _model_based(kit, "registry.undeclared-kinds")


@checks("registry.source-isolation")
def test_registry_source_isolation(kit: Kit) -> None:
    """Raising sources cost at most their own elements, and every read succeeds.

    Before the first load too: per-name reads that ask raising sources (check_per_name_isolation).
    """
    _model_based(kit, "registry.source-isolation")
    check_per_name_isolation(kit)


@checks("registry.unavailable-keeps-last-good")
def test_registry_unavailable_keeps_last_good(kit: Kit) -> None:
    """A source raising SourceUnavailableError keeps serving its last good collection."""
    _model_based(kit, "registry.unavailable-keeps-last-good")


@checks("registry.register-inverse")
def test_registry_register_inverse(kit: Kit) -> None:
    """register(e) then unregister(e.ref) gives back the catalogue exactly, in any state."""
    _model_based(kit, "registry.register-inverse")


@checks("registry.change-events")
def test_registry_change_events(kit: Kit) -> None:
    """One event per operation with exactly the changed kinds; nothing before the first load."""
    _model_based(kit, "registry.change-events")


# -- lifecycle laws, checked directly ------------------------------------------------------------

_writes: Final = st.lists(st.tuples(st.booleans(), st.sampled_from(ALL_SLOTS)), max_size=4)


@checks("registry.lazy")
def test_registry_lazy(kit: Kit) -> None:
    """Construction, subscriptions, writes, `loaded` and kinds() provide nothing."""
    roles = _require(kit, "registry.lazy")

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[tuple[bool, Slot]]],
    ) -> None:
        words, specs, writes = example
        sources = _over(words, specs)
        registry = await make_registry(kit, sources)
        # Give anything the factory scheduled on the loop (an eager background load) its chance.
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        if roles["change_events"].present:
            unsubscribe = registry.subscribe(lambda _: None)
            unsubscribe()
        if roles["deferred"].present:
            _ = registry.loaded
            registry.kinds()
        if roles["writer"].present:
            for register, slot in writes:
                if register:
                    await registry.register(make_element(words, slot, "runtime"))
                else:
                    await registry.unregister(words.ref(slot))
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        eager = [index for index, count in enumerate(_provided(sources)) if count]
        if eager:
            raise LawViolation(
                f"source(s) {eager} were provided before any catalogue or resolver call or load() "
                f"(after construction{', writes' if writes and roles['writer'].present else ''})"
            )

    kit.given(
        st.tuples(vocabularies(), source_specs(min_sources=1), _writes),
        body,
        name="registry_lazy",
    )


_picks: Final = st.lists(st.integers(min_value=0, max_value=20), min_size=2, max_size=6)


@checks("registry.single-flight")
def test_registry_single_flight(kit: Kit) -> None:
    """Concurrent first catalogue/resolver calls share one load: each source provided once."""
    _require(kit, "registry.single-flight")

    async def body(example: tuple[Vocabulary, list[SourceSpec], list[int]]) -> None:
        words, specs, picks = example
        # Slow sources keep the first load in flight while the other readers arrive.
        sources = [
            (SlowSource(collection(words, spec.content, f"source {i}"), delay=0.001), spec.priority)
            for i, spec in enumerate(specs)
        ]
        registry = await make_registry(kit, sources)
        reads = reads_of(registry, words)
        names = [sorted(reads)[pick % len(reads)] for pick in picks]
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(reads[name])
        # A per-name read may provide only the sources it needs; the catalogue then completes the
        # load, providing each of the others once and none twice.
        await registry.tools()
        counts = [source.provides for source, _ in sources]
        if any(count != 1 for count in counts):
            overlapping = max(source.max_in_flight for source, _ in sources)
            raise LawViolation(
                f"{len(names)} concurrent first reads ({', '.join(names)}) provided the sources "
                f"{counts} times, up to {overlapping} at once (each must be provided exactly once)"
            )

    kit.given(
        st.tuples(vocabularies(), source_specs(min_sources=1), _picks),
        body,
        name="registry_single_flight",
    )


ReadValue: TypeAlias = Counter[Definition] | Definition | None
"""What a read answered, comparable: a list as a multiset (order is not this law's business), a
lookup as the definition found."""


async def _read_value(read: Callable[[], Awaitable[object]]) -> ReadValue:
    answer = await read()
    if isinstance(answer, Sequence):
        return Counter(answer)
    if isinstance(answer, ResolvedResource):
        return answer.element.definition
    if isinstance(answer, Element):
        return answer.definition
    return None  # RegistryUnderTest checked the type: nothing was found


def _shown(value: ReadValue) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Counter):
        return f"{sorted(show(d) for d in value.elements())}" if value else "an empty list"
    return show(value)


Write: TypeAlias = tuple[Slot, int]
"""A runtime registration at a slot, started after that many turns of the event loop."""

_WRITES: Final = st.lists(
    st.tuples(st.sampled_from(ALL_SLOTS), st.integers(min_value=0, max_value=6)), max_size=3
)


async def _turns(count: int) -> None:
    for _ in range(count):
        await anyio.lowlevel.checkpoint()


async def _writes_during_first_load(
    kit: Kit, words: Vocabulary, specs: list[SourceSpec], writes: list[Write], reader: int
) -> None:
    """Registrations interleaved with a first load (a read starts it): none of them is lost.

    Each write starts after a generated number of turns of the event loop while the first read
    loads the sources, so the schedule puts it before, during or after the load; at the end the
    catalogue must be what the same registry answers when the writes follow a completed load.
    """
    registry = await make_registry(kit, _over(words, specs))
    reads = reads_of(registry, words)
    read = reads[sorted(reads)[reader % len(reads)]]

    async def write(number: int, slot: Slot, turns: int) -> None:
        await _turns(turns)
        await registry.register(make_element(words, slot, f"runtime #{number}"))

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        for number, (slot, turns) in enumerate(writes):
            group.start_soon(write, number, slot, turns)
    got = await registry.listing()
    twin = await make_registry(kit, _over(words, specs))
    await _first_load(twin)
    # Concurrent writes at one slot may land in either order: the twin takes the one that won.
    for number, (slot, _) in enumerate(writes):
        await twin.register(make_element(words, slot, f"runtime #{number}"))
    expected = await twin.listing()
    if Counter(got.definitions) != Counter(expected.definitions):
        same_slot = len({slot for slot, _ in writes}) < len(writes)
        if same_slot and {d.ref for d in got.definitions} == {d.ref for d in expected.definitions}:
            return
        missing = [show(d) for d in expected.definitions if d not in got.definitions]
        extra = [show(d) for d in got.definitions if d not in expected.definitions]
        schedule = ", ".join(
            f"register({words.ref(slot)}) after {turns} turns" for slot, turns in writes
        )
        raise LawViolation(
            f"with a first read loading the catalogue and, concurrently, {schedule}: the loaded "
            f"catalogue lacks {missing or 'nothing'} and has {extra or 'nothing'} more than the "
            "same registry written to after its load (a write made before or during the first "
            "load is part of what the first read and every later one answers)"
        )


@checks("registry.first-read-complete")
def test_registry_first_read_complete(kit: Kit) -> None:
    """Every concurrent first read answers from the fully loaded catalogue; no write is lost."""
    roles = _require(kit, "registry.first-read-complete")
    writer = roles["writer"].present

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[int], list[Write]],
    ) -> None:
        words, specs, picks, writes = example
        if writer and writes:
            await _writes_during_first_load(kit, words, specs, writes, picks[0])
        sources = _over(words, specs)
        registry = await make_registry(kit, sources)
        reads = reads_of(registry, words)
        names = [sorted(reads)[pick % len(reads)] for pick in picks]
        first: list[ReadValue] = [None] * len(names)

        async def one(index: int, name: str) -> None:
            first[index] = await _read_value(reads[name])

        async with anyio.create_task_group() as group:
            for index, name in enumerate(names):
                group.start_soon(one, index, name)
        for index, name in enumerate(names):
            loaded = await _read_value(reads[name])
            if first[index] != loaded:
                turns = [spec.turns for spec in specs]
                raise LawViolation(
                    f"{len(names)} concurrent first reads ({', '.join(names)}): {name} "
                    f"answered {_shown(first[index])}, but the loaded catalogue answers "
                    f"{_shown(loaded)} (the sources took {turns} turns of the event loop to "
                    "provide; a first read must wait for the load)"
                )

    kit.given(
        st.tuples(
            vocabularies(), source_specs(min_sources=1), _picks, _WRITES if writer else st.just([])
        ),
        body,
        name="registry_first_read_complete",
    )


@checks("registry.load-idempotent")
def test_registry_load_idempotent(kit: Kit) -> None:
    """A second and third load() provide nothing and change nothing; `loaded` says so (a reload too)."""
    _require(kit, "registry.load-idempotent")

    async def body(example: tuple[Vocabulary, list[SourceSpec], bool]) -> None:
        words, specs, read_first = example
        sources = _over(words, specs)
        registry = await make_registry(kit, sources)
        if read_first:
            await registry.tools()
        else:
            await registry.load()
        if not registry.loaded:
            raise LawViolation(f"`loaded` is False after {'a read' if read_first else 'load()'}")
        before, counts = await registry.listing(), _provided(sources)
        await registry.load()
        await registry.load()
        after = await registry.listing()
        if _provided(sources) != counts or any(count != 1 for count in counts):
            raise LawViolation(
                f"load() after {'a read' if read_first else 'load()'} provided again: sources "
                f"provided {_provided(sources)} times in all (each must be provided once)"
            )
        if after != before:
            raise LawViolation(
                f"a second load() changed the catalogue: {describe_change(before, after)}"
            )
        # A load has completed: `loaded` stays True through a reload(), and load() after it
        # provides nothing more.
        await registry.reload()
        if not registry.loaded:
            raise LawViolation("`loaded` is False after a reload() (a load has completed)")
        counts = _provided(sources)
        await registry.load()
        if _provided(sources) != counts:
            raise LawViolation(
                f"load() after a reload() provided again: sources provided {counts} times "
                f"before it, {_provided(sources)} after"
            )

    kit.given(
        st.tuples(vocabularies(), source_specs(min_sources=1), st.booleans()),
        body,
        name="registry_load_idempotent",
    )


@st.composite
def _reload_cases(
    draw: st.DrawFn,
) -> tuple[Vocabulary, list[SourceSpec], list[list[ContentItem]], list[int]]:
    specs = draw(source_specs(min_sources=1))
    fresh = [draw(slots()) for _ in specs]
    return draw(vocabularies()), specs, fresh, draw(_picks)


_READS_PER_READER: Final = 40


@checks("registry.reload-atomic")
def test_registry_reload_atomic(kit: Kit) -> None:
    """Reads while reload() runs answer from the whole old or the whole new catalogue."""
    _require(kit, "registry.reload-atomic")

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[list[ContentItem]], list[int]],
    ) -> None:
        words, specs, fresh, picks = example
        sources = _over(words, specs)
        registry = await make_registry(kit, sources)
        await registry.load()
        reads = reads_of(registry, words)
        names = sorted(reads)
        old = {name: await _read_value(reads[name]) for name in names}
        for index, ((source, _), content) in enumerate(zip(sources, fresh, strict=True)):
            source.content = collection(words, content, f"source {index} v1")
        seen: list[tuple[str, ReadValue]] = []
        done = anyio.Event()

        async def reader(start: int) -> None:
            for step in range(_READS_PER_READER):
                name = names[(start + step) % len(names)]
                seen.append((name, await _read_value(reads[name])))
                if done.is_set():
                    return
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as group:
            for pick in picks:
                group.start_soon(reader, pick)
            await anyio.lowlevel.checkpoint()
            await registry.reload()
            done.set()
        new = {name: await _read_value(reads[name]) for name in names}
        for name, value in seen:
            if value not in (old[name], new[name]):
                raise LawViolation(
                    f"during reload(), {name} answered {_shown(value)}: neither the catalogue "
                    f"before the reload ({_shown(old[name])}) nor the one after it "
                    f"({_shown(new[name])})"
                )

    kit.given(_reload_cases(), body, name="registry_reload_atomic")


# -- change listeners ----------------------------------------------------------------------------

Operation: TypeAlias = (
    tuple[Literal["register"], Slot, Features]
    | tuple[Literal["unregister"], Slot]
    | tuple[Literal["reload"], int, list[ContentItem]]
)


@st.composite
def _operations(draw: st.DrawFn, *, writer: bool, deferred: bool) -> list[Operation]:
    found: list[Operation] = []
    kinds = [
        kind
        for kind, ok in (("register", writer), ("unregister", writer), ("reload", deferred))
        if ok
    ]
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        what = draw(st.sampled_from(kinds))
        if what == "reload":
            found.append(("reload", draw(st.integers(min_value=0, max_value=3)), draw(slots())))
        else:
            slot = draw(st.sampled_from(ALL_SLOTS))
            if what == "register":
                found.append(("register", slot, draw(features(slot[0]))))
            else:
                found.append(("unregister", slot))
    return found


@final
class _Pair:
    """The registry under test and a twin from the same factory, driven through the same steps.

    The twin has one plain listener: the events every well-behaved listener of the registry
    under test must receive, whatever that registry's own event semantics.
    """

    def __init__(
        self,
        words: Vocabulary,
        registry: RegistryUnderTest,
        sources: list[tuple[MutableSource, int]],
        twin: RegistryUnderTest,
        twin_sources: list[tuple[MutableSource, int]],
    ) -> None:
        self.words = words
        self.registry, self.sources = registry, sources
        self.twin, self.twin_sources = twin, twin_sources
        self.expected: list[ElementKind] = []
        twin.subscribe(self.expected.append)

    @classmethod
    async def build(cls, kit: Kit, words: Vocabulary, specs: list[SourceSpec]) -> _Pair:
        sources, twin_sources = _over(words, specs), _over(words, specs)
        return cls(
            words,
            await make_registry(kit, sources),
            sources,
            await make_registry(kit, twin_sources),
            twin_sources,
        )

    async def load(self) -> None:
        await _first_load(self.registry)
        await _first_load(self.twin)

    async def apply(self, operation: Operation, number: int) -> None:
        """Apply ``operation`` to both; the registry under test must not raise."""
        try:
            await self._apply(self.registry, self.sources, operation, number)
        except BaseException as exc:
            if not isinstance(exc, Exception) and not uncontained(exc):
                raise
            raise LawViolation(
                f"{_describe(operation, self.words)} raised {type(exc).__name__}: {exc}"
            ) from exc
        await self._apply(self.twin, self.twin_sources, operation, number)

    async def _apply(
        self,
        registry: RegistryUnderTest,
        sources: list[tuple[MutableSource, int]],
        operation: Operation,
        number: int,
    ) -> None:
        if operation[0] == "register":
            _, slot, looks = operation
            await registry.register(make_element(self.words, slot, f"runtime #{number}", looks))
        elif operation[0] == "unregister":
            await registry.unregister(self.words.ref(operation[1]))
        else:
            _, index, content = operation
            if sources:
                source = sources[index % len(sources)][0]
                source.content = collection(self.words, content, f"source {index} v{number}")
            await registry.reload()


def _describe(operation: Operation, words: Vocabulary) -> str:
    if operation[0] == "reload":
        return "reload()"
    return f"{operation[0]}({words.ref(operation[1])})"


_ERRORS: Final = st.sampled_from(
    (RuntimeError, ValueError, KeyError, TypeError, LookupError, SystemExit, KitBaseException)
)
"""What a raising listener raises: ordinary exceptions, and BaseException subclasses a boundary
contains too (only cancellation, KeyboardInterrupt and GeneratorExit propagate)."""

_BASE_ERRORS: Final[tuple[type[BaseException], ...]] = (SystemExit, KitBaseException)
"""The BaseException classes (not Exception) every listener-isolation example also raises."""


@checks("registry.listener-isolation")
def test_registry_listener_isolation(kit: Kit) -> None:
    """A raising listener breaks no operation and keeps no other listener from its events."""
    roles = _require(kit, "registry.listener-isolation")
    composes = kit.capabilities.composes_sources
    heard = 0

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[Operation], int, type[BaseException]],
    ) -> None:
        nonlocal heard
        words, specs, operations, position, drawn = example
        # The drawn class, and every BaseException class a boundary must contain, on each
        # example: whether a guard lets those through does not hang on one draw in seven.
        errors: tuple[type[BaseException], ...] = (drawn, *_BASE_ERRORS)
        for error in dict.fromkeys(errors):
            pair = await _Pair.build(kit, words, specs if composes else [])

            def raising(_kinds: ElementKind, error: type[BaseException] = error) -> None:
                raise error("a listener's own bug")

            first: list[ElementKind] = []
            last: list[ElementKind] = []
            listeners: list[Callable[[ElementKind], object]] = [first.append, last.append]
            listeners.insert(position % 3, raising)
            for listener in listeners:
                pair.registry.subscribe(listener)
            await pair.load()
            for number, operation in enumerate(operations):
                await pair.apply(operation, number)
                for name, got in (
                    ("the listener before it", first),
                    ("the listener after it", last),
                ):
                    if got != pair.expected:
                        raise LawViolation(
                            f"after {_describe(operation, words)}, with a listener raising "
                            f"{error.__name__} at position {position % 3}, {name} heard "
                            f"{[k.label for k in got]}; without the raising listener the same "
                            f"registry emits {[k.label for k in pair.expected]}"
                        )
            heard += len(pair.expected)

    writer, deferred = roles["writer"].present, roles["deferred"].present
    kit.given(
        st.tuples(
            vocabularies(),
            source_specs() if composes else st.just([]),
            _operations(writer=writer, deferred=deferred),
            st.integers(min_value=0, max_value=2),
            _ERRORS,
        ),
        body,
        name="registry_listener_isolation",
    )
    if not heard:
        kit.not_applicable(
            "the registry emitted no change event in any example (see registry.change-events)"
        )


@checks("registry.unsubscribe")
def test_registry_unsubscribe(kit: Kit) -> None:
    """An unsubscribed listener hears nothing more; the others hear everything."""
    roles = _require(kit, "registry.unsubscribe")
    composes = kit.capabilities.composes_sources
    heard = 0

    async def body(
        example: tuple[Vocabulary, list[SourceSpec], list[Operation], list[Operation], int],
    ) -> None:
        nonlocal heard
        words, specs, before, after, leaving = example
        pair = await _Pair.build(kit, words, specs if composes else [])
        heard_by: list[list[ElementKind]] = [[], [], []]
        unsubscribes = [pair.registry.subscribe(events.append) for events in heard_by]
        await pair.load()
        for number, operation in enumerate(before):
            await pair.apply(operation, number)
        unsubscribes[leaving % 3]()
        gone = len(heard_by[leaving % 3])
        for number, operation in enumerate(after, start=len(before)):
            await pair.apply(operation, number)
        late = heard_by[leaving % 3][gone:]
        if late:
            raise LawViolation(
                f"listener {leaving % 3} of 3 was unsubscribed, then heard {[k.label for k in late]}"
            )
        for index, got in enumerate(heard_by):
            expected = pair.expected[:gone] if index == leaving % 3 else pair.expected
            if got != expected:
                raise LawViolation(
                    f"after listener {leaving % 3} of 3 was unsubscribed, listener {index} heard "
                    f"{[k.label for k in got]}; the same registry with one listener emits "
                    f"{[k.label for k in expected]}"
                )
        heard += len(pair.expected)

    operations = _operations(writer=roles["writer"].present, deferred=roles["deferred"].present)
    kit.given(
        st.tuples(
            vocabularies(),
            source_specs() if composes else st.just([]),
            operations,
            operations,
            st.integers(min_value=0, max_value=2),
        ),
        body,
        name="registry_unsubscribe",
    )
    if not heard:
        kit.not_applicable(
            "the registry emitted no change event in any example (see registry.change-events)"
        )


# -- honest kinds --------------------------------------------------------------------------------


@st.composite
def _declared_sources(draw: st.DrawFn) -> list[tuple[ElementKind, list[Slot]]]:
    """Sources whose declared kinds cover their content, and may claim more."""
    found = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        declared = draw(element_kinds())
        candidates = [slot for slot in ALL_SLOTS if slot[0] in declared]
        content = (
            draw(st.lists(st.sampled_from(candidates), unique=True, max_size=4))
            if candidates
            else []
        )
        found.append((declared, content))
    return found


@final
class _KindsWatch:
    """What a registry's kinds() must answer, and the check that it does, without providing."""

    def __init__(
        self,
        words: Vocabulary,
        registry: RegistryUnderTest,
        sources: list[tuple[MutableSource, int]],
    ) -> None:
        self.words = words
        self.registry = registry
        self.sources = sources
        self.runtime: dict[object, ElementKind] = {}

    def expect(self, moment: str) -> None:
        counts = _provided(self.sources)
        answered = self.registry.kinds()
        if _provided(self.sources) != counts:
            raise LawViolation(f"kinds() provided a source ({moment})")
        declared = [source.declared for source, _ in self.sources]
        expected = ElementKind.NONE
        for kinds in (*declared, *self.runtime.values()):
            expected |= kinds
        if answered != expected:
            raise LawViolation(
                f"kinds() is {answered.label or 'none'} {moment}; the sources declare "
                f"{[kinds.label or 'none' for kinds in declared]} and the runtime registrations "
                f"are of {sorted({k.label for k in self.runtime.values()})}, so it must be "
                f"{expected.label or 'none'}"
            )

    async def write(self, register: bool, slot: Slot) -> None:
        ref = self.words.ref(slot)
        if register:
            await self.registry.register(make_element(self.words, slot, "runtime"))
            self.runtime[ref] = slot[0]
        else:
            await self.registry.unregister(ref)
            self.runtime.pop(ref, None)
        self.expect(f"after {'register' if register else 'unregister'}({ref})")


@checks("registry.honest-kinds")
def test_registry_honest_kinds(kit: Kit) -> None:
    """kinds() is the sources' kinds() plus the runtime kinds, at every moment, without providing."""
    roles = _require(kit, "registry.honest-kinds")
    composes = kit.capabilities.composes_sources

    async def body(
        example: tuple[
            Vocabulary,
            list[tuple[ElementKind, list[Slot]]],
            list[tuple[bool, Slot]],
            list[tuple[int, ElementKind]],
        ],
    ) -> None:
        words, declared, writes, redeclared = example
        sources = [
            (
                MutableSource(
                    collection(words, [(slot, False, Features()) for slot in content], "source"),
                    kinds=kinds,
                ),
                0,
            )
            for kinds, content in (declared if composes else [])
        ]
        watch = _KindsWatch(words, await make_registry(kit, sources), sources)
        watch.expect("right after construction")
        # A source's kinds() may answer differently from one call to the next (a plugin
        # enabled, a scan that found more): the registry asks it each time, never a copy.
        changes = iter(redeclared if sources else [])

        def redeclare(moment: str) -> None:
            change = next(changes, None)
            if change is not None:
                index, kinds = change
                source = sources[index % len(sources)][0]
                before, source.declared = source.declared, kinds
                watch.expect(
                    f"{moment}, once source {index % len(sources)}'s kinds() answered "
                    f"{kinds.label or 'none'} instead of {before.label or 'none'}"
                )

        redeclare("right after construction")
        for register, slot in writes if roles["writer"].present else []:
            await watch.write(register, slot)
        redeclare("before load()")
        await watch.registry.load()
        watch.expect("after load()")
        redeclare("after load()")
        await watch.registry.reload()
        watch.expect("after reload()")
        redeclare("after reload()")

    kit.given(
        st.tuples(
            vocabularies(),
            _declared_sources(),
            _writes,
            st.lists(st.tuples(st.integers(min_value=0, max_value=2), element_kinds()), max_size=4),
        ),
        body,
        name="registry_honest_kinds",
    )


# -- templates -----------------------------------------------------------------------------------

_TEMPLATES: Final = (
    "kit://{+path}",
    "kit://items/{id}",
    "kit://items/{id}{?fields}",
    "kit://items/{id}/meta",
    "kit://items/{id}/{part}",
    "kit://users/{user}/items/{id}",
    "kit://files{/path*}",
)
_values: Final = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=6)


@final
@dataclass(frozen=True, slots=True)
class _TemplateCase:
    templates: tuple[str, ...]  # listed, in the order they were added
    probes: tuple[tuple[str, dict[str, str]], ...]  # (template expanded, values)
    exact: tuple[int, ...]  # probes that also get a resource at exactly their URI


@st.composite
def _template_cases(draw: st.DrawFn) -> _TemplateCase:
    templates = tuple(
        draw(st.permutations(_TEMPLATES))[
            : draw(st.integers(min_value=1, max_value=len(_TEMPLATES)))
        ]
    )
    probes = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        template = draw(st.sampled_from(_TEMPLATES))
        names = UriTemplate.parse(template).variables
        probes.append((template, {name: draw(_values) for name in names}))
    exact = tuple(
        draw(st.lists(st.integers(min_value=0, max_value=len(probes) - 1), unique=True, max_size=2))
    )
    return _TemplateCase(templates, tuple(probes), exact)


@checks("registry.templates")
def test_registry_templates(kit: Kit) -> None:
    """Exact resources beat templates, the most specific template wins, variables are decoded."""
    _require(kit, "registry.templates")

    async def body(case: _TemplateCase) -> None:
        listed = {
            text: Element(
                definition=ResourceTemplate(uri_template=text, name=f"template{index}"),
                handler=HandlerRef("mcp_conformance._handlers:resource_template"),
            )
            for index, text in enumerate(case.templates)
        }
        uris = [UriTemplate.parse(template).expand(values) for template, values in case.probes]
        resources = {
            uris[index]: Element(
                definition=Resource(uri=uris[index], name=f"resource{index}"),
                handler=HandlerRef("mcp_conformance._handlers:resource"),
            )
            for index in case.exact
        }
        elements = [*listed.values(), *resources.values()]
        if kit.capabilities.composes_sources:
            registry = await make_registry(kit, [(MutableSource(ElementCollection(elements)), 0)])
        else:
            # Not composing sources: _require made sure there is a writer to fill it through.
            registry = await make_registry(kit, [])
            for item in elements:
                await registry.register(item)
        for (template, values), uri in zip(case.probes, uris, strict=True):
            await _check_resolution(
                registry, uri, listed=listed, resources=resources, expanded=template, values=values
            )

    kit.given(_template_cases(), body, name="registry_templates")


async def _check_resolution(
    registry: RegistryUnderTest,
    uri: str,
    *,
    listed: dict[str, Element],
    resources: dict[str, Element],
    expanded: str,
    values: dict[str, str],
) -> None:
    resolved = await registry.get_resource(uri)
    if uri in resources:
        if resolved is None or resolved.element != resources[uri] or dict(resolved.variables):
            got = (
                "nothing"
                if resolved is None
                else f"{resolved.element.ref} {dict(resolved.variables)}"
            )
            raise LawViolation(f"{uri!r} is exactly a listed resource, but resolved to {got}")
        return
    matching = [
        t
        for t in most_specific_first(UriTemplate.parse(text) for text in listed)
        if t.match(uri) is not None
    ]
    if not matching:
        if resolved is not None:
            raise LawViolation(
                f"{uri!r} matches no listed template but resolved to {resolved.element.ref}"
            )
        return
    best = [t.text for t in matching if t.specificity == matching[0].specificity]
    if resolved is None:
        raise LawViolation(f"{uri!r} matches {best[0]!r} but resolved to nothing")
    key = resolved.element.ref.key
    if key not in best:
        raise LawViolation(
            f"{uri!r} resolved to {key!r}, but the most specific matching template is {best[0]!r} "
            f"(matching, most specific first: {[t.text for t in matching]})"
        )
    expected = UriTemplate.parse(key).match(uri)
    if key == expanded and "+" not in key and "#" not in key:
        expected = {name: value for name, value in values.items() if name in (expected or {})}
    if dict(resolved.variables) != expected:
        raise LawViolation(
            f"{uri!r} resolved to {key!r} with variables {dict(resolved.variables)}, expected "
            f"{expected} (extracted and percent-decoded)"
        )
