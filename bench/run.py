"""Run the benchmarks: mcp-core against ``MCPServer`` (mcp 2.3.x) and fastmcp 4.x.

    python bench/run.py                      # default: 1k and 10k side by side, 100k for mcp-core
    python bench/run.py --sizes 1000 --runs 3
    python bench/run.py --smoke              # tiny sizes, one run, seconds; CI keeps it working
    python bench/run.py --python fastmcp=.venv-fastmcp/bin/python

Every measurement is a fresh worker process (``bench/worker.py``) per library, size and run; the
peers are optional (a library whose interpreter cannot import it is skipped and reported). The
table is printed, written into ``docs/benchmarks.md`` between its generated-part markers (text
around them is kept), and the scaling curve is drawn to ``docs/benchmarks-scaling.png``.
Nothing here asserts a time: a missed target is a finding, not a failure.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

if __package__ in (None, ""):  # run as a script: make the ``bench`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _catalogue, _report
from bench._results import LIB_TITLES, Job, Mode, Outcome, Results

ROOT: Final = Path(__file__).resolve().parent.parent
WORKER: Final = ROOT / "bench" / "worker.py"
IMPORTS: Final[Mapping[str, str]] = {
    "mcp-core": "mcp_core.app",
    "mcpserver": "mcp.server.mcpserver",
    "fastmcp": "fastmcp",
}
BASELINE_SIZE: Final = 10
SLOW_SIZE: Final = 10_000


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    if any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError("sizes are positive integers")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/run.py",
        description="Benchmark mcp-core against MCPServer and fastmcp in fresh processes; print one table "
        "and write docs/benchmarks.md plus the scaling plot.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--sizes", type=_sizes, default=[1000, 10_000], help="catalogue sizes compared side by side"
    )
    parser.add_argument(
        "--scale",
        type=_sizes,
        default=[1000, 10_000, 100_000],
        help="sizes of mcp-core's scaling curve",
    )
    parser.add_argument(
        "--warm-size", type=int, default=10_000, help="catalogue size of the warm start (0: skip)"
    )
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per library and size")
    parser.add_argument(
        "--slow-runs",
        type=int,
        default=3,
        help=f"runs for the peers at ≥ {SLOW_SIZE} tools and for mcp-core sizes only on the scaling curve",
    )
    parser.add_argument(
        "--libs",
        default="mcp-core,mcpserver,fastmcp",
        help="libraries to measure (missing peers are skipped)",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="LIB=PATH",
        help="interpreter for one library (default: this one), e.g. fastmcp=.venv-fastmcp/bin/python",
    )
    parser.add_argument(
        "--module-size",
        type=int,
        default=1000,
        help="tools per generated module (0: the whole catalogue in one module)",
    )
    parser.add_argument(
        "--single-module",
        type=int,
        default=10_000,
        metavar="N",
        help="also time mcp-core's cold start with N tools all in one module (0: skip)",
    )
    parser.add_argument(
        "--repeats", type=int, default=7, help="repetitions of each in-process figure"
    )
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="time budget of each repeated figure"
    )
    parser.add_argument("--calls", type=int, default=200, help="tools/call requests per process")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds before a worker is killed"
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-core-bench"
    )
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "benchmarks-scaling.png")
    parser.add_argument(
        "--json", type=Path, help="also save every outcome (and the run's facts) as JSON"
    )
    parser.add_argument(
        "--report-from",
        type=Path,
        metavar="JSON",
        help="measure nothing: render the table, doc and plot from a file saved with --json",
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; write neither the doc nor the plot"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, one run, short budgets; prints the table only (unless --doc/--plot are given)",
    )
    return parser


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- environment ------------------------------------------------------------------------------


def _interpreters(libs: Sequence[str], overrides: Sequence[str]) -> dict[str, str]:
    chosen = dict.fromkeys(libs, sys.executable)
    for item in overrides:
        lib, sep, path = item.partition("=")
        if not sep or lib not in LIB_TITLES:
            raise SystemExit(
                f"--python takes LIB=PATH with LIB one of {', '.join(LIB_TITLES)}; got {item!r}"
            )
        chosen[lib] = path
    return {lib: chosen[lib] for lib in libs}


def _available(lib: str, python: str) -> str | None:
    """None if ``python`` imports the library, else why not."""
    try:
        done = subprocess.run(
            [python, "-c", f"import {IMPORTS[lib]}"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode:
        return (done.stderr.strip().splitlines() or ["import failed"])[-1]
    return None


def _machine() -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = []
    for key, command in (("nproc", ["nproc"]), ("uname -a", ["uname", "-a"])):
        try:
            facts.append(
                (
                    f"`{key}`",
                    subprocess.run(
                        command, capture_output=True, text=True, check=True
                    ).stdout.strip(),
                )
            )
        except (OSError, subprocess.CalledProcessError):
            facts.append((f"`{key}`", "unavailable"))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        facts.append(("memory", f"{total / 2**30:.0f} GiB"))
    except (ValueError, OSError):
        pass
    facts.append(("Python", f"{platform.python_implementation()} {platform.python_version()}"))
    return facts


def _load() -> str:
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unavailable"


# -- preparation ------------------------------------------------------------------------------


def _prepare(
    cache: Path,
    *,
    sizes: set[int],
    warm_size: int | None,
    module_size: int,
    single: int | None,
    pythons: set[str],
) -> Path | None:
    """Write the generated catalogues (files that changed only) and byte-compile them per interpreter.

    Returns the ``mcp-core dump`` target of the warm-start catalogue, if there is one.
    """
    cache.mkdir(parents=True, exist_ok=True)
    for size in sorted(sizes):
        _catalogue.write_package(cache, "cat", size, module_size)
    if single:
        _catalogue.write_package(cache, "cat", single, 0)
    target = None
    if warm_size:
        package = _catalogue.write_package(cache, "warm", warm_size, module_size)
        target = cache / f"{package}_target.py"
        text = _catalogue.warm_target(package)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    for python in sorted(pythons):
        started = time.perf_counter()
        subprocess.run([python, "-m", "compileall", "-q", str(cache)], check=True)
        _say(f"  byte-compiled the catalogues for {python} ({time.perf_counter() - started:.1f} s)")
    return target


def _dump(python: str, target: Path) -> tuple[Path, float]:
    """Run ``mcp-core dump`` on the warm-start catalogue; return the file and the seconds it took."""
    output = target.with_suffix(".json")
    started = time.perf_counter()
    subprocess.run(
        [
            python,
            "-c",
            "import sys; from mcp_core.cli import main; sys.exit(main())",
            "dump",
            str(target),
            "-o",
            str(output),
        ],
        check=True,
        cwd=target.parent,
        capture_output=True,
        text=True,
    )
    return output, time.perf_counter() - started


# -- running workers --------------------------------------------------------------------------


def _run_job(
    job: Job, python: str, args: argparse.Namespace, cache: Path, dump: Path | None
) -> Outcome:
    # "single": the cold start again, with the whole catalogue in one generated module.
    command = [
        python,
        str(WORKER),
        "warm" if job.mode == "warm" else "cold",
        "--lib",
        job.lib,
        "--size",
        str(job.size),
        "--cache",
        str(cache),
        "--repeats",
        str(args.repeats),
        "--seconds",
        str(args.seconds),
        "--calls",
        str(args.calls),
        "--module-size",
        str(0 if job.mode == "single" else args.module_size),
    ]
    if dump is not None:
        command += ["--dump", str(dump)]
    outcome = Outcome(job)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errors:
        started = time.perf_counter()
        finished = False
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=ROOT
        ) as process:
            assert process.stdout is not None  # noqa: S101 -- stdout=PIPE
            try:
                finished = _read_events(process.stdout, outcome, started, args.timeout)
                process.wait(timeout=max(1.0, args.timeout - (time.perf_counter() - started)))
            except subprocess.TimeoutExpired:
                process.kill()
                outcome.error = f"killed after {args.timeout:.0f} s"
        outcome.wall_s = time.perf_counter() - started
        if outcome.error is None and (process.returncode or not finished):
            errors.seek(0)
            outcome.error = f"exit status {process.returncode}: {errors.read()[-2000:]}"
    return outcome


def _read_events(stream: Any, outcome: Outcome, started: float, timeout: float) -> bool:
    """Record the worker's events; return whether its result arrived."""
    finished = False
    for line in stream:
        now = time.perf_counter()
        if now - started > timeout:
            raise subprocess.TimeoutExpired("worker", timeout)
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "first_call":
            outcome.figures["process_first_call_s"] = now - started
        elif event.get("event") == "result":
            outcome.figures.update({k: float(v) for k, v in event["figures"].items()})
            outcome.versions = {str(k): str(v) for k, v in event["versions"].items()}
            finished = True
    return finished


