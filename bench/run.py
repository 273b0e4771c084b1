"""Run the benchmarks: mcp-core against ``MCPServer`` (mcp 2.3.x) and fastmcp 4.x.

    python bench/run.py                      # everything: black-box, then the in-process breakdown
    python bench/run.py --sizes 10,1000 --transports stdio --no-inprocess
    python bench/run.py --smoke              # tiny sizes, one run, seconds; CI keeps it working
    python bench/run.py --python fastmcp=.venv-fastmcp/bin/python

The headline is black-box: each library's server in its own process (``bench/serve.py``), over
stdio and over streamable HTTP, measured by a raw JSON-RPC client in another process
(``bench/probe.py``), next to a bare floor server. The breakdown runs each library inside one
worker process (``bench/worker.py``). Every cell is a fresh process per run, runs interleaved;
the peers are optional (a library whose interpreter cannot import it is skipped and reported).
A run reports JSON (every cell's medians and the run's facts, ``--summary``) and one table, the
black-box comparison, which is printed and written into ``docs/benchmarks.md`` between its
generated-part markers (text around them is kept).
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
from bench._results import (
    BLACK_BOX,
    FLOOR,
    LIB_TITLES,
    PEERS,
    SDK,
    Job,
    Meta,
    Mode,
    Outcome,
    Results,
)

ROOT: Final = Path(__file__).resolve().parent.parent
WORKER: Final = ROOT / "bench" / "worker.py"
PROBE: Final = ROOT / "bench" / "probe.py"
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
        description="Benchmark mcp-core against MCPServer and fastmcp: black-box (each server in its own "
        "process, over stdio and streamable HTTP, timed by a raw client in another), then the in-process "
        "breakdown. Writes the JSON summary, prints one table and writes it into docs/benchmarks.md.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=[10, 1000, 10_000, 100_000],
        help="black-box catalogue sizes (the peers run up to --peer-max)",
    )
    parser.add_argument(
        "--peer-max", type=int, default=10_000, help="largest catalogue the peers are run with"
    )
    parser.add_argument("--runs", type=int, default=3, help="server processes per black-box cell")
    parser.add_argument(
        "--slow-runs",
        type=int,
        default=1,
        help="runs of a cell whose first run took longer than --slow-seconds",
    )
    parser.add_argument(
        "--slow-seconds",
        type=float,
        default=90.0,
        help="a cell slower than this gets --slow-runs runs (fastmcp takes minutes to register 10k tools)",
    )
    parser.add_argument(
        "--transports", default="stdio,http", help="black-box transports: stdio, http or both"
    )
    parser.add_argument(
        "--load-size", type=int, default=100, help="catalogue size of the HTTP load test (0: skip)"
    )
    parser.add_argument("--sessions", type=int, default=50, help="concurrent HTTP sessions")
    parser.add_argument(
        "--session-calls", type=int, default=20, help="tools/call requests per HTTP session"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="bursts of sessions per load-test process"
    )
    parser.add_argument(
        "--warm-size",
        type=int,
        default=10_000,
        help="catalogue size of mcp-core's warm start from a dump (0: skip)",
    )
    parser.add_argument(
        "--libs",
        default="mcp-core,mcpserver,fastmcp",
        help="libraries to measure (missing peers are skipped); the floor always runs",
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
        "--repeats", type=int, default=7, help="repetitions of each repeated figure in a process"
    )
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="time budget of each repeated figure"
    )
    parser.add_argument("--calls", type=int, default=200, help="tools/call requests per process")
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds before a process is killed"
    )
    inprocess = parser.add_argument_group("in-process breakdown")
    inprocess.add_argument(
        "--inprocess",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the in-process breakdown (bench/worker.py)",
    )
    inprocess.add_argument(
        "--inprocess-sizes",
        type=_sizes,
        default=[1000],
        help="sizes compared side by side in process (besides 10)",
    )
    inprocess.add_argument(
        "--inprocess-scale",
        type=_sizes,
        default=[1000, 10_000, 100_000],
        help="sizes of mcp-core's in-process scaling table",
    )
    inprocess.add_argument(
        "--inprocess-runs", type=int, default=3, help="worker processes per in-process cell"
    )
    inprocess.add_argument(
        "--single-module",
        type=int,
        default=10_000,
        metavar="N",
        help="also time mcp-core's in-process cold start with N tools all in one module (0: skip)",
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-core-bench"
    )
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument(
        "--summary",
        type=Path,
        default=Path(tempfile.gettempdir()) / "mcp-core-bench" / "summary.json",
        help="where the JSON report goes: every cell's medians and run count, the run's facts",
    )
    parser.add_argument(
        "--json", type=Path, help="also save every outcome (and the run's facts) as JSON"
    )
    parser.add_argument(
        "--report-from",
        type=Path,
        metavar="JSON",
        help="measure nothing: report again (JSON, table, doc) from a file saved with --json",
    )
    parser.add_argument(
        "--no-write", action="store_true", help="do not write the table into the doc"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, one run, short budgets; prints one line (unless --doc is given)",
    )
    return parser


_QUIET: list[bool] = [False]
"""Whether progress lines are left out (a smoke run says one line at its end)."""


def _say(text: str) -> None:
    if not _QUIET[0]:
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
    """Write the generated catalogues (files that changed only); byte-compile them and mcp-core.

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
    # mcp-core too, as installing a wheel does: an editable install under
    # PYTHONDONTWRITEBYTECODE would otherwise compile its sources in every measured process,
    # while the peers' installed packages come byte-compiled.
    for python in sorted(pythons):
        started = time.perf_counter()
        subprocess.run(
            [python, "-m", "compileall", "-q", str(cache), str(ROOT / "mcp_core")], check=True
        )
        _say(
            f"  byte-compiled the catalogues and mcp-core for {python} "
            f"({time.perf_counter() - started:.1f} s)"
        )
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


