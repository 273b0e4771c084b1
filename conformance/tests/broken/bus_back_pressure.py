"""Breaks bus.delivers under back-pressure: a full subscription drops changes silently.

Each subscription has room for 16 changes; what does not fit while its reader is busy is
dropped, with no interruption and no catch-up.

Readers that keep up hear everything, so only a stalled subscription and a burst of publishes
tell it from a correct bus.
"""

from __future__ import annotations

from typing import Final

from mcp_core.stores import Change

from ._change_bus import DictBus

_ROOM: Final = 16
"""The changes a subscription holds for its reader before the next ones are lost."""


class _Bounded(DictBus):
    def deliver(self, change: Change) -> None:
        for subscriber in self.subscribers:
            # The bug: a full subscription loses the change silently. (Only changes: the
            # catch-up after an outage always fits, so nothing but bus.delivers is broken.)
            if subscriber.statistics().current_buffer_used < _ROOM:
                subscriber.send_nowait(change)


make_change_bus = _Bounded
