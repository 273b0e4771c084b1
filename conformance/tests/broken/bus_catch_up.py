"""Breaks bus.catch-up: a catch-up holds only the last change's versions (the last message kept).

A subscriber that opens after two publishes naming different keys learns of one of them only;
every change is still delivered to the subscriptions open when it is published.
"""

from __future__ import annotations

from collections.abc import Collection

from mcp_core.stores import Change

from ._change_bus import DictBus


class _LastMessage(DictBus):
    last: Change | None = None

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        self.last = await super().publish(keys, origin=origin)
        return self.last

    def catch_up(self) -> Change:
        return Change(versions={} if self.last is None else self.last.versions, catch_up=True)


make_change_bus = _LastMessage
