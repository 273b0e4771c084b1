"""ChangePropagation: two registries on one bus follow each other's changes, exactly and once.

Only the changed source is provided again on the other side; nothing received is published
again (no echo); a change delivered twice or late costs nothing; a change made while the bus is
down is kept and delivered when it is back; a worker cut off catches up on what it missed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio

from mcp_core.elements import Element, ElementCollection, ElementKind, HandlerRef, Tool
from mcp_core.registry import ChangePropagation, Registry
from mcp_core.registry._propagation import source_keys
from mcp_core.stores import Change, MemoryChangeBus

WAIT = 10


def tool(name: str) -> Element:
    """A tool named ``name``."""
    return Element(
        definition=Tool(name=name, input_schema={"type": "object"}), handler=HandlerRef("m:f")
    )


class Backend:
    """What several workers' sources read: a shared list of tool names."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)


class Counted:
    """A source over a backend that counts its provides."""

    def __init__(self, backend: Backend, label: str) -> None:
        self.backend = backend
        self.label = label
        self.provides = 0

    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        self.provides += 1
        return ElementCollection(tool(f"{self.label}_{n}") for n in self.backend.names)

    def cache_inputs(self) -> dict[str, str]:
        return {"label": self.label}


class Worker:
    """A registry over a changing source and a steady one, and what it announced."""

    def __init__(
        self,
        name: str,
        changing: Backend,
        steady: Backend,
        bus: MemoryChangeBus,
        *,
        repair: float = 5.0,
        full_reload_interval: float = 10.0,
    ) -> None:
        self.changing = Counted(changing, "changing")
        self.steady = Counted(steady, "steady")
        self.registry = Registry([(self.changing, 0), (self.steady, 0)])
        self.propagation = ChangePropagation(
            self.registry,
            bus,
            worker=name,
            repair=repair,
            full_reload_interval=full_reload_interval,
        )
        self.events: list[ElementKind] = []
        self.registry.subscribe(self.events.append)

    async def names(self) -> set[str]:
        return {t.name for t in await self.registry.tools()}


@asynccontextmanager
async def workers(
    bus: MemoryChangeBus, *, repair: float = 5.0, full_reload_interval: float = 10.0
) -> AsyncIterator[tuple[Worker, Worker, Backend]]:
    """Two loaded workers over one backend, propagating on ``bus``."""
    changing, steady = Backend("a"), Backend("s")
    first, second = (
        Worker(
            name, changing, steady, bus, repair=repair, full_reload_interval=full_reload_interval
        )
        for name in ("w1", "w2")
    )
    async with AsyncExitStack() as stack:
        for worker in (first, second):
            await stack.enter_async_context(worker.propagation.running(connect_within=WAIT))
            await worker.registry.load()
        yield first, second, changing


async def until(check: object) -> None:
    """Poll a synchronous or async predicate (bounded)."""
    with anyio.fail_after(WAIT):
        while True:
            result = check()  # type: ignore[operator]
            if hasattr(result, "__await__"):
                result = await result
            if result:
                return
            await anyio.sleep(0.01)


async def test_a_reload_reaches_the_other_worker_once_and_only_its_source() -> None:
    """w1 reloads one source: w2 provides that source again (not the other), announces, no echo."""
    bus = MemoryChangeBus()
    async with workers(bus) as (first, second, backend):
        backend.names.append("b")
        await first.registry.reload(first.changing)
        await until(lambda: second.propagation.applied_changes == 1)
        names = await second.names()
        await anyio.sleep(0.1)  # time for an echo, were there one
    assert names == {"changing_a", "changing_b", "steady_s"}
    assert second.events == [ElementKind.TOOL]
    assert (second.changing.provides, second.steady.provides) == (2, 1)
    assert dict(bus.versions) == {next(iter(_key(first, first.changing))): 1}


async def test_a_change_delivered_twice_or_late_costs_nothing() -> None:
    """Versions make delivery idempotent: a duplicate or an older change is not applied."""
    bus = MemoryChangeBus()
    async with workers(bus) as (first, second, backend):
        backend.names.append("b")
        await first.registry.reload(first.changing)
        await until(lambda: second.propagation.applied_changes == 1)
        key = next(iter(_key(first, first.changing)))
        bus._deliver(Change(versions={key: 1}, origin="w1"))
        bus._deliver(Change(versions={key: 1}, catch_up=True))
        await anyio.sleep(0.1)
    assert second.propagation.applied_changes == 1
    assert second.changing.provides == 2


async def test_a_change_made_while_the_bus_is_down_is_kept_and_delivered() -> None:
    """Bus down: w1 serves its change, keeps it (health says so); back: w2 converges."""
    bus = MemoryChangeBus()
    async with workers(bus) as (first, second, backend):
        bus.take_down()
        backend.names.append("c")
        await first.registry.reload(first.changing)
        await until(lambda: first.propagation.health().detail is not None)
        kept = first.propagation.health()
        unchanged = await second.names()
        bus.bring_back()
        await until(lambda: second.propagation.applied_changes == 1)
        names = await second.names()
    assert kept.state == "down"
    assert kept.detail == "1 change(s) waiting to be published"
    assert "changing_c" not in unchanged
    assert "changing_c" in names
    assert first.propagation.pending == frozenset()


