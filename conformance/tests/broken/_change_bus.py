"""A small change bus written from the ChangeBus contract; broken ones override a part.

Every subscription has a stream of its own; ``take_down``/``bring_back`` rehearse an outage the
way ``MemoryChangeBus`` does, so the kit checks catch-ups after an interruption too.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mcp_core.errors import CacheStoreError
from mcp_core.stores import BackendHealth, Change


class DictBus:
    """Correct: versions count publishes, every subscription hears every change, catch-ups are whole."""

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}
        self.subscribers: list[MemoryObjectSendStream[Change]] = []
        self.down = False

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        if self.down:
            raise CacheStoreError("the bus is down")
        for key in keys:
            self.versions[key] = self.versions.get(key, 0) + 1
        change = Change(versions={key: self.versions[key] for key in keys}, origin=origin)
        self.deliver(change)
        return change

    def deliver(self, change: Change) -> None:
        for subscriber in self.subscribers:
            subscriber.send_nowait(change)

    def catch_up(self) -> Change:
        """What a subscription starts with."""
        return Change(versions=self.versions, catch_up=True)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        send, receive = anyio.create_memory_object_stream[Change](math.inf)
        if not self.down:
            send.send_nowait(self.catch_up())
        self.subscribers.append(send)
        try:
            async with receive:
                yield receive
        finally:
            self.subscribers.remove(send)
            send.close()

    def take_down(self) -> None:
        self.down = True

    def bring_back(self) -> None:
        self.down = False
        for subscriber in self.subscribers:
            subscriber.send_nowait(self.catch_up())

    def health(self) -> BackendHealth:
        return BackendHealth(backend="dict bus", state="down" if self.down else "ok")
