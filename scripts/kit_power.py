"""How often the conformance kit catches each broken implementation, over fresh seeds.

``conformance/tests/test_kit_broken.py`` proves each law FAILs its broken implementation on one
fixed draw (the derandomized one, or a pinned seed where that draw misses). A certification draws
a new seed on every run, so what a user gets is the kit's *power*: the share of seeds on which the
law catches the fault. A law that catches its broken implementation one run in five lets most of
the real faults of that shape through on most CI runs. This script measures that share.

    .venv/bin/python scripts/kit_power.py                      # every case, 5 seeds each
    .venv/bin/python scripts/kit_power.py --seeds 20 registry_precedence
    .venv/bin/python scripts/kit_power.py --kind registry --jobs 2 --json power.json

Each run is ``pytest --mcp-conformance`` in the fast profile (what the kit's users run), on the
broken law's check alone, in a scratch directory. Prints one row per case (caught / runs, and the
seeds that missed, to replay with ``--mcp-conformance-seed``); exits 1 when any case was caught
less often than ``--at-least`` (default: every run).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "conformance" / "tests"


class Case(Protocol):
    """A row of ``test_kit_broken.CASES``."""

    kind: str
    breaks: str

    @property
    def spec(self) -> str:
        """The ``--mcp-<kind>`` value."""

    @property
    def name(self) -> str:
        """The case's name (its module, and factory where not the usual one)."""


@dataclass(frozen=True)
class Outcome:
    """The runs of one case: the seeds it was caught on and those it was not."""

    case: str
    law: str
    caught: tuple[int, ...]
    missed: tuple[int, ...]
    errors: tuple[str, ...]

    @property
    def runs(self) -> int:
        """How many runs judged the law."""
        return len(self.caught) + len(self.missed)

    @property
    def share(self) -> float:
        """The share of judged runs that caught the fault."""
        return len(self.caught) / self.runs if self.runs else 0.0


def _cases() -> tuple[Case, ...]:
    """The kit's own table of broken implementations (one source of truth for both)."""
    spec = importlib.util.spec_from_file_location("test_kit_broken", TESTS / "test_kit_broken.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {TESTS / 'test_kit_broken.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    cases: tuple[Case, ...] = module.CASES
    return cases


def _test_name(law: str) -> str:
    return "test_" + law.replace(".", "_").replace("-", "_")


def _run(case: Case, seed: int) -> str:
    """The broken law's status on ``seed``: PASS, FAIL, N/A or NOT RUN (or ``error: ...``)."""
    with tempfile.TemporaryDirectory(prefix="kit-power-") as scratch:
        report = Path(scratch) / "report.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:asyncio",
            "-p",
            "no:randomly",
            "-o",
            f"pythonpath={TESTS}",
            "--mcp-conformance",
            f"--mcp-{case.kind}={case.spec}",
            f"--mcp-conformance-seed={seed}",
            f"--mcp-conformance-report={report}",
            "-k",
            _test_name(case.breaks),
        ]
        done = subprocess.run(  # noqa: S603 -- our own interpreter, arguments built here
            command, cwd=scratch, capture_output=True, text=True, check=False, timeout=900
        )
        if not report.exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return "error: " + " | ".join(tail)
        rows = json.loads(report.read_text(encoding="utf-8"))["laws"]
        status: str = next(row["status"] for row in rows if row["law"] == case.breaks)
        return status


def measure(cases: list[Case], seeds: list[int], jobs: int) -> list[Outcome]:
    """Run every case on every seed, ``jobs`` runs at a time."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            (case.name, seed): pool.submit(_run, case, seed) for case in cases for seed in seeds
        }
        outcomes = []
        for case in cases:
            statuses = {seed: futures[case.name, seed].result() for seed in seeds}
            outcomes.append(
                Outcome(
                    case=case.name,
                    law=case.breaks,
                    caught=tuple(s for s, status in statuses.items() if status == "FAIL"),
                    missed=tuple(s for s, status in statuses.items() if status == "PASS"),
                    errors=tuple(
                        f"seed {s}: {status}"
                        for s, status in statuses.items()
                        if status not in {"PASS", "FAIL"}
                    ),
                )
            )
            print(_row(outcomes[-1]), flush=True)
    return outcomes


def _row(outcome: Outcome) -> str:
    missed = f"  missed on seeds {', '.join(map(str, outcome.missed))}" if outcome.missed else ""
    errors = f"  ({'; '.join(outcome.errors)})" if outcome.errors else ""
    return (
        f"{outcome.case:<40} {outcome.law:<36} {len(outcome.caught)}/{outcome.runs}{missed}{errors}"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure, print one row per case, exit 1 when any case falls short."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="broken modules to run (default: all)")
    parser.add_argument("--kind", help="only the cases of this target kind (registry, source, ...)")
    parser.add_argument("--seeds", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument("--first-seed", type=int, default=1, help="the first seed (default 1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time")
    parser.add_argument(
        "--at-least", type=float, default=1.0, help="the share each case must reach (default 1)"
    )
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    options = parser.parse_args(argv)
    cases = [
        case
        for case in _cases()
        if (not options.modules or case.name in options.modules)
        and (options.kind is None or case.kind == options.kind)
    ]
    if not cases:
        parser.error("no broken implementation matches (see conformance/tests/test_kit_broken.py)")
    seeds = list(range(options.first_seed, options.first_seed + options.seeds))
    outcomes = measure(cases, seeds, options.jobs)
    if options.json:
        options.json.write_text(
            json.dumps([vars(outcome) for outcome in outcomes], indent=1) + "\n", encoding="utf-8"
        )
    short = [o for o in outcomes if o.errors or o.share < options.at_least]
    runs = sum(o.runs for o in outcomes)
    caught = sum(len(o.caught) for o in outcomes)
    print(f"{len(outcomes)} cases, {runs} runs: caught {caught} ({caught / max(runs, 1):.0%})")
    if short:
        print(f"short of {options.at_least:.0%}: {', '.join(o.case for o in short)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
