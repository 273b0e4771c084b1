"""SessionSlots and client identity: the laws the HTTP edge's limits rest on (ADR 0070)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core.server._edge import CLIENT, SessionSlots, client_identity, trusted

CLIENTS = ("a", "b", "c")

# One step: a client asks to open a session, a session ends, or a session's request starts/ends.
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("open"), st.sampled_from(CLIENTS)),
        st.tuples(st.just("close"), st.integers(0, 30)),
        st.tuples(st.just("busy"), st.integers(0, 30)),
        st.tuples(st.just("idle"), st.integers(0, 30)),
    ),
    max_size=60,
)


class _Run:
    """One generated sequence of steps against one SessionSlots, checking the laws as it goes."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self.slots = SessionSlots(per_client=per_client, total=total)
        self.reclaimed: list[str] = []
        self.live: list[str] = []  # sessions opened, in order (some may have ended since)
        self.busy: dict[str, ExitStack] = {}

        async def reclaim(session_id: str) -> None:
            self.reclaimed.append(session_id)

        self.slots.reclaim = reclaim

    async def open(self, client: str, number: int) -> None:
        slots = self.slots
        owners = {sid: slot.client for sid, slot in slots._lru.items()}
        idle_own = [s for s, c in owners.items() if c == client and s not in self.busy]
        idle_any = [s for s in owners if s not in self.busy]
        admitted = await slots.admit(client)
        if isinstance(admitted, tuple):
            # Refused only when nothing idle could make room.
            assert not (idle_own if admitted[0] == 429 else idle_any)
            return
        with slots.holding(admitted):
            token = CLIENT.set(client)
            slots.opened(f"s{number}")
            CLIENT.reset(token)
        self.live.append(f"s{number}")
        assert slots.held_by(client) <= self.per_client
        assert len(slots) <= self.total

    def touch(self, action: str, index: int) -> None:
        if not self.live:
            return
        session_id = self.live[index % len(self.live)]
        stack = self.busy.get(session_id)
        if action == "close":
            self.slots.closed(session_id)
            if stack is not None:
                self.busy.pop(session_id).close()
        elif action == "busy" and stack is None and session_id in self.slots._lru:
            stack = self.busy[session_id] = ExitStack()
            stack.enter_context(self.slots.using(session_id))
        elif action == "idle" and stack is not None:
            self.busy.pop(session_id).close()

    async def run(self, steps: list[tuple[str, Any]]) -> None:
        for number, (action, arg) in enumerate(steps):
            if action == "open":
                await self.open(arg, number)
            else:
                self.touch(action, arg)
            assert not set(self.reclaimed) & set(self.busy), "a busy session was reclaimed"
        assert not self.slots._reserved


@settings(max_examples=200, deadline=None)
@given(steps=STEPS, per_client=st.integers(1, 4), total=st.integers(1, 8))
def test_slots_hold_their_limits(steps: list[tuple[str, Any]], per_client: int, total: int) -> None:
    """Per client and in total, never more than the limit; busy sessions are never reclaimed.

    A new session is refused only when nothing idle could make room for it.
    """
    anyio.run(_Run(per_client, total).run, steps)


class TestIdentity:
    """Who a client is: its token's principal, else its address, forwarded only by trust."""

    def test_address_without_a_trusted_proxy(self) -> None:
        """X-Forwarded-For from an untrusted peer is ignored."""
        scope = {"client": ("203.0.113.5", 1), "headers": [(b"x-forwarded-for", b"10.0.0.1")]}
        assert client_identity(scope, frozenset()) == "address:203.0.113.5"

    def test_forwarded_by_a_trusted_proxy(self) -> None:
        """The last hop that is not a trusted proxy names the client."""
        scope = {
            "client": ("127.0.0.1", 1),
            "headers": [
                (b"x-forwarded-for", b"6.6.6.6, 198.51.100.7"),
                (b"x-forwarded-for", b"127.0.0.1"),
            ],
        }
        assert client_identity(scope, trusted(["127.0.0.1"])) == "address:198.51.100.7"

    def test_a_proxy_must_be_an_address(self) -> None:
        """A host name is refused, naming the setting."""
        with pytest.raises(ValueError, match="trusted_proxies"):
            trusted(["haproxy.local"])
