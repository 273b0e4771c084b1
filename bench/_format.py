"""Formatting of the report's table: durations, memory, counts, ratios, a markdown table."""

# ruff: noqa: RUF001, RUF002 -- the report is typeset: multiplication signs

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["count", "mib", "ratio", "seconds", "size_label", "table"]

_US: Final = 1e-3
_MS_2DP: Final = 0.01
_RATIO_0DP: Final = 100


def seconds(value: float | None) -> str:
    """A duration with a readable unit."""
    if value is None:
        return "–"
    if value < 0:  # a difference (imports beyond the SDK's) on a noisy machine
        return f"−{seconds(-value)}"
    if value < _US:
        return f"{value * 1e6:.0f} µs"
    if value < _MS_2DP:
        return f"{value * 1e3:.2f} ms"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def mib(value: float | None) -> str:
    """A memory size in MiB."""
    return "–" if value is None else f"{value:.0f} MiB"


def count(value: float | None) -> str:
    """A plain count."""
    return "–" if value is None else f"{value:.0f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    """``numerator / denominator`` as ``12.3×``."""
    if numerator is None or denominator is None or denominator <= 0:
        return "–"
    value = numerator / denominator
    return f"{value:.0f}×" if value >= _RATIO_0DP else f"{value:.1f}×"


def size_label(size: int) -> str:
    """``10k`` for 10000."""
    if size >= 1000 and size % 1000 == 0:  # noqa: PLR2004 -- thousands
        return f"{size // 1000}k"
    return str(size)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """A markdown table; ``align`` has one ``l`` or ``r`` per column (default: first left)."""
    aligns = align or "l" + "r" * (len(header) - 1)
    marks = ["---" if a == "l" else "---:" for a in aligns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines
