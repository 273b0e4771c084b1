"""Change bus laws: ``ChangeBus``'s ``bus.*`` (an ``--mcp-change-bus`` target).

A factory is called as ``make_change_bus()`` and returns a new bus that nothing else publishes on (a
fresh namespace, for a bus on a server). Each example plays generated steps on it: open a
subscription (up to three at once, each followed by a task of its own, so they can be closed in any
order), close one, publish a few source keys (``a`` and ``A``, ``a*``, ``src:1``, ``é``) from one of
two origins. Every subscription lives in the process of the publisher, so the law's "the publisher's
own subscriptions included" is always in play.

Interruptions: the ``ChangeBus`` protocol has no way to cut a bus off, so for a bus that only
implements it the kit checks ``bus.delivers`` and ``bus.catch-up`` on an uninterrupted bus (a
catch-up a subscription receives unprompted still counts as covering what it holds). A bus that also
has ``take_down()`` and ``bring_back()`` (as ``MemoryChangeBus`` has, to rehearse an outage) gets
them among the steps: while it is down a publish may raise ``CacheStoreError``, and after
``bring_back()`` (called at the end of an example at the latest) every open subscription must catch
up. A bus whose outages only its server can cause (Redis) is held to the interrupted half of the
laws by its own tests.

Back-pressure: a step may stall a subscription (its task stops reading, as a busy worker would) and
another publish a burst of changes (up to 70) while it stalls, or one step do both; the stalled
subscription reads again before deliveries are judged. ``publish`` must not wait for a subscriber to
read: one that does not return within the kit's patience while a subscription stalls fails
``bus.delivers``, as does a bus that drops what a slow subscription had no room for without
interrupting it (a bus may interrupt a subscriber that cannot keep up, which then catches up).

Waiting: a bus may deliver from another connection (Redis pub/sub), so what a subscription is owed
is waited for, up to 5 s of silence. Once something did not come in a check, the kit waits 0.2 s in
the rest of that check: the failure is found, and shrinking it must not take minutes.

Each law is judged on its own: ``bus.versions`` on what ``publish`` returns, ``bus.delivers``
against those returned changes, ``bus.catch-up`` against the versions ``publish`` returned (at least
them, for every key ever published), so a bus that breaks one law fails only that one.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, Literal, TypeAlias, final

import anyio
from anyio.abc import TaskGroup, TaskStatus
from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation, awaited, checked
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_core.errors import CacheStoreError
from mcp_core.stores import Change

BusLaw: TypeAlias = Literal["bus.versions", "bus.delivers", "bus.catch-up"]

_SOURCE_KEYS: Final = ("a", "A", "a*", "src:1", "é")
_ORIGINS: Final = ("w1", "w2")
_MOST_OPEN: Final = 3
_PATIENCE: Final = 5.0
_PATIENCE_AFTER_A_MISS: Final = 0.2
_WAITED: Final = (
    f"the kit waits {_PATIENCE:g} s from the last item received, and {_PATIENCE_AFTER_A_MISS:g} "
    "s in a check where something already did not come"
)

Step: TypeAlias = tuple[str] | tuple[str, int] | tuple[str, frozenset[str], str]
"""``("open",)``, ``("close", n)``, ``("stall", n)``, ``("burst", count)``, ``("backlog", n)``
(stall then a burst of 70), ``("publish", keys, origin)``, ``("down",)`` or ``("up",)``."""

_BACKLOG: Final = 70
"""The changes a backlog step publishes while a subscription stalls."""

_STEPS: Final = st.lists(
    # Opening is drawn twice as often as any other step: most faults need two subscriptions.
    st.just(("open",))
    | st.just(("open",))
    | st.tuples(st.just("close"), st.integers(0, _MOST_OPEN - 1))
    # Back-pressure: one branch for all three, so the other steps are drawn as often as before.
    # A stall and a burst drawn apart met in too few runs (a publisher that waits for a stalled
    # reader got through three runs in ten): the backlog is both, in that order.
    | st.one_of(
        st.tuples(st.just("stall"), st.integers(0, _MOST_OPEN - 1)),
        st.tuples(st.just("burst"), st.sampled_from((20, 70))),
        st.tuples(st.just("backlog"), st.integers(0, _MOST_OPEN - 1)),
    )
    | st.tuples(
        st.just("publish"),
        st.frozensets(st.sampled_from(_SOURCE_KEYS), min_size=1, max_size=3),
        st.sampled_from(_ORIGINS),
    )
    | st.just(("down",))
    | st.just(("up",)),
    # At least six steps: the faults are in what steps do together (two subscriptions hearing two
    # publishes, a stall then a burst, a subscription opening after two publishes), and scenarios
    # of one to five steps, most of the fast profile's, let one broken bus in four through.
    min_size=6,
    max_size=16,
)


def _described(change: Change) -> str:
    kind = "catch-up" if change.catch_up else f"change from {change.origin!r}"
    return f"{kind} {dict(sorted(change.versions.items()))}"


@final
class _Patience:
    """How long to wait for what a bus owes: 5 s, and 0.2 s once something did not come."""

    def __init__(self) -> None:
        self.seconds = _PATIENCE

    def ran_out(self) -> None:
        self.seconds = _PATIENCE_AFTER_A_MISS


@final
class _Published:
    """A publish that returned: the step, its origin and the change it returned."""

    def __init__(self, number: int, origin: str, change: Change) -> None:
        self.number = number
        self.origin = origin
        self.change = change

    def __str__(self) -> str:
        return f"the change published at step {self.number} ({_described(self.change)})"

    def reached_by(self, item: Change) -> bool:
        """Whether ``item`` is this change, or a catch-up holding at least its versions."""
        if item.catch_up:
            return all(item.versions.get(key, 0) >= v for key, v in self.change.versions.items())
        return dict(item.versions) == dict(self.change.versions) and item.origin == self.origin


@final
class _Subscription:
    """One open subscription: what it received, what it is owed, and how to close it."""

    def __init__(self, number: int, step: int) -> None:
        self.number = number
        self.name = f"subscription #{number} (opened at step {step})"
        self.items: list[Change] = []
        self.arrived = anyio.Event()
        self.owed: list[_Published] = []
        self.awaiting_catch_up: int | None = 0
        """Index in ``items`` from which a catch-up is due, or None when none is."""
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.reading = anyio.Event()
        self.reading.set()

    def received(self, item: Change) -> None:
        self.items.append(item)
        self.arrived.set()
        self.arrived = anyio.Event()

    def shown(self) -> str:
        return "[" + ", ".join(_described(item) for item in self.items) + "]"


def _reached(subscription: _Subscription) -> Callable[[], bool]:
    """Whether everything ``subscription`` is owed has reached it.

    Asked again after every item received, so each item is matched once, against what is still
    unmet (matching every item against everything owed on every arrival was cubic in a burst).
    """
    unmet = list(subscription.owed)
    seen = 0

    def ready() -> bool:
        nonlocal unmet, seen
        for item in subscription.items[seen:]:
            unmet = [change for change in unmet if not change.reached_by(item)]
        seen = len(subscription.items)
        return not unmet

    return ready


@final
class _BusUnderTest:
    """A target bus, the steps played on it, and the judge of one law."""

    def __init__(self, kit: Kit, law: BusLaw, patience: _Patience, group: TaskGroup) -> None:
        # The target is duck-typed: every call below is awaited and checked.
        self.obj: Any = kit.target.factory()
        self.law = law
        self.patience = patience
        self.group = group
        self.interruptible = all(
            callable(getattr(self.obj, name, None)) for name in ("take_down", "bring_back")
        )
        self.down = False
        self.current: dict[str, tuple[int, int]] = {}
        """Each key ever published -> (the version its last publish returned, that step)."""
        self.named: set[str] = set()
        self.published: list[_Published] = []
        self.open: list[_Subscription] = []
        self.opened = 0

    def violated(self, law: BusLaw, message: str) -> None:
        """Raise ``message`` when ``law`` is the one judged; the others' checks judge theirs."""
        if law == self.law:
            raise LawViolation(message)

    async def wait(self, subscription: _Subscription, ready: Callable[[], bool]) -> bool:
        """Whether ``ready()`` came true as ``subscription`` received items.

        The kit's patience is for a silence: it runs again from every item received, so a long
        burst being delivered is waited for however long it takes.
        """
        while not ready():
            with anyio.move_on_after(self.patience.seconds) as waited:
                await subscription.arrived.wait()
            if waited.cancelled_caught:
                self.patience.ran_out()
                return False
        return True

    # -- steps --------------------------------------------------------------------------------

    async def play(self, steps: list[Step]) -> None:
        for number, step in enumerate(steps, start=1):
            match step:
                case ("open",) if len(self.open) < _MOST_OPEN:
                    await self.subscribe(number)
                case ("close", int() as index) if self.open:
                    await self.close(self.open[index % len(self.open)])
                case (("stall" | "backlog") as what, int() as index) if self.open:
                    self.stall(self.open[index % len(self.open)])
                    await self.burst(_BACKLOG if what == "backlog" else 0, number)
                case ("burst", int() as count):
                    await self.burst(count, number)
                case ("publish", frozenset() as keys, str() as origin):
                    await self.publish(keys, origin, number)
                case ("down",) if self.interruptible and not self.down:
                    await self.settle()
                    await self.outage("take_down")
                    self.down = True
                case ("up",) if self.down:
                    await self.bring_back()
        if self.down:
            await self.bring_back()
        await self.settle()

    @staticmethod
    def stall(subscription: _Subscription) -> None:
        """Stop ``subscription``'s task reading (once: stalled twice, it waits on one event)."""
        if subscription.reading.is_set():
            subscription.reading = anyio.Event()

    async def burst(self, count: int, number: int) -> None:
        """Publish ``count`` changes in a row (a publish held up by a stalled reader ends it)."""
        for _ in range(count):
            if not await self.publish(frozenset({"src:1"}), "w1", number):
                return

    async def subscribe(self, number: int) -> None:
        self.opened += 1
        subscription = _Subscription(self.opened, number)
        await self.group.start(self.follow, subscription)
        self.open.append(subscription)
        if not self.down:
            await self.catch_up(subscription, "its first item")

    async def follow(self, subscription: _Subscription, *, task_status: TaskStatus[None]) -> None:
        """Hold ``subscription`` open in a task of its own, recording what it receives."""
        try:
            manager = self.obj.subscribe()
            if not isinstance(manager, AbstractAsyncContextManager):
                raise LawViolation(
                    f"subscribe() returned {type(manager).__qualname__}, not an async context "
                    "manager (use it as `async with bus.subscribe() as changes`)"
                )
            async with manager as changes:
                task_status.started()
                with subscription.scope:
                    items = aiter(checked(changes, AsyncIterator[Change], what="subscribe()"))
                    while True:
                        # A stalled subscription takes nothing from the bus until it reads again.
                        await subscription.reading.wait()
                        try:
                            item = await anext(items)
                        except StopAsyncIteration:
                            break
                        subscription.received(
                            checked(item, Change, what=f"an item of {subscription.name}")
                        )
        finally:
            subscription.done.set()

    async def close(self, subscription: _Subscription) -> None:
        self.open.remove(subscription)
        subscription.scope.cancel()
        await subscription.done.wait()

    async def publish(self, keys: frozenset[str], origin: str, number: int) -> bool:
        """Publish ``keys``; whether it returned (a publish a stalled subscriber held up did not)."""
        what = f"publish({sorted(keys)}, origin={origin!r}) at step {number}"
        self.named |= keys
        stalled = [item.name for item in self.open if not item.reading.is_set()]
        try:
            with anyio.move_on_after(self.patience.seconds if stalled else math.inf) as waited:
                change: Change = await awaited(
                    self.obj.publish(keys, origin=origin), Change, what=what
                )
        except CacheStoreError:
            if self.down:
                return True  # unreachable, as take_down() asked: the caller keeps the change
            raise
        if waited.cancelled_caught:
            self.patience.ran_out()
            self.violated(
                "bus.delivers",
                f"{what} did not return while {', '.join(stalled)} was not reading ({_WAITED}): "
                "publish never waits for a subscriber to read; a bus interrupts a subscriber "
                "that cannot keep up, which then catches up",
            )
            for subscription in self.open:
                subscription.reading.set()
            return False
        self.judge_versions(change, keys, what)
        published = _Published(number, origin, change)
        self.published.append(published)
        for key, version in change.versions.items():
            if key in keys and version > self.current.get(key, (0, 0))[0]:
                self.current[key] = (version, number)
        for subscription in self.open:
            if subscription.awaiting_catch_up is None:
                subscription.owed.append(published)
        return True

    async def outage(self, method: str) -> None:
        answer = getattr(self.obj, method)()
        if inspect.isawaitable(answer):
            await answer

    async def bring_back(self) -> None:
        await self.outage("bring_back")
        self.down = False
        for subscription in self.open:
            if subscription.awaiting_catch_up is None:
                subscription.awaiting_catch_up = len(subscription.items)
        for subscription in tuple(self.open):
            await self.catch_up(
                subscription,
                "its first catch-up after bring_back() (a bus the kit took down is brought back "
                "before the example ends)",
            )

    # -- judges -------------------------------------------------------------------------------

    def judge_versions(self, change: Change, keys: Collection[str], what: str) -> None:
        if set(change.versions) != set(keys) or change.catch_up:
            self.violated(
                "bus.versions",
                f"{what} returned {_described(change)}: it returns the change it published, "
                "with the version of exactly the keys it was given (catch_up=False)",
            )
        for key in sorted(keys):
            before, step = self.current.get(key, (0, 0))
            version = change.versions.get(key)
            if isinstance(version, int) and version >= before + 1:
                continue
            since = f"the publish at step {step} returned {before}" if step else "it is new"
            self.violated(
                "bus.versions",
                f"{what} returned version {version!r} for {key!r}, but {since}: a publish "
                f"raises each key's version by at least one, so {before + 1} or more (the kit "
                "is the only publisher on this bus)",
            )

    async def catch_up(self, subscription: _Subscription, which: str) -> None:
        """Wait for the catch-up ``subscription`` is due, and judge it."""
        subscription.reading.set()
        start = subscription.awaiting_catch_up or 0
        if start == 0:
            arrived = await self.wait(subscription, lambda: bool(subscription.items))
        else:
            arrived = await self.wait(
                subscription, lambda: any(item.catch_up for item in subscription.items[start:])
            )
        subscription.awaiting_catch_up = None
        if not arrived:
            self.violated(
                "bus.catch-up",
                f"{subscription.name}: {which} never came ({_WAITED}; it received "
                f"{subscription.shown()}): a subscription starts with a catch-up, and "
                "starts again with one after an interruption",
            )
            return
        if start == 0:
            item = subscription.items[0]
        else:
            item = next(item for item in subscription.items[start:] if item.catch_up)
        if not item.catch_up:
            self.violated(
                "bus.catch-up",
                f"{subscription.name}: {which} was a {_described(item)}, not a catch-up "
                "(catch_up=True) holding every key's current version",
            )
            return
        faults = [
            f"{key!r} at {item.versions.get(key, 'no version')} though the publish at step "
            f"{step} returned {version}"
            for key, (version, step) in sorted(self.current.items())
            if item.versions.get(key, 0) < version
        ] + [
            f"{key!r}, which was never published" for key in sorted(set(item.versions) - self.named)
        ]
        if faults:
            self.violated(
                "bus.catch-up",
                f"{subscription.name}: {which}, {_described(item)}, holds {'; '.join(faults)}: a "
                "catch-up holds the current version of every key ever published, so a "
                "subscriber that compares versions misses nothing",
            )

    async def settle(self) -> None:
        """Judge ``bus.delivers``: every open subscription received what it is owed."""
        for subscription in self.open:
            subscription.reading.set()  # stalled subscriptions read again before the judgement
        if self.law != "bus.delivers":
            return  # the other laws do not wait for deliveries
        published = self.published
        for subscription in self.open:
            if subscription.awaiting_catch_up is not None:
                continue
            arrived = await self.wait(subscription, _reached(subscription))
            unknown = [
                item
                for item in subscription.items
                if not item.catch_up and not any(p.reached_by(item) for p in published)
            ]
            if unknown:
                self.violated(
                    "bus.delivers",
                    f"{subscription.name} received {_described(unknown[0])}, which no publish "
                    f"returned (it received {subscription.shown()}): a subscription delivers the "
                    "changes published, as publish() returned them",
                )
            if not arrived:
                missed = next(
                    change
                    for change in subscription.owed
                    if not any(change.reached_by(item) for item in subscription.items)
                )
                self.violated(
                    "bus.delivers",
                    f"{subscription.name} never received {missed} ({_WAITED}; it received "
                    f"{subscription.shown()}): a "
                    "change published while a subscription is open reaches it, the publisher's "
                    "own subscriptions included, or the subscription is interrupted and then "
                    "catches up",
                )

    async def finish(self) -> None:
        for subscription in tuple(self.open):
            await self.close(subscription)
        close = getattr(self.obj, "aclose", None)
        if callable(close):
            await awaited(close(), object, what="aclose()")


def _check(kit: Kit, law: BusLaw) -> None:
    patience = _Patience()

    async def body(steps: list[Step]) -> None:
        failure: LawViolation | None = None
        async with anyio.create_task_group() as group:
            bus = _BusUnderTest(kit, law, patience, group)
            try:
                await bus.play(steps)
            except LawViolation as exc:
                failure = exc
            finally:
                await bus.finish()
        if failure is not None:
            raise failure

    kit.given(_STEPS, body, name=law.replace(".", "_").replace("-", "_"))


@checks("bus.versions")
def test_bus_versions(kit: Kit) -> None:
    """publish(keys) returns the change with each key's version raised by at least one."""
    _check(kit, "bus.versions")


@checks("bus.delivers")
def test_bus_delivers(kit: Kit) -> None:
    """A change published while a subscription is open reaches it (or a catch-up covers it)."""
    _check(kit, "bus.delivers")


@checks("bus.catch-up")
def test_bus_catch_up(kit: Kit) -> None:
    """A subscription's first item, and its first after an outage, is a complete catch-up."""
    _check(kit, "bus.catch-up")
