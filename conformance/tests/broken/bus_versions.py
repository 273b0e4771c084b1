"""Breaks bus.versions: ``publish`` returns (and delivers) the versions read before its increment.

A read and an ``INCR`` in the wrong order: the counters are right, so catch-ups are too, but the
change a publisher gets back (and every subscription hears) names the versions the keys had
before it.
"""

from __future__ import annotations

from collections.abc import Collection

from mcp_core.errors import CacheStoreError
from mcp_core.stores import Change

from ._change_bus import DictBus


class _ReadsBeforeIncrement(DictBus):
    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        if self.down:
            raise CacheStoreError("the bus is down")
        before = {key: self.versions.get(key, 0) for key in keys}
        for key in keys:
            self.versions[key] = before[key] + 1
        change = Change(versions=before, origin=origin)
        self.deliver(change)
        return change


make_change_bus = _ReadsBeforeIncrement