def _command(
    job: Job, python: str, args: argparse.Namespace, cache: Path, dump: Path | None
) -> list[str]:
    """The process that measures ``job``: a probe (black-box) or a worker (in process)."""
    common = ["--repeats", str(args.repeats), "--seconds", str(args.seconds)]
    common += ["--calls", str(args.calls)]
    if job.mode in BLACK_BOX:
        probe = {"load-json": "load", "dump-start": "warm"}.get(job.mode, job.mode)
        command = [python, str(PROBE), probe, "--lib", job.lib, "--size", str(job.size), *common]
        command += ["--cache", str(cache), "--module-size", str(args.module_size)]
        command += ["--timeout", str(args.timeout)]
        if job.mode in ("load", "load-json"):
            command += [
                "--sessions",
                str(args.sessions),
                "--session-calls",
                str(args.session_calls),
            ]
            command += ["--rounds", str(args.rounds)]
        if job.mode == "load-json":
            command.append("--json-response")
        if job.mode == "dump-start" and dump is not None:
            command += ["--dump", str(dump)]
        return command
    # "single": the in-process cold start again, with the whole catalogue in one module.
    command = [python, str(WORKER), "warm" if job.mode == "warm" else "cold", "--lib", job.lib]
    command += ["--size", str(job.size), "--cache", str(cache), *common]
    command += ["--module-size", str(0 if job.mode == "single" else args.module_size)]
    if job.mode == "warm" and dump is not None:
        command += ["--dump", str(dump)]
    return command


def _run_job(command: Sequence[str], job: Job, timeout: float) -> Outcome:
    outcome = Outcome(job)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errors:
        started = time.perf_counter()
        finished = False
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=ROOT
        ) as process:
            assert process.stdout is not None  # noqa: S101 -- stdout=PIPE
            try:
                finished = _read_events(process.stdout, outcome, started, timeout)
                process.wait(timeout=max(1.0, timeout - (time.perf_counter() - started)))
            except subprocess.TimeoutExpired:
                process.kill()
                outcome.error = f"killed after {timeout:.0f} s"
        outcome.wall_s = time.perf_counter() - started
        if outcome.error is None and (process.returncode or not finished):
            errors.seek(0)
            outcome.error = f"exit status {process.returncode}: {errors.read()[-2000:]}"
    return outcome


def _read_events(stream: Any, outcome: Outcome, started: float, timeout: float) -> bool:
    """Record the worker's or probe's events; return whether its result arrived."""
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


Plan = list[tuple[Mode, str, int, int]]
"""(mode, library, size, runs) per cell."""


def _black_box_plan(args: argparse.Namespace, libs: Sequence[str]) -> Plan:
    plan: Plan = []
    servers = [*libs, FLOOR]
    for size in args.sizes:
        for transport in args.transports:
            for lib in servers:
                if lib in PEERS and size > args.peer_max:
                    continue
                plan.append((transport, lib, size, args.runs))
    if args.load_size:
        plan += [("load", lib, args.load_size, args.runs) for lib in servers]
        if "mcp-core" in libs:
            plan.append(("load-json", "mcp-core", args.load_size, args.runs))
    if args.warm_size and "mcp-core" in libs:
        plan.append(("dump-start", "mcp-core", args.warm_size, args.runs))
    imports = [*libs, SDK, FLOOR]
    plan += [("import", key, 0, args.runs) for key in imports]
    return plan