def _jobs(args: argparse.Namespace, libs: Sequence[str]) -> list[Job]:
    """Every worker to run, interleaved: run 1 of everything, then run 2, ..."""
    plan: list[tuple[Mode, str, int, int]] = []
    for lib in libs:
        sizes = {BASELINE_SIZE, *args.sizes}
        if lib == "mcp-core":
            sizes |= set(args.scale)
        for size in sorted(sizes):
            slow = (lib != "mcp-core" and size >= SLOW_SIZE) or (
                lib == "mcp-core" and size not in args.sizes and size != BASELINE_SIZE
            )
            plan.append(("cold", lib, size, min(args.runs, args.slow_runs) if slow else args.runs))
    if args.warm_size and "mcp-core" in libs:
        plan.append(("warm", "mcp-core", args.warm_size, args.runs))
    if args.single_module and "mcp-core" in libs and args.module_size > 0:
        plan.append(("single", "mcp-core", args.single_module, min(args.runs, args.slow_runs)))
    jobs: list[Job] = []
    for run in range(max((p[3] for p in plan), default=0)):
        jobs.extend(Job(mode, lib, size, run, runs) for mode, lib, size, runs in plan if run < runs)
    return jobs


# -- main -------------------------------------------------------------------------------------


def _smoke(args: argparse.Namespace, given: set[str]) -> None:
    args.sizes = [BASELINE_SIZE]
    args.scale = [BASELINE_SIZE]
    args.warm_size = BASELINE_SIZE
    args.single_module = 0
    args.runs = args.slow_runs = 1
    args.repeats = 2
    args.seconds = 0.2
    args.calls = 20
    if "doc" not in given and "plot" not in given:
        args.no_write = True