async def test_a_worker_cut_off_catches_up() -> None:
    """A change published while w2 heard nothing reaches it through the catch-up."""
    bus = MemoryChangeBus()
    async with workers(bus) as (first, second, backend):
        key = next(iter(_key(first, first.changing)))
        backend.names.append("d")
        # w2 misses the message (as a subscriber cut off would), then reconnects.
        await first.registry.reload(first.changing)
        await until(lambda: dict(bus.versions) == {key: 1})
        second.propagation._applied[key] = 0
        bus.bring_back()  # every subscription catches up
        await until(lambda: second.propagation.applied_changes >= 1)
        names = await second.names()
    assert "changing_d" in names


def test_source_keys_agree_between_identical_registries() -> None:
    """Two registries built alike name their sources alike; same-identity sources are numbered."""
    backend = Backend()
    one = Registry(
        [(Counted(backend, "x"), 0), (Counted(backend, "x"), 0), (Counted(backend, "y"), 0)]
    )
    two = Registry(
        [(Counted(backend, "x"), 0), (Counted(backend, "x"), 0), (Counted(backend, "y"), 0)]
    )
    assert list(source_keys(one)) == list(source_keys(two))
    assert len(set(source_keys(one))) == 3
    assert list(source_keys(one))[1].endswith(".1")


def _key(worker: Worker, source: Counted) -> set[str]:
    return {key for key, found in source_keys(worker.registry).items() if found is source}


async def test_a_flood_of_unknown_sources_costs_one_reload_per_interval() -> None:
    """A flood of changes naming unknown sources: one full reload now, one at the interval's end.

    Attacker: a Redis writer without the secret (before the bus was signed, anyone could
    publish), or a replayer of signed messages naming sources this worker lacks: 200 such
    changes made every worker provide every source again 200 times.
    """
    bus = MemoryChangeBus()
    async with workers(bus, repair=0.1, full_reload_interval=0.5) as (_, second, _):
        for n in range(200):
            bus._deliver(Change(versions={f"unknown{n}": 1}, origin="stranger"))
        await until(lambda: second.steady.provides == 2)
        await anyio.sleep(1.0)
        provides = second.steady.provides
    assert provides == 3  # the load, the first full reload, the one deferred to the interval's end


class Repairable(Counted):
    """A counted source with a repair() the test scripts."""

    def __init__(self, backend: Backend, label: str) -> None:
        super().__init__(backend, label)
        self.broken = False

    async def repair(self) -> bool:
        wrote, self.broken = self.broken, False
        return wrote


async def test_a_repaired_source_is_announced_again() -> None:
    """A source whose repair() wrote something back is published: the others provide it again."""
    bus = MemoryChangeBus()
    backend = Backend("a")
    mine, theirs = Repairable(backend, "shared"), Repairable(backend, "shared")
    first = Registry([(mine, 0)])
    second = Registry([(theirs, 0)])
    async with AsyncExitStack() as stack:
        for name, registry in (("w1", first), ("w2", second)):
            propagation = ChangePropagation(registry, bus, worker=name, repair=0.05)
            await stack.enter_async_context(propagation.running(connect_within=WAIT))
            await registry.load()
        mine.broken = True
        await until(lambda: theirs.provides == 2)
    assert mine.provides == 1  # the worker that repaired serves what it holds


async def test_a_runtime_write_that_keeps_the_definition_tells_source_listeners_of_no_source() -> (
    None
):
    """Tags changed by register()/unregister(): no change event, ``sources`` called with ()."""
    definition = Tool(name="t", input_schema={"type": "object"})
    plain = Element(definition=definition, handler=HandlerRef("m:f"))
    tagged = Element(definition=definition, handler=HandlerRef("m:f"), tags=frozenset({"secret"}))
    registry = Registry([])
    told: list[object] = []
    events: list[ElementKind] = []
    registry.subscribe_sources(told.append)
    registry.subscribe(events.append)
    await registry.register(plain)  # before the first load: nobody is told
    await registry.load()
    await registry.register(tagged)  # same definition, other tags
    await registry.register(tagged)  # the very same element: nothing changed
    await registry.unregister(tagged.ref)  # the definition goes: a change event
    await registry.register(plain)  # the definition comes back: a change event
    assert told == [()]
    assert events == [ElementKind.TOOL, ElementKind.TOOL]
    bus = MemoryChangeBus()
    async with workers(bus) as (first, _second, _backend):
        await first.registry.register(tagged)
        await first.registry.unregister(tagged.ref)
        await anyio.sleep(0.1)
    assert dict(bus.versions) == {}  # a runtime write is this worker's own: never published
