"""A deployment's workers, listed from the shared store, and on the status page (ADR 0111).

Workers are deployments in this process sharing a MemoryStore and a MemoryChangeBus (real
workers on one Redis: ``tests/e2e/test_workers_status.py``).
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Mapping
from typing import Final, cast

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.errors import CacheStoreError
from mcp_core.registry import Registry
from mcp_core.server import Deployment
from mcp_core.server import _deployment as deployment_module
from mcp_core.server._deployed import WorkerListing
from mcp_core.server._operator import render_status
from mcp_core.stores import MemoryChangeBus, MemoryStore
from mcp_core.visibility import SessionInfo
from tests.server.test_deployed_seam import RecordingDeployment, served
from tests.server.test_deployment import worker


class TestWorkers:
    """The listing of a deployment's workers, from the shared store (ADR 0111)."""

    async def test_every_worker_with_its_state_and_address(self) -> None:
        """Two serving workers, each with its host, pid and the address it gave; one left."""
        store, bus = MemoryStore(), MemoryChangeBus()
        one, two = worker("w1", store, bus), worker("w2", store, bus)
        two.advertise("http://127.0.0.1:8002/mcp")
        async with one.serving(Registry()):
            async with two.serving(Registry()):
                listed = {w.worker: w for w in await one.workers()}
                assert set(listed) == {"w1", "w2"}
                assert {w.state for w in listed.values()} == {"serving"}
                assert listed["w1"].this
                assert not listed["w2"].this
                assert listed["w2"].address == "http://127.0.0.1:8002/mcp"
                assert listed["w1"].address is None  # it never said
                assert listed["w2"].host == socket.gethostname()
                assert listed["w2"].pid == os.getpid()
                assert await two.workers() == tuple(
                    dataclasses.replace(w, this=w.worker == "w2") for w in await one.workers()
                )
            left = {w.worker: w for w in await one.workers()}
        assert left["w2"].state == "left"
        assert left["w2"].address == "http://127.0.0.1:8002/mcp"
        assert {w.state for w in await worker("w3", store, bus).workers()} == {"left"}

    async def test_a_worker_that_stops_renewing_goes_stale_then_gone(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Registered, then never renewed (as if killed): serving, stale, then gone (still listed)."""
        monkeypatch.setattr(deployment_module, "_REGISTRATION_TTL", 0.6)
        monkeypatch.setattr(deployment_module, "_HEARTBEAT", 0.1)
        monkeypatch.setattr(deployment_module, "_SERVING_WITHIN", 0.3)
        store, bus = MemoryStore(), MemoryChangeBus()
        killed = worker("w2", store, bus)
        await killed.admit()  # registered once; nothing renews it
        async with worker("w1", store, bus).serving(Registry()):
            observer = worker("w3", store, bus)
            states: list[str] = []
            with anyio.fail_after(30):  # a bound for a loaded machine
                while not states or states[-1] != "gone":
                    found = {w.worker: w.state for w in await observer.workers()}
                    assert found["w1"] == "serving"
                    if not states or states[-1] != found["w2"]:
                        states.append(found["w2"])
                    await anyio.sleep(0.01)
        # In this order, each at most once (a loaded machine may skip one between two looks).
        assert states[-1] == "gone"
        assert states == [s for s in ("serving", "stale", "gone") if s in states]

    async def test_a_record_without_the_secret_shows_as_unverified(self) -> None:
        """A registration written without the secret: listed as unverified, nothing of it shown."""
        store, bus = MemoryStore(), MemoryChangeBus()
        await store.set("deployment:worker:intruder", b'{"record":{"at":1,"host":"evil"}}')
        await store.set("deployment:seen:w9", b"not even json")
        listed = await worker("w1", store, bus).workers()
        assert [(w.worker, w.state, w.host, w.last_seen) for w in listed] == [
            ("intruder", "unverified", None, None),
            ("w9", "unverified", None, None),
        ]


class StoreDown:
    """A store that does not answer, as a Redis that is down (every operation fails)."""

    @staticmethod
    def _down(key: str) -> CacheStoreError:
        return CacheStoreError("redis 'redis://127.0.0.1:1/0' is down", key=key)

    async def get(self, key: str) -> bytes | None:
        """Fails."""
        raise self._down(key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Fails."""
        raise self._down(key)

    async def delete(self, key: str) -> bool:
        """Fails."""
        raise self._down(key)

    async def delete_prefix(self, prefix: str) -> int:
        """Fails."""
        raise self._down(prefix)

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        """Fails."""
        raise self._down(prefix)


class TestOnTheStatusPage:
    """The page lists the workers; says so when the store does not answer; none without a listing."""

    async def test_the_workers_are_rows_of_the_page(self) -> None:
        """Each worker a row with its state, and this worker marked."""
        store, bus = MemoryStore(), MemoryChangeBus()
        one, two = worker("w1", store, bus), worker("w2", store, bus)
        assert isinstance(one, WorkerListing)
        two.advertise("http://10.0.0.2:8000/mcp")
        async with one.serving(Registry()), two.serving(Registry()):
            page = await render_status(served(one), SessionInfo())
        assert '<tr data-worker="w1" data-state="serving">' in page
        assert "w1</code> (this worker)" in page
        assert '<tr data-worker="w2" data-state="serving">' in page
        assert "http://10.0.0.2:8000/mcp" in page

    async def test_a_store_that_does_not_answer_is_said(self) -> None:
        """No listing, the reason instead; the rest of the page renders."""
        down = Deployment(worker="w1", secret=b"s" * 32, store=StoreDown(), bus=MemoryChangeBus())
        page = await render_status(served(down), SessionInfo())
        assert 'id="workers-unknown"' in page
        assert "is down" in page
        assert 'id="sources"' in page

    async def test_a_deployment_without_a_listing_shows_none(self) -> None:
        """A deployment written from the Deployed seam alone: no workers section, no failure."""
        page = await render_status(served(RecordingDeployment()), SessionInfo())
        assert "Deployment: workers" not in page
        assert 'id="sources"' in page


NOW: Final = 2_000_000_000.0
RANK: Final = {"serving": 0, "draining": 0, "stale": 1, "gone": 2}


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    """A verified record's fields: renewed some time before NOW, maybe draining or left."""
    age = draw(st.floats(min_value=0, max_value=7200, allow_nan=False))
    record: dict[str, object] = {"at": int((NOW - age) * 1000), "token": "t", "pid": 7}
    for flag in ("draining", "left"):
        if draw(st.booleans()):
            record[flag] = True
    return record


class TestStateLaws:
    """What the records say, as laws over generated records and clocks."""

    @given(
        record=records(),
        later=st.floats(min_value=0, max_value=7200, allow_nan=False),
    )
    def test_a_state_only_moves_forward_as_time_passes(
        self, record: dict[str, object], later: float
    ) -> None:
        """Unrenewed, a worker goes serving (or draining), stale, gone; left stays left."""
        listing = worker("w1", MemoryStore(), MemoryChangeBus())
        before = listing._worker_status("w2", record, None, NOW)
        after = listing._worker_status("w2", record, None, NOW + later)
        if record.get("left"):
            assert before.state == after.state == "left"
        else:
            assert RANK[before.state] <= RANK[after.state]
        assert before.last_seen == after.last_seen

    @given(registration=st.none() | records(), seen=st.none() | records())
    def test_the_fresher_record_decides(
        self, registration: dict[str, object] | None, seen: dict[str, object] | None
    ) -> None:
        """Registration and last-seen record: the one renewed last says; none verified: unverified."""
        listing = worker("w1", MemoryStore(), MemoryChangeBus())
        both = listing._worker_status("w2", registration, seen, NOW)
        present = [r for r in (registration, seen) if r is not None]
        if not present:
            assert (both.state, both.last_seen, both.pid) == ("unverified", None, None)
            return
        fresher = max(present, key=lambda r: cast("int", r["at"]))
        assert both == listing._worker_status("w2", fresher, None, NOW)
        assert both.last_seen == cast("int", fresher["at"]) / 1000
