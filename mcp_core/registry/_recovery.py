"""Recovery: when a failing source is tried again, in the background.

A source that fails or times out keeps its last good collection (or contributes nothing) until a
later provide succeeds. Without help, "later" means "when the application calls ``reload()``",
and a source that was down at cold start would stay empty forever. The reference ``Registry``
therefore retries each failing source on its own, with capped exponential backoff, while its
:meth:`~mcp_core.registry.Registry.background` context is open (the server opens it for as long
as it serves); a source that comes back is merged in and clients get ``list_changed``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Final, final

import anyio

__all__ = ["DEFAULT_BACKOFF", "Backoff", "RetryTimer"]

_SPREAD: Final = random.Random()  # noqa: S311 -- spreading, not secrecy
"""The jitter's own generator: the application's (and a test framework's) ``random`` stream is
left as it was; drawing from it in a background retry perturbed a seeded sequence elsewhere."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """Capped exponential backoff: the n-th retry in a row waits ``initial * factor**(n-1)``.

    The wait never exceeds ``maximum`` seconds, and each is spread by up to ``jitter`` (a
    fraction) either way, so that many workers that lost one backend do not retry in lockstep.
    """

    initial: float = 1.0
    maximum: float = 60.0
    factor: float = 2.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        for name, low in (("initial", 0.0), ("maximum", 0.0), ("factor", 1.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
                raise ValueError(f"Backoff.{name} must be a number >= {low:g}, got {value!r}")
        if self.initial == 0 or self.maximum < self.initial:
            raise ValueError(
                f"Backoff needs 0 < initial <= maximum, got initial={self.initial!r}, "
                f"maximum={self.maximum!r}"
            )
        if not 0 <= self.jitter < 1:
            raise ValueError(f"Backoff.jitter must be in [0, 1), got {self.jitter!r}")

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` failures in a row (``failures`` >= 1)."""
        exponent = max(failures - 1, 0)
        # factor ** exponent overflows for long outages; the cap is reached long before.
        steps = math.log(self.maximum / self.initial, self.factor) if self.factor > 1 else 0
        base = self.maximum if exponent > steps else self.initial * self.factor**exponent
        spread = base * self.jitter * (2 * _SPREAD.random() - 1)
        return min(max(base + spread, 0.0), self.maximum * (1 + self.jitter))


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
