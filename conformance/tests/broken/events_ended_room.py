"""Breaks events.ended: an ended session's events are hidden, not forgotten.

``end_session`` marks the session ended and replays refuse its ids, but its events stay in the
store until evicted, counting against ``max_events``: the sessions after it lose their newest
events' room to a session that is gone.
"""

from __future__ import annotations

from mcp.server.streamable_http import EventCallback

from ._event_store import ListStore


class _Hides(ListStore):
    ended: set[str]

    def end_session(self, session_id: str) -> None:
        self.ended = {*getattr(self, "ended", set()), session_id}  # the bug: nothing is forgotten

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        if session_id in getattr(self, "ended", set()):
            return None
        return await super().replay_events_after(session_id, last_event_id, send_callback)


make_event_store = _Hides
