"""The status page lists a deployment's workers: real workers sharing one Redis (ADR 0111).

Three ``mcp-core run`` workers of the example's deployment (``--status-path /status``) and one
Redis, on 127.0.0.1, no balancer (each worker's page is fetched directly). Every worker's page
lists all three as serving, each with the address it serves at, its host and pid, and itself as
"this worker". Then w3 is killed outright (SIGKILL: it never says it leaves): w1's page shows it
stale while its lease runs (6 s), then gone, still listed with when it was last seen; w2 is
stopped (SIGTERM: it drains, then leaves) and shows as left. A headless Chromium renders w1's
page at the end (see ``tests/e2e/test_status_page.py``) and keeps a screenshot:
``build/artefacts/status-workers.png``.
"""

from __future__ import annotations

import re
import secrets
import shutil
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e._workers import EXAMPLE, Cluster, needs_cluster, show_logs
from tests.e2e.test_status_page import ARTEFACTS, chromium, headless

pytestmark = [needs_cluster]

WORKERS = ("w1", "w2", "w3")
WAIT = 90.0  # a bound for a loaded machine, never a measured time
ROW = re.compile(r'<tr data-worker="([^"]+)" data-state="([^"]+)">(.*?)</tr>', re.DOTALL)


@dataclass
class StatusCluster(Cluster):
    """The example's cluster, each worker serving its status page."""

    def worker_command(self, worker: str, port: int) -> list[str]:
        """The example's worker command, with ``--status-path /status``."""
        return [*super().worker_command(worker, port), "--status-path", "/status"]

    def status_url(self, worker: str) -> str:
        """One worker's status page."""
        return f"http://127.0.0.1:{self.ports[worker]}/status"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[StatusCluster]:
    """Redis and three workers (no balancer)."""
    catalogue = tmp_path / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    deployment = StatusCluster(tmp_path, len(WORKERS), env={"CATALOGUE_FILE": str(catalogue)})
    (tmp_path / "secret").write_bytes(secrets.token_urlsafe(48).encode())
    try:
        deployment.start_redis()
        for name in WORKERS:
            deployment.start_worker(name)
        yield deployment
    finally:
        deployment.stop()
        show_logs(deployment, WORKERS)


def workers_on(url: str) -> dict[str, tuple[str, str]]:
    """The workers a status page lists: id -> (state, the row's text)."""
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 -- our own loopback server
        page = response.read().decode()
    return {worker: (state, row) for worker, state, row in ROW.findall(page)}


def watch(url: str, worker: str, until: str) -> list[str]:
    """The states ``url`` shows ``worker`` in, each change once, until it shows ``until``."""
    seen: list[str] = []
    deadline = time.monotonic() + WAIT
    while not seen or seen[-1] != until:
        assert time.monotonic() < deadline, f"{worker} never showed {until}: {seen}"
        state = workers_on(url).get(worker, ("unlisted", ""))[0]
        if not seen or seen[-1] != state:
            seen.append(state)
        time.sleep(0.2)
    return seen


def all_serving_with_addresses(cluster: StatusCluster, listed: dict[str, tuple[str, str]]) -> bool:
    """Whether ``listed`` is every worker, serving, with the address it serves at."""
    return set(listed) == set(WORKERS) and all(
        state == "serving" and f"127.0.0.1:{cluster.ports[worker]}/mcp" in row
        for worker, (state, row) in listed.items()
    )


def test_the_status_page_lists_the_workers(cluster: StatusCluster) -> None:
    """All serving; a killed worker stale, then gone; a stopped one left; Chromium renders it."""
    binary = chromium()
    status = cluster.status_url("w1")
    deadline = time.monotonic() + WAIT
    while not all_serving_with_addresses(cluster, workers_on(status)):
        # (a worker records its address with its first renewal after it listens: within 1 s)
        assert time.monotonic() < deadline, workers_on(status)
        time.sleep(0.2)
    for name in WORKERS:
        listed = workers_on(cluster.status_url(name))
        assert all_serving_with_addresses(cluster, listed)
        for other, (_, row) in listed.items():
            assert f"pid {cluster.processes[other].pid}" in row
            assert ("(this worker)" in row) == (other == name)
    cluster.kill_worker("w3")
    killed = watch(status, "w3", "gone")
    # Serving until it misses three renewals, then stale until its lease runs out; never unlisted.
    assert killed == ["serving", "stale", "gone"]
    cluster.stop_worker("w2")
    stopped = watch(status, "w2", "left")
    assert stopped[-1] == "left"
    assert set(stopped) <= {"serving", "draining", "left"}
    dom = headless(binary, status, "--dump-dom")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "status-workers.png"
    shot.unlink(missing_ok=True)
    headless(binary, status, f"--screenshot={shot}", "--window-size=1200,900")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'data-worker="w1" data-state="serving"' in dom
    assert 'data-worker="w2" data-state="left"' in dom
    assert 'data-worker="w3" data-state="gone"' in dom
