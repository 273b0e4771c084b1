"""Not broken: a change bus with no ``take_down``/``bring_back`` (the kit cannot cut it off).

The kit checks every bus law on it uninterrupted; its certificate covers ``ChangeBus`` alone.
"""

from __future__ import annotations

from ._change_bus import DictBus


class _Uninterruptible(DictBus):
    take_down = None  # type: ignore[assignment]  # what the kit probes for, taken away
    bring_back = None  # type: ignore[assignment]  # same


make_change_bus = _Uninterruptible
