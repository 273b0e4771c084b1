"""Breaks bus.delivers: each change reaches one subscription, in turn (a queue, not a broadcast).

Catch-ups still reach every subscription, and versions count right: with two subscriptions
open, each hears every other change only.
"""

from __future__ import annotations

from mcp_core.stores import Change

from ._change_bus import DictBus


class _Queue(DictBus):
    turn = 0

    def deliver(self, change: Change) -> None:
        if self.subscribers:
            self.turn += 1
            self.subscribers[self.turn % len(self.subscribers)].send_nowait(change)


make_change_bus = _Queue
