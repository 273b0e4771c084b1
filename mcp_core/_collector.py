"""The cyclic garbage collector around bulk builds of long-lived objects.

Building a catalogue (deriving its elements, merging them, reading a dumped collection, laying out
the lists) allocates hundreds of thousands of container objects that all survive for as long as
the server runs. CPython's collector cannot know that: every few hundred allocations it examines
the young objects, and every so often all of them, including the whole heap the SDK's imports
left. Each of those full collections finds nothing to free, and at 10k elements they were a third
of the time from spawn to the first list (``bench/PROFILES.md``).

:func:`collector_paused` turns the collector off around such a build and restores it afterwards:
the objects the build made are examined once, when the collector runs next, instead of on every
threshold the build crosses. It only wraps synchronous work that creates little garbage, so no
garbage waits long; pauses nest and may overlap (across tasks), and an application that turned
the collector off keeps it off.

:func:`settle_heap` is for a process about to serve: what it imported and declared is moved out of
the collector's sight (:func:`gc.freeze`), the pattern CPython documents for long-lived servers,
so later collections examine only what serving allocates. :func:`settle_imports` does the same
once per process, when the first application object is made: the imports are done, and the
declarations to come (N decorated functions) no longer trigger full collections of the SDK's
heap, which cost as much as the declaring itself. :func:`settle_declared` carries that on while
a large application declares: every :data:`SETTLE_EVERY` declarations, what is alive then (the
declarations so far) leaves the collector's sight, so the declarations still to come do not
trigger full collections over the ones made (at 100k declarations, six of them took a fifth of
declaring).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["SETTLE_EVERY", "collector_paused", "settle_declared", "settle_heap", "settle_imports"]

SETTLE_EVERY: Final = 4096
"""Declarations between two :func:`settle_declared` freezes (an app smaller than this: none)."""

# Pauses in force, whether the collector was on when the first of them began, and whether the
# imports were settled.
_state: Final[dict[str, int | bool]] = {"pauses": 0, "was_enabled": False, "imports": False}


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the duration (restored as it was when the first pause began)."""
    if _state["pauses"] == 0:
        _state["was_enabled"] = gc.isenabled()
        gc.disable()
    _state["pauses"] = int(_state["pauses"]) + 1
    try:
        yield
    finally:
        _state["pauses"] = int(_state["pauses"]) - 1
        if _state["pauses"] == 0 and _state["was_enabled"]:
            gc.enable()


def settle_heap() -> None:
    """Move every object alive now out of the collector's sight, for a process about to serve.

    The modules, the application's declarations and the objects made at start-up live as long as
    the process: examining them again on every full collection only adds pauses. Cyclic garbage
    alive at this moment is kept for good as well, so this is called once, by the entry points
    that serve until the process ends (``run()``), not by library code.
    """
    gc.freeze()


def settle_imports() -> None:
    """:func:`settle_heap`, the first time it is called in this process (later calls do nothing).

    Called when an application is made: what the process imported lives as long as it does.
    Once only, so a process making many applications (a test suite) keeps its garbage
    collectable.
    """
    if not _state["imports"]:
        _state["imports"] = True
        gc.freeze()


def settle_declared(count: int) -> None:
    """:func:`settle_heap` after every :data:`SETTLE_EVERY`-th declaration of an application.

    ``count`` is how many declarations the application holds now. What a declaration makes
    (the function, its marks) lives as long as the application; only an application with
    thousands of declarations, which would otherwise pay full collections over them, settles.
    """
    if count % SETTLE_EVERY == 0:
        gc.freeze()
