"""Breaks events.owned: a replay follows the stream id, whichever session stored the events.

The SDK's stream ids are JSON-RPC request ids, ``"1"`` in every session: resuming one's own
stream ``"1"`` also sends what another session's request ``1`` produced.
"""

from __future__ import annotations

from ._event_store import ListStore, Record


class _ByStream(ListStore):
    def follows(self, last: Record, record: Record) -> bool:
        return record.stream == last.stream


make_event_store = _ByStream
