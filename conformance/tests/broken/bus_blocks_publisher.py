"""Breaks bus.delivers under back-pressure: ``publish`` waits until every subscriber has room.

Each subscription holds 16 changes; a publish to a full one waits for its reader, so one busy
worker holds up every publisher of the deployment. (It cannot be taken down: the kit checks it
on an uninterrupted bus.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mcp_core.stores import BackendHealth, Change


class _Blocking:
    def __init__(self) -> None:
        self.versions: dict[str, int] = {}
        self.subscribers: list[MemoryObjectSendStream[Change]] = []

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        for key in keys:
            self.versions[key] = self.versions.get(key, 0) + 1
        change = Change(versions={key: self.versions[key] for key in keys}, origin=origin)
        for subscriber in tuple(self.subscribers):
            await subscriber.send(change)  # the bug: waits for a slow reader
        return change

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        send, receive = anyio.create_memory_object_stream[Change](16)
        send.send_nowait(Change(versions=self.versions, catch_up=True))
        self.subscribers.append(send)
        try:
            async with receive:
                yield receive
        finally:
            self.subscribers.remove(send)
            send.close()

    def health(self) -> BackendHealth:
        return BackendHealth(backend="blocking bus", state="ok")


make_change_bus = _Blocking