def _measure(args: argparse.Namespace, raw: Sequence[str]) -> tuple[Results, _report.Meta]:
    """Run every worker; return the outcomes and what the report says about the run."""
    wanted = [lib.strip() for lib in args.libs.split(",") if lib.strip()]
    unknown = [lib for lib in wanted if lib not in LIB_TITLES]
    if unknown:
        raise SystemExit(f"unknown libraries {unknown}; choose from {', '.join(LIB_TITLES)}")
    pythons = _interpreters(wanted, args.python)
    layout = f"modules of {args.module_size} tools" if args.module_size > 0 else "one module"
    notes: list[str] = [f"Catalogue layout: {layout} (`--module-size`)."]
    libs: list[str] = []
    for lib in wanted:
        problem = _available(lib, pythons[lib])
        if problem is None:
            libs.append(lib)
            if pythons[lib] != sys.executable:
                notes.append(f"{LIB_TITLES[lib]} ran with `{pythons[lib]}`.")
        else:
            notes.append(
                f"{LIB_TITLES[lib]} skipped: `{pythons[lib]}` cannot import it ({problem})."
            )
            _say(f"skipping {LIB_TITLES[lib]}: {problem}")
    if not libs:
        raise SystemExit("no library to measure")
    warm_size = args.warm_size if args.warm_size and "mcp-core" in libs else None
    load_before = _load()
    _say("preparing catalogues ...")
    sizes = {BASELINE_SIZE, *args.sizes, *(args.scale if "mcp-core" in libs else [])}
    single = args.single_module if "mcp-core" in libs and args.module_size > 0 else None
    tree_before = _tree()
    target = _prepare(
        args.cache,
        sizes=sizes,
        warm_size=warm_size,
        module_size=args.module_size,
        single=single,
        pythons={pythons[lib] for lib in libs},
    )
    dump: Path | None = None
    dump_s: float | None = None
    if target is not None:
        dump, dump_s = _dump(pythons["mcp-core"], target)
        _say(f"  mcp-core dump of {warm_size} tools: {dump_s:.2f} s")

    jobs = _jobs(args, libs)
    results = Results()
    began = time.perf_counter()
    for index, job in enumerate(jobs, 1):
        _say(f"[{index}/{len(jobs)}] {job.describe()} ...")
        outcome = _run_job(
            job, pythons[job.lib], args, args.cache, dump if job.mode == "warm" else None
        )
        results.outcomes.append(outcome)
        error = (outcome.error or "").strip().splitlines()
        _say(f"    {outcome.wall_s:.1f} s, " + (f"failed: {error[-1][:200]}" if error else "ok"))
    elapsed = time.perf_counter() - began

    machine = _machine()
    tree_after = _tree()
    machine.append(
        (
            "mcp-core tree",
            tree_before
            if tree_after == tree_before
            else f"{tree_before} at the start; {tree_after} at the end",
        )
    )
    machine.append(("load average (1/5/15 min) before; after", f"{load_before}; {_load()}"))
    machine.append(
        ("harness wall time", f"{elapsed / 60:.1f} min for {len(jobs)} worker processes")
    )
    slow = min(args.runs, args.slow_runs)
    runs = (
        f"{args.runs} run{'s' if args.runs != 1 else ''} per cell; {slow} for the peers at "
        f"≥ {SLOW_SIZE // 1000}k tools and for mcp-core's scale-only sizes"
    )
    meta = _report.Meta(
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command="python bench/run.py" + "".join(f" {shlex.quote(a)}" for a in raw),
        machine=machine,
        runs=runs,
        baseline_size=BASELINE_SIZE,
        sizes=args.sizes,
        scale_sizes=args.scale if "mcp-core" in libs else [],
        warm_size=warm_size,
        single_module=single,
        module_size=args.module_size,
        dump_s=dump_s,
        plot_name=None,
        notes=notes,
    )
    return results, meta


