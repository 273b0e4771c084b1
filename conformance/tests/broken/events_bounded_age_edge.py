"""Breaks events.bounded at its edge: an event exactly ``max_age`` old is dropped already."""

from __future__ import annotations

from ._event_store import ListStore, Record


class _DropsAtTheEdge(ListStore):
    def expired(self, record: Record, now: float) -> bool:
        return now - record.at >= self.max_age


make_event_store = _DropsAtTheEdge
