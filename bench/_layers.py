"""Where a server's CPU time goes, by layer, from py-spy's collapsed stacks.

Each sample (py-spy ``--gil``: the thread holding the interpreter lock) is charged to the
innermost frame that belongs to a named layer. Frames of general-purpose code (the standard
library beside asyncio and threading, ``json``, pydantic, OpenTelemetry, anyio's cancel scopes,
``contextlib``) belong to no layer, so their time is charged to the layer that called them: the
SDK validating a request with pydantic is the SDK's time, mcp-core encoding an answer with
``json`` is mcp-core's. The shares, times a server's measured user CPU per request, say how many
microseconds of each request each layer spends; the kernel's share (system CPU time: socket
reads and writes, polling, waking threads) is measured apart, from ``/proc``.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

__all__ = ["FRAME", "LAYERS", "layer_of", "layer_shares", "read_shares"]

_BINDING: Final = "mcp-core binding (session info, rounds, gateway, trace context)"
_HANDLERS: Final = "mcp-core handlers (resolve, visibility, invoke, result)"
_KERNEL: Final = "SDK kernel (runner, middleware, OTel span, validation, serialization)"
_LOOP: Final = "event loop (tasks, callbacks, socket calls)"
_HOP: Final = "worker-thread hop of a sync tool (anyio.to_thread)"

# (substring of the frame's file or function, layer), first match wins: the specific before
# the general.
LAYERS: Final[tuple[tuple[str, str], ...]] = (
    ("mcp_core/server/_hotpath", "mcp-core hot path (checks, envelope, answer)"),
    ("mcp_core/server/_paging", "mcp-core hot path (checks, envelope, answer)"),
    ("mcp_core/server/_edge", "mcp-core HTTP edge (limits, accounting)"),
    ("mcp_core/server/_http_app", "mcp-core HTTP edge (limits, accounting)"),
    ("mcp_core/server/_uvicorn", "mcp-core HTTP edge (limits, accounting)"),
    ("mcp_core/server/_request_binding", _BINDING),
    ("mcp_core/server/_rounds", _BINDING),
    ("mcp_core/server/_gateway", _BINDING),
    ("mcp_core/server/_tracing", _BINDING),
    ("mcp_core/server/_binding", _BINDING),
    ("mcp_core/server/_sessions", _BINDING),
    ("mcp_core/visibility", _BINDING),
    ("mcp_core/", _HANDLERS),
    ("/bench/", "the tool's own code"),
    ("mcp-core-bench/", "the tool's own code"),
    ("mcp/server/streamable_http", "SDK transport (session manager, session transport)"),
    ("mcp/", _KERNEL),
    ("mcp_types/", _KERNEL),
    ("starlette/", "Starlette (application, middleware stack, routing)"),
    ("uvicorn/", "uvicorn and h11 (parsing, writing, the request cycle)"),
    ("h11/", "uvicorn and h11 (parsing, writing, the request cycle)"),
    ("httptools", "uvicorn and h11 (parsing, writing, the request cycle)"),
    ("anyio/to_thread", _HOP),
    ("run_sync_in_worker_thread", _HOP),
    ("WorkerThread", _HOP),
    ("threading.py", _HOP),
    ("queue.py", _HOP),
    ("asyncio/", _LOOP),
    ("selectors.py", _LOOP),
    ("socket.py", _LOOP),
    ("uvloop", _LOOP),
)
"""The layers, in the order a frame is matched against them."""

OTHER: Final = "unattributed (no layer on the stack)"

FRAME: Final = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")
"""One frame of py-spy's collapsed stacks: ``function (file:line)``."""


def layer_of(frame: str) -> str | None:
    """The layer a py-spy frame (``function (file:line)``) belongs to, or None: its caller's."""
    match = FRAME.match(frame)
    where = f"{match['file']} {match['function']}" if match else frame
    for key, layer in LAYERS:
        if key in where:
            return layer
    return None


def _charged(stack: Sequence[str]) -> str:
    for frame in reversed(stack):
        layer = layer_of(frame)
        if layer is not None:
            return layer
    return OTHER


def layer_shares(lines: Iterable[str], *, focus: str | None = None) -> dict[str, float]:
    """Each layer's share of the samples in py-spy's collapsed ``lines``, largest first.

    ``focus``: count only the samples with a frame containing this text (e.g. the request
    handling's entry, leaving out the server's start or idle polling).
    """
    counts: collections.Counter[str] = collections.Counter()
    for line in lines:
        stack_text, _, count = line.rstrip("\n").rpartition(" ")
        if not stack_text or not count.isdigit():
            continue
        stack = stack_text.split(";")
        if focus is not None and not any(focus in frame for frame in stack):
            continue
        counts[_charged(stack)] += int(count)
    total = sum(counts.values())
    return {layer: n / total for layer, n in counts.most_common()} if total else {}


def read_shares(path: Path, *, focus: str | None = None) -> dict[str, float]:
    """:func:`layer_shares` of a collapsed-stacks file."""
    with path.open(encoding="utf-8") as lines:
        return layer_shares(lines, focus=focus)
