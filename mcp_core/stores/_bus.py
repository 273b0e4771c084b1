"""The change bus: how the workers of one deployment tell each other that sources changed.

A message on the bus carries no elements, only "these sources changed, and this is their version
now": each worker then provides those sources again from where they really live (a database, a
shared cache, a shared store), so what a worker serves never comes from the bus itself. A bus
counts a version per source; a subscription starts, and starts again after any interruption,
with a *catch-up* holding every source's current version, so a worker that was cut off learns
exactly which sources changed meanwhile instead of missing them (ADR 0045).

:class:`MemoryChangeBus` connects the registries of one process (tests, several servers in one
process) and can be taken down and brought back to rehearse an outage;
:class:`~mcp_core.stores.RedisChangeBus` connects the workers of a deployment.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, final

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream

from mcp_core.errors import CacheStoreError
from mcp_core.stores._breaker import BackendHealth

__all__ = ["Change", "ChangeBus", "MemoryChangeBus", "check_source_keys"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """What a subscription delivers: the sources that changed, each with its version now.

    ``origin`` is the worker that published it (``""`` for a catch-up); ``catch_up`` marks the
    item a subscription starts with (and starts again with after an interruption), which holds
    every source's current version rather than one change's. A version says which change it is:
    delivering one twice, or after a newer one, changes nothing for a subscriber that compares.
    """

    versions: Mapping[str, int]
    origin: str = ""
    catch_up: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "versions", MappingProxyType(dict(self.versions)))


class ChangeBus(Protocol):
    """Carries "these sources changed" between the workers of a deployment.

    Sources are named by keys every worker computes alike (see ``ChangePropagation``); the bus
    keeps one version counter per key.

    Laws:
        1. ``bus.versions``: ``publish(keys)`` raises the version of each key by at least one and
           returns the :class:`Change` with the versions after it; versions never go down.
        2. ``bus.delivers``: a change published while a subscription is open reaches it (the
           publisher's own subscriptions included), or the subscription is interrupted and
           then catches up. ``publish`` never waits for a subscriber to read: a subscription
           too slow to keep up is interrupted (and catches up), never silently short.
        3. ``bus.catch-up``: a subscription's first item, and its first after an interruption, is
           a catch-up holding the current version of every key ever published; so a subscriber
           that compares versions misses nothing that was published while it was not listening.
    """

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        """Announce that the sources at ``keys`` changed; return the change with their versions.

        Raises :class:`~mcp_core.errors.CacheStoreError` when the bus cannot be reached (the
        caller keeps the change and publishes it again later).
        """
        ...

    def subscribe(self) -> AbstractAsyncContextManager[AsyncIterator[Change]]:
        """Changes as they are published, each subscription starting with a catch-up.

        Never raises for the bus being unreachable: the subscription reconnects on its own,
        reporting meanwhile through :meth:`health`, and catches up when it is back.
        """
        ...

    def health(self) -> BackendHealth:
        """Whether subscriptions are connected and changes can be published."""
        ...


def check_source_keys(keys: Collection[str]) -> tuple[str, ...]:
    """``keys`` as a sorted tuple, each a non-empty string without whitespace; else ValueError."""
    if isinstance(keys, str):
        raise TypeError("publish() takes a collection of source keys, not one string")
    checked = sorted(set(keys))
    for key in checked:
        if not isinstance(key, str) or not key or any(ch.isspace() for ch in key):
            raise ValueError(f"a source key is a non-empty string without spaces, got {key!r}")
    if not checked:
        raise ValueError("publish() needs at least one source key")
    return tuple(checked)


@final
class MemoryChangeBus:
    """A :class:`ChangeBus` inside one process: registries of several servers, or tests.

    :meth:`take_down` makes it behave like an unreachable Redis (``publish`` raises, open
    subscriptions hear nothing and report ``down``); :meth:`bring_back` reconnects them, each
    with a catch-up.
    """

    __slots__ = ("_down_since", "_subscribers", "_versions")

    def __init__(self) -> None:
        self._versions: dict[str, int] = {}
        self._subscribers: list[MemoryObjectSendStream[Change]] = []
        self._down_since: float | None = None

    def __repr__(self) -> str:
        return f"MemoryChangeBus(<{len(self._versions)} sources, {len(self._subscribers)} subscribers>)"

    @property
    def versions(self) -> Mapping[str, int]:
        """Every source key's current version."""
        return MappingProxyType(dict(self._versions))

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        """Raise each key's version by one and deliver the change to every subscription."""
        checked = check_source_keys(keys)
        if self._down_since is not None:
            raise CacheStoreError("the in-memory change bus is down (take_down() was called)")
        for key in checked:
            self._versions[key] = self._versions.get(key, 0) + 1
        change = Change(versions={key: self._versions[key] for key in checked}, origin=origin)
        self._deliver(change)
        await anyio.lowlevel.checkpoint()
        return change

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        """Changes as they are published, starting with a catch-up (again after bring_back())."""
        send, receive = anyio.create_memory_object_stream[Change](math.inf)
        if self._down_since is None:
            send.send_nowait(Change(versions=self._versions, catch_up=True))
        self._subscribers.append(send)
        try:
            async with receive:
                yield aiter(receive)
        finally:
            self._subscribers.remove(send)
            send.close()

    def take_down(self) -> None:
        """Behave as an unreachable bus until :meth:`bring_back`."""
        if self._down_since is None:
            self._down_since = time.time()

    def bring_back(self) -> None:
        """Reachable again: every open subscription catches up."""
        self._down_since = None
        self._deliver(Change(versions=self._versions, catch_up=True))

    def health(self) -> BackendHealth:
        """``ok``, or ``down`` since :meth:`take_down`."""
        if self._down_since is None:
            return BackendHealth(backend="in-memory change bus", state="ok")
        return BackendHealth(
            backend="in-memory change bus",
            state="down",
            since=self._down_since,
            last_error="taken down",
        )

    def _deliver(self, change: Change) -> None:
        if self._down_since is not None:
            return
        for subscriber in tuple(self._subscribers):
            subscriber.send_nowait(change)
