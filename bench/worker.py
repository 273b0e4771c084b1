"""One measurement process: one library, one catalogue size, fresh interpreter.

Started by ``bench/run.py``; not meant to be run by hand, though it can be::

    python bench/worker.py cold --lib mcp-core --size 1000 --cache /tmp/mcp-core-bench

It writes JSON lines to its original standard output (the library's own prints go to stderr):
``{"event": "first_call"}`` the moment the first ``tools/call`` is answered (the orchestrator
timestamps it to measure process start -> first call), then one ``{"event": "result", ...}``.
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()

import argparse  # noqa: E402 -- the clock starts before anything else is imported
import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, TextIO  # noqa: E402

_ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="One benchmark measurement (started by bench/run.py)."
    )
    parser.add_argument("mode", choices=("cold", "warm"))
    parser.add_argument("--lib", default="mcp-core")
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument(
        "--cache", type=Path, required=True, help="folder of the generated catalogues"
    )
    parser.add_argument("--module-size", type=int, default=1000, help="tools per generated module")
    parser.add_argument("--dump", type=Path, help="warm: the dumped collection file")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="time budget per repeated figure"
    )
    parser.add_argument("--calls", type=int, default=200)
    return parser


def _emitter(out: TextIO) -> Any:
    def emit(event: Mapping[str, Any]) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    return emit


def main(argv: list[str] | None = None) -> int:
    """Run one measurement; the result goes to the original stdout as JSON lines."""
    args = _parser().parse_args(argv)
    # Keep the real stdout for results; anything the libraries print goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    emit = _emitter(out)
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))

    import anyio  # noqa: PLC0415 -- timed below as the libraries' import cost

    from bench import _libs, _measure  # noqa: PLC0415

    lib = _libs.load(args.lib)
    imported = time.perf_counter()
    figures: dict[str, float] = {"import_s": imported - _STARTED}
    budget = _measure.Budget(repeats=args.repeats, seconds=args.seconds, calls=args.calls)
    if args.mode == "cold":
        declaring = time.perf_counter()
        app = _measure.declare(lib, args.size, args.cache, args.module_size)
        figures["declare_s"] = time.perf_counter() - declaring
        figures.update(
            anyio.run(
                functools.partial(
                    _measure.cold,
                    lib,
                    app,
                    size=args.size,
                    budget=budget,
                    emit=emit,
                    started=declaring,
                )
            )
        )
    else:
        if args.dump is None:
            raise SystemExit("warm needs --dump")
        sys.path.insert(0, str(args.cache))
        figures.update(
            anyio.run(functools.partial(_measure.warm, lib, args.dump, size=args.size, emit=emit))
        )
        figures["warm_in_process_s"] = time.perf_counter() - _STARTED
    emit({"event": "result", "figures": figures, "versions": lib.versions()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
