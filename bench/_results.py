"""What the orchestrator collects: one outcome per worker process, and medians over them."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = [
    "BLACK_BOX",
    "FLOOR",
    "LIB_TITLES",
    "PEERS",
    "SDK",
    "Job",
    "Meta",
    "Mode",
    "Outcome",
    "Results",
]

Mode = Literal[
    # In-process breakdown (bench/worker.py).
    "cold",
    "warm",
    "single",
    # Black-box (bench/probe.py): a server process measured by a raw client in another.
    "stdio",
    "http",
    "load",
    "load-json",
    "dump-start",
    "import",
]
BLACK_BOX: Final[tuple[Mode, ...]] = ("stdio", "http", "load", "load-json", "dump-start", "import")

LIB_TITLES: Final = {"mcp-core": "mcp-core", "mcpserver": "MCPServer", "fastmcp": "fastmcp"}
PEERS: Final = ("mcpserver", "fastmcp")
FLOOR: Final = "floor"
"""The bare server (``bench/_floor.py``): a black-box column, not a library."""
SDK: Final = "sdk"
"""The SDK's root package: an ``import`` row, not a library."""


@dataclass(frozen=True, slots=True)
class Job:
    """One worker process to run."""

    mode: Mode
    lib: str
    size: int
    run: int
    runs: int

    def describe(self) -> str:
        """``fastmcp cold 10000 (run 2/3)``."""
        title = LIB_TITLES.get(self.lib, self.lib)
        return f"{title} {self.mode} {self.size} (run {self.run + 1}/{self.runs})"


@dataclass(slots=True)
class Outcome:
    """What one worker reported (or why it failed), and its wall time."""

    job: Job
    figures: dict[str, float] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    wall_s: float = 0.0

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Outcome:
        """The outcome :meth:`to_json` recorded."""
        job = Job(
            record["mode"], record["lib"], record["size"], record["run"], record.get("runs", 0)
        )
        return cls(job, record["figures"], record["versions"], record["error"], record["wall_s"])

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        job = self.job
        return {
            "mode": job.mode,
            "lib": job.lib,
            "size": job.size,
            "run": job.run,
            "runs": job.runs,
            "figures": self.figures,
            "versions": self.versions,
            "error": self.error,
            "wall_s": self.wall_s,
        }


@dataclass(slots=True)
class Results:
    """Every outcome of a harness run."""

    outcomes: list[Outcome] = field(default_factory=list)

    def of(self, mode: Mode, lib: str, size: int) -> list[Outcome]:
        """The successful outcomes of one (mode, library, size)."""
        return [
            o
            for o in self.outcomes
            if o.error is None and o.job.mode == mode and o.job.lib == lib and o.job.size == size
        ]

    def errors(self) -> list[Outcome]:
        """The failed outcomes."""
        return [o for o in self.outcomes if o.error is not None]

    def median(self, mode: Mode, lib: str, size: int, figure: str) -> float | None:
        """The median of ``figure`` over the successful runs, or None if none has it."""
        values = [o.figures[figure] for o in self.of(mode, lib, size) if figure in o.figures]
        return statistics.median(values) if values else None

    def runs(self, mode: Mode, lib: str, size: int) -> int:
        """How many runs succeeded."""
        return len(self.of(mode, lib, size))

    def sizes(self, mode: Mode, lib: str) -> list[int]:
        """The sizes with at least one successful run, ascending."""
        return sorted(
            {
                o.job.size
                for o in self.outcomes
                if o.error is None and o.job.mode == mode and o.job.lib == lib
            }
        )

    def versions(self) -> dict[str, str]:
        """Package versions reported by the workers (first seen wins; conflicts are marked)."""
        found: dict[str, set[str]] = {}
        for outcome in self.outcomes:
            for package, version in outcome.versions.items():
                found.setdefault(package, set()).add(version)
        return {
            package: " / ".join(sorted(versions)) for package, versions in sorted(found.items())
        }

    def libs(self, mode: Mode = "cold") -> list[str]:
        """Libraries with at least one successful outcome in ``mode``, in table order."""
        present = {o.job.lib for o in self.outcomes if o.error is None and o.job.mode == mode}
        return [lib for lib in LIB_TITLES if lib in present]

    @classmethod
    def merged(cls, parts: Iterable[Results]) -> Results:
        """All outcomes of several results."""
        return cls([o for part in parts for o in part.outcomes])


@dataclass(frozen=True, slots=True)
class Meta:
    """Facts about a harness run that the report states (saved with ``--json``)."""

    date: str
    command: str
    machine: Sequence[tuple[str, str]]
    notes: Sequence[str]
    plot_name: str | None
    module_size: int
    dump_s: float | None
    # Black-box.
    sizes: Sequence[int]
    """Black-box catalogue sizes (the peers run up to ``peer_max``)."""
    peer_max: int
    runs: str
    """How many server processes each black-box cell had, in words."""
    dump_size: int | None
    load_size: int | None
    load_sessions: int
    load_calls: int
    load_rounds: int
    # In-process breakdown.
    inprocess_runs: str
    baseline_size: int
    inprocess_sizes: Sequence[int]
    scale_sizes: Sequence[int]
    warm_size: int | None
    single_module: int | None
