"""Bounded time with a shared backend: a circuit breaker, and the health it reports.

A backend that is down answers at once (connection refused); one that is frozen or partitioned
answers nothing, and every caller waits for its timeout. A :class:`CircuitBreaker` turns the
second case into the first: after ``threshold`` failures in a row it *opens*, and every call fails
at once (no I/O) until ``reset_after`` seconds have passed; then one call is let through as a
trial (*half-open*): its success closes the breaker, its failure opens it again for longer (the
wait doubles, up to ``maximum``). So a frozen Redis costs one timeout, then nothing, while the
worker serves what it has and reports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, final

__all__ = ["BackendHealth", "BackendState", "CircuitBreaker"]

BackendState: TypeAlias = Literal["ok", "down", "misconfigured"]
"""How a shared backend is doing.

- ``ok``: the last call succeeded (or none failed yet);
- ``down``: calls fail or time out; the worker serves what it has and tries again;
- ``misconfigured``: the backend answers, but says this worker does not belong with the others
  (another secret, a worker id already in use): the worker must not be routed to.
"""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BackendHealth:
    """One shared backend's health (a Redis store, a change bus, the worker's registration).

    ``since`` is when it entered its state (None: never failed); ``last_error`` the message of
    its most recent failure (kept after it recovers); ``failures`` counts failures in a row;
    ``next_try`` is when a call will be let through again (None: now). ``detail`` says anything
    else worth knowing (e.g. changes waiting to be published). Times are seconds since the epoch.
    """

    backend: str
    state: BackendState
    since: float | None = None
    last_error: str | None = None
    failures: int = 0
    next_try: float | None = None
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form (camelCase keys), as the health endpoint serves it."""
        return {
            "backend": self.backend,
            "state": self.state,
            "since": self.since,
            "lastError": self.last_error,
            "failures": self.failures,
            "nextTry": self.next_try,
            "detail": self.detail,
        }


@final
class CircuitBreaker:
    """Fails calls at once while a backend is known to be down; lets one trial through now and then.

    Use: :meth:`allows` before a call (False: fail it now, without I/O), then :meth:`succeeded` or
    :meth:`failed` after it. ``threshold`` failures in a row open the breaker for ``reset_after``
    seconds; each failed trial doubles that wait, up to ``maximum``. ``clock`` is monotonic.
    """

    __slots__ = (
        "_clock",
        "_failures",
        "_last_error",
        "_maximum",
        "_open_until",
        "_reset_after",
        "_since",
        "_threshold",
        "_trial",
        "_wait",
    )

    def __init__(
        self,
        *,
        threshold: int = 1,
        reset_after: float = 2.0,
        maximum: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"CircuitBreaker threshold must be an int >= 1, got {threshold!r}")
        for name, value in (("reset_after", reset_after), ("maximum", maximum)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"CircuitBreaker {name} must be a positive number, got {value!r}")
        if maximum < reset_after:
            raise ValueError(
                f"CircuitBreaker needs reset_after <= maximum, got {reset_after!r} > {maximum!r}"
            )
        self._threshold = threshold
        self._reset_after = float(reset_after)
        self._maximum = float(maximum)
        self._clock = clock
        self._failures = 0
        self._wait = self._reset_after
        self._open_until: float | None = None
        self._trial = False
        self._since: float | None = None
        self._last_error: str | None = None

    def __repr__(self) -> str:
        return f"CircuitBreaker(<{self.state}, {self._failures} failures>)"

    @property
    def state(self) -> Literal["closed", "open", "half-open"]:
        """``closed`` (calls go through), ``open`` (they fail at once) or ``half-open`` (a trial)."""
        if self._open_until is None:
            return "closed"
        return "half-open" if self._trial else "open"

    def allows(self) -> bool:
        """Whether a call may go to the backend now (when open, one trial once the wait is over)."""
        if self._open_until is None:
            return True
        if self._trial or self._clock() < self._open_until:
            return False
        self._trial = True  # this caller is the trial; the others keep failing fast until it ends
        return True

    def succeeded(self) -> None:
        """Record a call that worked: the breaker closes."""
        self._failures = 0
        self._wait = self._reset_after
        self._open_until = None
        self._trial = False
        self._since = None

    def failed(self, error: str) -> None:
        """Record a call that failed or timed out (``error`` says how)."""
        self._failures += 1
        self._last_error = error
        if self._since is None:
            self._since = time.time()
        if self._trial:
            self._wait = min(self._wait * 2, self._maximum)
        if self._trial or self._failures >= self._threshold:
            self._open_until = self._clock() + self._wait
        self._trial = False

    def retry_in(self) -> float:
        """Seconds until a call is let through again (0: now)."""
        if self._open_until is None or self._trial:
            return 0.0
        return max(self._open_until - self._clock(), 0.0)

    def health(self, backend: str) -> BackendHealth:
        """A snapshot, as :class:`BackendHealth` (``down`` while failures are being counted)."""
        if self._failures == 0:
            return BackendHealth(backend=backend, state="ok", last_error=self._last_error)
        wait = self.retry_in()
        return BackendHealth(
            backend=backend,
            state="down",
            since=self._since,
            last_error=self._last_error,
            failures=self._failures,
            next_try=time.time() + wait if wait else None,
        )
