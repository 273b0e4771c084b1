"""Recovery: when a failing source is tried again, in the background.

A source that fails or times out keeps its last good collection (or contributes nothing) until a
later provide succeeds. Without help, "later" means "when the application calls ``reload()``",
and a source that was down at cold start would stay empty forever. The reference ``Registry``
therefore retries each failing source on its own, with capped exponential backoff, while its
:meth:`~mcp_core.registry.Registry.background` context is open (the server opens it for as long
as it serves); a source that comes back is merged in and clients get ``list_changed``.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import Final, final

import anyio

from mcp_core._backoff import Backoff

__all__ = ["DEFAULT_BACKOFF", "Backoff", "RetryTimer"]

DEFAULT_BACKOFF: Final = Backoff()


@final
class RetryTimer:
    """When each failing key (a source) is due again; lets one loop sleep until the next one.

    ``failed`` schedules, ``succeeded`` forgets; :meth:`wait` returns when a key is due or the
    schedule changed; :meth:`due` pops what is due now.
    """

    __slots__ = ("_backoff", "_changed", "_due")

    def __init__(self, backoff: Backoff) -> None:
        self._backoff = backoff
        self._due: dict[Hashable, float] = {}
        self._changed = anyio.Event()

    def failed(self, key: Hashable, failures: int) -> float:
        """Schedule ``key`` after its ``failures``-th failure in a row; return the wall time."""
        delay = self._backoff.delay(failures)
        self._due[key] = time.monotonic() + delay
        self._changed.set()
        return time.time() + delay

    def succeeded(self, key: Hashable) -> None:
        """Forget ``key``: it is healthy."""
        if self._due.pop(key, None) is not None:
            self._changed.set()

    def due(self) -> list[Hashable]:
        """The keys due now, removed from the schedule (a failure schedules them again)."""
        now = time.monotonic()
        ready = [key for key, at in self._due.items() if at <= now]
        for key in ready:
            del self._due[key]
        return ready

    async def wait(self) -> None:
        """Sleep until the earliest key is due, or until the schedule changes."""
        self._changed = anyio.Event()
        if not self._due:
            await self._changed.wait()
            return
        delay = min(self._due.values()) - time.monotonic()
        if delay > 0:
            with anyio.move_on_after(delay):
                await self._changed.wait()
