"""Start-up, black-box: spawn → ``initialize`` → first ``tools/call`` over stdio, interleaved.

    python bench/startup.py                                   # 10, 10k and 100k tools, warm start
    python bench/startup.py --sizes 10,10000 --rounds 15 --peer-rounds 3
    python bench/startup.py --tree before=/path/to/other/checkout   # another tree's mcp_core too

Each round spawns one server per cell (``bench/serve.py``, as ``bench/run.py`` does) in a fresh
order, and ``bench/probe.py start`` reads two figures from outside: the wall time from spawn to
the first answered call, and **the server's CPU time up to it** (every thread, from ``/proc``),
which a busy machine moves far less than the wall time. It prints the medians as a Markdown
table, each ratio taken against ``MCPServer``'s median (and the warm start against a 10-tool
mcp-core app's), and the run's facts (load average before and after). ``MCPServer`` at 10k and
more takes seconds a start, so it runs ``--peer-rounds`` times only, and not at all above
``--peer-max`` tools. Nothing here asserts a time: a missed target is a finding, not a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

if __package__ in (None, ""):  # run as a script: make the ``bench`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import run

WARM: Final = "warm"
"""The warm-start cell's size label: mcp-core serving a dump of ``--warm-size`` tools."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10,10000,100000", help="catalogue sizes, comma-separated"
    )
    parser.add_argument(
        "--warm-size", type=int, default=10000, help="the dumped catalogue (0: skip)"
    )
    parser.add_argument("--rounds", type=int, default=9, help="rounds of mcp-core's cells")
    parser.add_argument("--peer-rounds", type=int, default=3, help="rounds of MCPServer above 1k")
    parser.add_argument("--peer-max", type=int, default=10000, help="largest size MCPServer serves")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also measure another checkout, with its own harness (bench/probe.py with `start`)",
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-core-bench"
    )
    parser.add_argument("--seed", type=int, default=0, help="the rounds' shuffling")
    return parser


Cell = tuple[str, str, int]
"""(tree or library, the library ``serve.py`` serves, size); size 0 is the warm start."""
Figures = dict[Cell, list[dict[str, float]]]

SMALL: Final = 1000
"""Sizes up to this get every round for ``MCPServer`` too."""
CPU: Final = "first_call_cpu_s"
WALL: Final = "spawn_first_call_s"
TIMES: Final = "\u00d7"


def _probe(
    cell: Cell, args: argparse.Namespace, trees: dict[str, Path], dump: Path | None
) -> dict[str, float]:
    name, lib, size = cell
    # Another tree is measured with its own harness (which must have ``probe.py start``).
    probe = trees.get(name, run.ROOT) / "bench" / "probe.py"
    if size:
        command = [sys.executable, str(probe), "start", "--lib", lib]
        command += ["--size", str(size), "--cache", str(args.cache)]
    else:
        assert dump is not None  # noqa: S101 -- a warm cell exists only with a dump
        command = [sys.executable, str(probe), "warm", "--lib", lib]
        command += ["--size", str(args.warm_size), "--dump", str(dump)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} at {size or WARM}: {done.stderr.strip()[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])["figures"]
    return result


def _cells(
    args: argparse.Namespace, trees: Mapping[str, Path], warm: bool
) -> list[tuple[Cell, int]]:
    """Every cell with its number of rounds."""
    cells: list[tuple[Cell, int]] = []
    for size in _sizes(args):
        cells += [((name, "mcp-core", size), args.rounds) for name in trees]
        if size <= args.peer_max:
            rounds = args.rounds if size <= SMALL else args.peer_rounds
            cells.append((("MCPServer", "mcpserver", size), rounds))
    if warm:
        cells += [((name, "mcp-core", 0), args.rounds) for name in trees]
    return cells


def _sizes(args: argparse.Namespace) -> list[int]:
    return sorted(int(size) for size in args.sizes.split(","))


def _table(args: argparse.Namespace, cells: Sequence[Cell], figures: Figures) -> list[str]:
    """The Markdown table of the medians."""

    def median(cell: Cell, key: str) -> float:
        return statistics.median(result[key] for result in figures[cell])

    smallest = _sizes(args)[0]
    lines = [
        "| spawn → first `tools/call` | tree | CPU | wall | `MCPServer` ÷ this: CPU | wall |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for size in [*_sizes(args), 0]:
        peer = ("MCPServer", "mcpserver", size)
        for cell in [c for c in cells if c[2] == size]:
            cpu, wall = median(cell, CPU), median(cell, WALL)
            if size == 0:
                base = (cell[0], "mcp-core", smallest)
                ratio = f"{cpu / median(base, CPU):.2f}{TIMES} a {smallest}-tool app's"
                wall_ratio = f"{wall / median(base, WALL):.2f}{TIMES}"
            elif peer in figures and cell != peer:
                ratio = f"{median(peer, CPU) / cpu:.2f}{TIMES}"
                wall_ratio = f"{median(peer, WALL) / wall:.2f}{TIMES}"
            else:
                ratio = wall_ratio = "-"
            label = f"warm, a {args.warm_size} dump" if size == 0 else f"{size} tools"
            lines.append(
                f"| {label} | {cell[0]} | {cpu * 1000:.0f} ms | {wall * 1000:.0f} ms "
                f"| {ratio} | {wall_ratio} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the rounds; print the table."""
    args = _parser().parse_args(argv)
    trees = {"mcp-core": run.ROOT} | {
        name: Path(path).resolve() for name, _, path in (tree.partition("=") for tree in args.tree)
    }
    target = run._prepare(  # noqa: SLF001 -- the harness's own preparation
        args.cache,
        sizes=set(_sizes(args)),
        warm_size=args.warm_size or None,
        module_size=1000,
        single=None,
        pythons={sys.executable},
    )
    for root in trees.values():
        if root != run.ROOT:
            command = [sys.executable, "-m", "compileall", "-q", str(root / "mcp_core")]
            subprocess.run(command, check=True)
    dump = run._dump(sys.executable, target)[0] if target is not None else None  # noqa: SLF001
    cells = _cells(args, trees, warm=dump is not None)
    figures: Figures = defaultdict(list)
    order = random.Random(args.seed)  # noqa: S311 -- an interleaving, not a secret
    load_before = os.getloadavg()
    for round_ in range(max(rounds for _, rounds in cells)):
        todo = [cell for cell, rounds in cells if round_ < rounds]
        order.shuffle(todo)
        for cell in todo:
            figures[cell].append(_probe(cell, args, trees, dump))
        print(f"round {round_ + 1} done", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after; medians of "
        f"{args.rounds} rounds ({args.peer_rounds} for MCPServer above {SMALL} tools)\n"
    )
    print("\n".join(_table(args, [cell for cell, _ in cells], figures)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
