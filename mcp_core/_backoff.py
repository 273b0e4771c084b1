"""Capped exponential backoff with jitter: how long to wait before trying a failing thing again.

One piece of code for every retry in the package: the registry retrying a failing source and
republishing a change (``mcp_core.registry``, where :class:`Backoff` is public), and the Redis
change bus reconnecting its subscription (``mcp_core.stores``). It lives on the bottom floor so
that both layers reach it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final, final

__all__ = ["Backoff"]

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
