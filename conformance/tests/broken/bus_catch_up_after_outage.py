"""Breaks bus.catch-up after an interruption: ``bring_back()`` reconnects without a catch-up.

Subscriptions start with a whole catch-up and hear every change while the bus is up; but a
subscriber cut off by an outage never learns what changed meanwhile.
"""

from __future__ import annotations

from ._change_bus import DictBus


class _ReconnectsSilently(DictBus):
    def bring_back(self) -> None:
        self.down = False


make_change_bus = _ReconnectsSilently