def _inprocess_plan(args: argparse.Namespace, libs: Sequence[str]) -> Plan:
    if not args.inprocess:
        return []
    plan: Plan = []
    runs = args.inprocess_runs
    for lib in libs:
        sizes = {BASELINE_SIZE, *args.inprocess_sizes}
        if lib == "mcp-core":
            sizes |= set(args.inprocess_scale)
        for size in sorted(sizes):
            scale_only = size not in args.inprocess_sizes and size != BASELINE_SIZE
            plan.append(
                (
                    "cold",
                    lib,
                    size,
                    1 if lib == "mcp-core" and scale_only and size > SLOW_SIZE else runs,
                )
            )
    if args.warm_size and "mcp-core" in libs:
        plan.append(("warm", "mcp-core", args.warm_size, runs))
    if args.single_module and "mcp-core" in libs and args.module_size > 0:
        plan.append(("single", "mcp-core", args.single_module, 1))
    return plan


def _jobs(plan: Plan) -> list[Job]:
    """Every process to run, interleaved: run 1 of every cell, then run 2, ..."""
    jobs: list[Job] = []
    for run in range(max((p[3] for p in plan), default=0)):
        jobs.extend(Job(mode, lib, size, run, runs) for mode, lib, size, runs in plan if run < runs)
    return jobs


# -- main -------------------------------------------------------------------------------------


def _smoke(args: argparse.Namespace, given: set[str]) -> None:
    args.sizes = [BASELINE_SIZE]
    args.peer_max = BASELINE_SIZE
    args.runs = args.slow_runs = args.inprocess_runs = 1
    args.load_size = BASELINE_SIZE
    args.sessions = 5
    args.session_calls = 3
    args.rounds = 1
    args.warm_size = BASELINE_SIZE
    args.inprocess_sizes = [BASELINE_SIZE]
    args.inprocess_scale = [BASELINE_SIZE]
    args.single_module = 0
    args.repeats = 2
    args.seconds = 0.2
    args.calls = 20
    args.timeout = min(args.timeout, 300.0)
    if "doc" not in given:
        args.no_write = True


def _smoke_summary(results: Results, meta: Meta) -> None:
    """A smoke run's one line (and one more per failed process): it measures nothing worth reading."""
    failed = results.errors()
    wall = dict(meta.machine).get("harness wall time", "")
    verdict = f"{len(failed)} failed" if failed else "all ran"
    print(
        f"bench smoke: {len(results.outcomes)} processes, {verdict} ({wall}); the report renders "
        "(not written; asserts no timings)"
    )
    for outcome in failed:
        last = (outcome.error or "").strip().splitlines()
        print(f"  {outcome.job.describe()}: {last[-1][:200] if last else 'failed'}")


def _choose(args: argparse.Namespace) -> tuple[list[str], dict[str, str], list[str]]:
    """The libraries that can be measured, each one's interpreter, and notes for the report."""
    wanted = [lib.strip() for lib in args.libs.split(",") if lib.strip()]
    unknown = [lib for lib in wanted if lib not in LIB_TITLES]
    if unknown:
        raise SystemExit(f"unknown libraries {unknown}; choose from {', '.join(LIB_TITLES)}")
    bad = [t for t in args.transports if t not in ("stdio", "http")]
    if bad:
        raise SystemExit(f"unknown transports {bad}; choose from stdio, http")
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
    pythons.update(dict.fromkeys((FLOOR, SDK), sys.executable))
    return libs, pythons, notes


