"""Refusals: what a shared backend refused to believe, logged cheaply and at a bounded rate.

Whoever can write to a shared Redis can make a worker refuse things as fast as they can write
them (unsigned bus messages, junk entries). Each refusal must be a diagnostic, never silent, yet
a flood of them must not become a flood of log lines: :class:`Refusals` counts every refusal and
logs one line per reason at most once per ``interval`` seconds, saying how many were refused
since the last line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final, final

__all__ = ["REFUSAL_LOG_INTERVAL", "Refusals"]

REFUSAL_LOG_INTERVAL: Final = 60.0
"""Seconds between two log lines about refusals for one reason."""


@final
class Refusals:
    """Counts refusals by reason; logs each reason at most once per ``interval`` seconds."""

    __slots__ = ("_clock", "_counts", "_interval", "_last", "_logger", "_subject", "total")

    def __init__(
        self,
        logger: logging.Logger,
        subject: str,
        *,
        interval: float = REFUSAL_LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._subject = subject
        self._interval = interval
        self._clock = clock
        self._counts: dict[str, int] = {}  # refused since the last line, by reason
        self._last: dict[str, float] = {}  # when the last line for a reason was written
        self.total = 0
        """Every refusal since this object was made."""

    def __repr__(self) -> str:
        return f"Refusals({self._subject!r}, total={self.total})"

    @property
    def last_reason(self) -> str | None:
        """The reason of the most recent refusal (None: none yet)."""
        return next(reversed(self._counts), None)

    def refuse(self, reason: str, detail: str = "") -> None:
        """Count one refusal for ``reason`` (a short, fixed phrase); log it if its turn has come."""
        self.total += 1
        count = self._counts.pop(reason, 0) + 1
        self._counts[reason] = count  # re-inserted: the most recent reason is last
        now = self._clock()
        last = self._last.get(reason)
        if last is not None and now - last < self._interval:
            return
        self._last[reason] = now
        self._counts[reason] = 0
        more = f" ({count} since the last report)" if count > 1 else ""
        self._logger.warning(
            "%s: refused %s%s%s; at most one such line per %g s",
            self._subject,
            reason,
            f": {detail}" if detail else "",
            more,
            self._interval,
        )

    def summary(self) -> str | None:
        """``"N refused (last: reason)"``, or None when nothing was refused."""
        if not self.total:
            return None
        return f"{self.total} refused (last: {self.last_reason})"
