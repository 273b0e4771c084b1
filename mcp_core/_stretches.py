"""Builds on the event loop, in stretches that give way to requests and the threads they wait on.

A build that runs on the event loop (deriving a catalogue's elements, merging them, building a
collection file's elements, laying out the lists) pauses between stretches of a few hundred
items so that requests are served meanwhile. A request served in a worker thread (a sync tool,
a completion provider, a collection file's lookup) needs the interpreter too, and a pause of the
loop alone does not hand it over: between two stretches the loop polls for I/O without waiting,
which releases the interpreter lock and takes it back at once, every millisecond or so, and a
thread waiting for the lock is starved (CPython forces a switch only for a thread that waited a
whole switch interval, 5 ms, without the lock changing hands). A sync tool called while the
preload derived 100k tools waited for the whole derivation: 1.1 s.

:func:`waited_on` marks a worker thread a request waits for while it runs; :func:`pause` between
two stretches then sleeps (the loop blocks in its poll, the lock free for the thread) until the
marked threads are done, at most :data:`TURN` per pause: a thread that blocks for long (on I/O,
or on the build itself) slows the build by at most that much a stretch, never stops it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import anyio
import anyio.lowlevel

__all__ = ["POLL", "TURN", "pause", "waited_on"]

TURN: Final = 0.005
"""Seconds a pause gives the marked threads at most (the interpreter's switch interval)."""
POLL: Final = 0.0005
"""Seconds between two looks at the marked threads during a pause."""

_lock: Final = threading.Lock()
_marked: list[int] = [0]  # worker threads a request waits on, in this process


@contextmanager
def waited_on() -> Iterator[None]:
    """Mark the worker thread the caller runs and waits for (a request's) while the block runs."""
    with _lock:
        _marked[0] += 1
    try:
        yield
    finally:
        with _lock:
            _marked[0] -= 1


async def pause(*, cancellable: bool = False) -> None:
    """The pause between two stretches of a build: other tasks run, marked threads get a turn.

    Not a cancellation point unless ``cancellable``: a build that finishes quickly in this
    process is not cut in half by a time limit.
    """
    if cancellable:
        await anyio.lowlevel.checkpoint()
    else:
        await anyio.lowlevel.cancel_shielded_checkpoint()
    if not _marked[0]:
        return
    with anyio.CancelScope(shield=not cancellable):
        deadline = anyio.current_time() + TURN
        # Polled, not awaited as an event: the count is the process's (a thread may serve
        # another event loop's request), and the pause is bounded anyway.
        while _marked[0] and anyio.current_time() < deadline:  # noqa: ASYNC110
            await anyio.sleep(POLL)