def _measure(args: argparse.Namespace, raw: Sequence[str]) -> tuple[Results, Meta]:
    """Run every probe and worker; return the outcomes and what the report says about the run."""
    libs, pythons, notes = _choose(args)
    warm_size = args.warm_size if args.warm_size and "mcp-core" in libs else None
    load_before = _load()
    _say("preparing catalogues ...")
    sizes = {BASELINE_SIZE, *args.sizes}
    if args.load_size:
        sizes.add(args.load_size)
    if args.inprocess:
        sizes |= {*args.inprocess_sizes, *(args.inprocess_scale if "mcp-core" in libs else [])}
    single = (
        args.single_module
        if args.inprocess and "mcp-core" in libs and args.module_size > 0
        else None
    )
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

    jobs = _jobs(_black_box_plan(args, libs) + _inprocess_plan(args, libs))
    results = Results()
    began = time.perf_counter()
    first_wall: dict[tuple[Mode, str, int], float] = {}
    ran = 0
    for index, job in enumerate(jobs, 1):
        cell = (job.mode, job.lib, job.size)
        if job.run >= args.slow_runs and first_wall.get(cell, 0.0) > args.slow_seconds:
            continue  # a slow cell: its first run took minutes; fewer runs bound the harness
        ran += 1
        _say(f"[{index}/{len(jobs)}] {job.describe()} ...")
        command = _command(job, pythons[job.lib], args, args.cache, dump)
        outcome = _run_job(command, job, args.timeout)
        results.outcomes.append(outcome)
        first_wall.setdefault(cell, outcome.wall_s)
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
    machine.append(
        ("load average (1/5/15 min) at the start; at the end", f"{load_before}; {_load()}")
    )
    machine.append(("harness wall time", f"{elapsed / 60:.1f} min for {ran} processes"))
    slow = min(args.runs, args.slow_runs)
    runs = (
        f"black-box: {args.runs} server process{'es' if args.runs != 1 else ''} per cell, "
        f"{slow} for a cell whose first process took over {args.slow_seconds:.0f} s"
    )
    inprocess_runs = (
        f"{args.inprocess_runs} worker process{'es' if args.inprocess_runs != 1 else ''} per cell, "
        "1 for mcp-core beyond 10k and for the one-module figure"
    )
    meta = Meta(
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command="python bench/run.py" + "".join(f" {shlex.quote(a)}" for a in raw),
        machine=machine,
        notes=notes,
        plot_name=None,
        module_size=args.module_size,
        dump_s=dump_s,
        sizes=args.sizes,
        peer_max=args.peer_max,
        runs=runs,
        dump_size=warm_size,
        load_size=args.load_size or None,
        load_sessions=args.sessions,
        load_calls=args.session_calls,
        load_rounds=args.rounds,
        inprocess_runs=inprocess_runs,
        baseline_size=BASELINE_SIZE,
        inprocess_sizes=args.inprocess_sizes,
        scale_sizes=args.inprocess_scale if "mcp-core" in libs else [],
        warm_size=warm_size if args.inprocess else None,
        single_module=single,
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


def _save(path: Path, results: Results, meta: Meta) -> None:
    record = {"meta": dataclasses.asdict(meta), "outcomes": [o.to_json() for o in results.outcomes]}
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def _saved(path: Path) -> tuple[Results, Meta]:
    record = json.loads(path.read_text(encoding="utf-8"))
    meta = record["meta"]
    meta["machine"] = [tuple(pair) for pair in meta["machine"]]
    return Results([Outcome.from_json(o) for o in record["outcomes"]]), Meta(**meta)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; returns the exit status (see the end)."""
    raw = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(raw)
    args.transports = [t.strip() for t in args.transports.split(",") if t.strip()]
    given = {a.lstrip("-").split("=")[0] for a in raw if a.startswith("--")}
    if args.smoke:
        _smoke(args, given)
        _QUIET[0] = args.no_write  # unless it writes the document (--doc): one line
    if args.report_from is not None:
        results, meta = _saved(args.report_from)
    else:
        results, meta = _measure(args, raw)
        if args.json:
            _save(args.json, results, meta)
    write = not args.no_write
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    args.summary.write_text(json.dumps(_report.summary(results, meta), indent=1), encoding="utf-8")
    generated = _report.render(results, meta)
    if args.smoke and _QUIET[0]:
        _smoke_summary(results, meta)
    else:
        print(generated)
    if write:
        existing = args.doc.read_text(encoding="utf-8") if args.doc.exists() else None
        args.doc.parent.mkdir(parents=True, exist_ok=True)
        args.doc.write_text(_report.splice(existing, generated), encoding="utf-8")
        _say(f"wrote {args.doc}")
    _say(f"wrote {args.summary}")
    # A smoke run exists to keep the harness working: any failed process fails it. A full run
    # reports failed processes in the document and fails only when nothing could be measured.
    failed = len(results.errors())
    return 1 if failed and (args.smoke or failed == len(results.outcomes)) else 0


if __name__ == "__main__":
    sys.exit(main())
