"""Breaks bus.delivers under back-pressure: a full subscription drops changes silently.

Each subscription has room for 16 changes; what does not fit while its reader is busy is
dropped, with no interruption and no catch-up.

Readers that keep up hear everything, so only a stalled subscription and a burst of publishes
tell it from a correct bus.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from mcp_core.stores import Change

from ._change_bus import DictBus


class _Bounded(DictBus):
    def deliver(self, change: Change) -> None:
        for subscriber in self.subscribers:
            # The bug: a full buffer loses the change silently.
            with contextlib.suppress(anyio.WouldBlock):
                subscriber.send_nowait(change)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        send, receive = anyio.create_memory_object_stream[Change](16)
        if not self.down:
            send.send_nowait(self.catch_up())
        self.subscribers.append(send)
        try:
            async with receive:
                yield receive
        finally:
            self.subscribers.remove(send)
            send.close()


make_change_bus = _Bounded
