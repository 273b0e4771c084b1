"""Helpers for the multi-worker tests: the example's cluster, its catalogue and health endpoints.

The cluster is ``examples/deployment/cluster.py`` (Redis, ``mcp-core run`` workers, HAProxy on
127.0.0.1), the same one the example's one script starts. The client side (hearing changes,
polling) is ``tests/clients.py``'s.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest
from mcp import Client

from tests.clients import tool_names

ROOT: Final = Path(__file__).resolve().parents[2]
EXAMPLE: Final = ROOT / "examples" / "deployment"
sys.path.insert(0, str(EXAMPLE))

from cluster import Cluster, free_port, missing_tools, running  # noqa: E402 -- the example's folder is on the path first

__all__ = [
    "EXAMPLE",
    "Cluster",
    "add_catalogue_tool",
    "backend_states",
    "deployed",
    "free_port",
    "has",
    "health",
    "needs_cluster",
    "show_logs",
]

needs_cluster = pytest.mark.skipif(
    bool(missing_tools()) and not os.environ.get("CI"),
    reason=f"needs {' and '.join(missing_tools())} (scripts/install --with-services)",
)


@contextmanager
def deployed(root: Path) -> Iterator[Cluster]:
    """The example's deployment in ``root`` (Redis, w1, w2, HAProxy) serving a catalogue copy.

    The copy (``cluster.env["CATALOGUE_FILE"]``) is the test's to change. When the block ends
    every process is stopped and the logs are shown as :func:`show_logs` shows them.
    """
    catalogue = root / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    with running(root, 2, env={"CATALOGUE_FILE": str(catalogue)}) as cluster:
        try:
            yield cluster
        finally:
            show_logs(cluster, ("w1", "w2"))


_TROUBLE: Final = re.compile(r"Traceback|ERROR|CRITICAL|Exception in")
_AFTER_TROUBLE: Final = 30  # lines kept after each line that reports trouble
_TAIL: Final = 3000  # characters of the end of each worker's log


def show_logs(cluster: Cluster, workers: Iterable[str]) -> None:
    """Print what a failed test needs of the logs (pytest shows it only when a test fails).

    For each worker, every error its whole log reports (a traceback, an ``ERROR`` line, with the
    lines that follow) and then the log's end; then the balancer's log, which the documented
    configuration writes only for what did not go well: a request that did not end normally or
    was sent to another worker, a worker leaving or rejoining the rotation.
    """
    for name in workers:
        text = cluster.log(name)
        head, tail = text[:-_TAIL], text[-_TAIL:]
        lines = head.splitlines()
        kept = sorted(
            {
                index
                for start, line in enumerate(lines)
                if _TROUBLE.search(line)
                for index in range(start, min(start + _AFTER_TROUBLE, len(lines)))
            }
        )
        errors = "\n".join(lines[index] for index in kept)[-20_000:]
        print(f"--- {name}: errors before the end\n{errors}\n--- {name}: the end\n{tail}")  # noqa: T201 -- shown when a test fails
    if balancer := cluster.log("haproxy"):
        print(f"--- haproxy\n{balancer[-8000:]}")  # noqa: T201 -- shown when a test fails


def add_catalogue_tool(path: Path, name: str) -> None:
    """Add a template tool to the catalogue file (as an operator editing it would)."""
    document = json.loads(path.read_text())
    document["elements"].append(
        {
            "kind": "tool",
            "definition": {
                "name": name,
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "_meta": {"template": f"{name} says hi to {{name}}"},
            },
            "handler": "greetings:Template",
        }
    )
    path.write_text(json.dumps(document))


def health(url: str) -> tuple[int, dict[str, Any]]:
    """A health endpoint's status and document."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 -- our own loopback server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def backend_states(document: dict[str, Any]) -> set[str]:
    """The states of the shared backends a health document lists."""
    return {backend["state"] for backend in document.get("backends", [])}


async def has(client: Client, name: str) -> bool:
    """Whether the tool ``name`` is listed now."""
    return name in await tool_names(client)
