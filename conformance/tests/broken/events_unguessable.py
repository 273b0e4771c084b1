"""Breaks events.unguessable: event ids count up (still replayed only within their session)."""

from __future__ import annotations

from ._event_store import ListStore


class _Counting(ListStore):
    serial = 0

    def new_id(self) -> str:
        self.serial += 1
        return f"evt-{self.serial:06d}"


make_event_store = _Counting