def _tree() -> str:
    """The mcp-core commit measured, and whether its sources had uncommitted changes."""
    # Read-only git: no optional locks, so not even the index's stat cache is refreshed.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}

    def git(*arguments: str) -> str:
        done = subprocess.run(
            ["git", *arguments], capture_output=True, text=True, cwd=ROOT, env=env, check=True
        )
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("diff", "--name-only", "HEAD", "--", "mcp_core").splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    if not changed:
        return f"commit {head}, clean"
    return f"commit {head} + uncommitted changes in {len(changed)} mcp_core files: {', '.join(changed)}"


def _save(path: Path, results: Results, meta: _report.Meta) -> None:
    record = {"meta": dataclasses.asdict(meta), "outcomes": [o.to_json() for o in results.outcomes]}
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def _saved(path: Path) -> tuple[Results, _report.Meta]:
    record = json.loads(path.read_text(encoding="utf-8"))
    meta = record["meta"]
    meta["machine"] = [tuple(pair) for pair in meta["machine"]]
    meta.setdefault("single_module", None)
    meta.setdefault("module_size", 1000)
    return Results([Outcome.from_json(o) for o in record["outcomes"]]), _report.Meta(**meta)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; returns the exit status (see the end)."""
    raw = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(raw)
    given = {a.lstrip("-").split("=")[0] for a in raw if a.startswith("--")}
    if args.smoke:
        _smoke(args, given)
    if args.report_from is not None:
        results, meta = _saved(args.report_from)
    else:
        results, meta = _measure(args, raw)
        if args.json:
            _save(args.json, results, meta)
    write = not args.no_write
    if write:
        meta = dataclasses.replace(meta, plot_name=os.path.relpath(args.plot, args.doc.parent))
        problem = _report.plot(results, meta, args.plot)
        if problem is not None:
            _say(problem)
            meta = dataclasses.replace(meta, plot_name=None)
    generated = _report.render(results, meta)
    print(generated)
    if write:
        existing = args.doc.read_text(encoding="utf-8") if args.doc.exists() else None
        args.doc.parent.mkdir(parents=True, exist_ok=True)
        args.doc.write_text(_report.splice(existing, generated), encoding="utf-8")
        _say(f"wrote {args.doc}" + (f" and {args.plot}" if meta.plot_name else ""))
    # A smoke run exists to keep the harness working: any failed worker fails it. A full run
    # reports failed workers in the document and fails only when nothing could be measured.
    failed = len(results.errors())
    return 1 if failed and (args.smoke or failed == len(results.outcomes)) else 0


if __name__ == "__main__":
    sys.exit(main())
