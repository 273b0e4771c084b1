"""Running the kit from a test, with pytest's ``pytester``: for testing what the kit reports.

A framework that keeps deliberately broken variants of its registry (to prove its CI would catch
a regression) asserts on the report rather than on pytest's exit code::

    pytest_plugins = ["pytester"]

    def test_lower_priority_winning_is_caught(pytester):
        report = run_kit(pytester, "--mcp-registry=myframework.broken:inverted_priorities")
        assert report.law("registry.precedence").status == "FAIL"
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from mcp_conformance.plugin import check_files
from mcp_conformance.report import Report, load_report

# An in-process run re-imports every module the calling process has not imported yet (and pytest
# assertion-rewrites the kit's modules again each time, hypothesis's too): importing the checks
# here, once, keeps each in-process run down to the checks themselves.
for _kind in ("registry", "wrapper", "server"):
    for _path in check_files(_kind):
        importlib.import_module(f"mcp_conformance._checks.{_path.stem}")

__all__ = ["run_kit"]


def run_kit(pytester: pytest.Pytester, *args: str, subprocess: bool = False) -> Report:
    """Run ``pytest --mcp-conformance *args`` in ``pytester``'s directory; return its report.

    In-process by default (fast: mcp-core and hypothesis stay imported); ``subprocess=True`` for
    what needs a fresh interpreter (``-n`` workers, environment variables read at import). Fails
    the calling test, showing pytest's output, when the run wrote no report (a usage error).
    """
    path = (
        pytester.path
        / f"conformance-report-{len(list(pytester.path.glob('conformance-report-*')))}.json"
    )
    arguments = [
        "--mcp-conformance",
        f"--mcp-conformance-report={path}",
        "-p",
        "no:cacheprovider",
        *args,
    ]
    run = pytester.runpytest_subprocess if subprocess else pytester.runpytest_inprocess
    result = run(*arguments)
    if not Path(path).exists():
        pytest.fail(
            "the conformance kit wrote no report; its output:\n"
            + "\n".join(result.outlines + result.errlines),
            pytrace=False,
        )
    return load_report(path)
