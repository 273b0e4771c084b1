"""The command line on a broken app: inspect shows every problem and the health; run logs each once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.e2e.conftest import run_http, stop

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "tests" / "fixtures" / "faulty_app.py"
MCP_CORE = Path(sys.executable).with_name("mcp-core")

SKIPPED = (
    "tool 'bad name!'",
    "resource_template 'app://items/{id'",
    "resource_template 'app://users/{id}'",
    "tool 'unresolvable'",
    "tool 'dup'",
    "tool 'deep'",
    "tool 'invalid_schema'",
    "tool 'bad_regex'",
    "tool 'bad name in file!'",
)


def mcp_core(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run the console script to completion."""
    return subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class TestInspect:
    """inspect lists skipped declarations with their place, and each source's health."""

    def test_text(self) -> None:
        """Every skipped element, its declaring line, and a health line per source."""
        done = mcp_core("inspect", str(FAULTY))
        assert done.returncode == 0, done.stderr
        out = done.stdout
        for ref in SKIPPED:
            assert "[skipped] " in out
            assert f" {ref}: " in out, ref
        assert f"declared at {FAULTY}:" in out
        assert (
            "  [   0] Hanging() - down (1 failures): provide() did not finish within 0.5 s" in out
        )
        assert "App('faulty').functions - ok, " in out
        assert "Traceback" not in out + done.stderr

    def test_strict_and_json(self) -> None:
        """--strict fails on diagnostics; --json carries the health document."""
        assert mcp_core("inspect", str(FAULTY), "--strict").returncode == 1
        report = json.loads(mcp_core("inspect", str(FAULTY), "--json").stdout)
        states = {s["source"]: s["state"] for s in report["health"]["sources"]}
        assert states["Hanging()"] == "down"
        assert states["ComesBack()"] == "down"
        assert report["health"]["status"] == "degraded"
        assert {d["ref"] for d in report["diagnostics"] if d["kind"] == "skipped"} >= set(SKIPPED)


def ready(url: str) -> bool:
    """Whether the health endpoint at ``url`` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 -- our own loopback server
            return bool(response.status == 200)
    except urllib.error.HTTPError:
        return False


def test_run_logs_each_problem_once_in_one_line(tmp_path: Path) -> None:
    """At startup, one log line per skipped element or failing source; no traceback."""
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        url, process = run_http(FAULTY, stderr=stderr)
        try:
            deadline = time.monotonic() + 120  # a guard against hanging, not a timing assertion
            while not ready(f"{url}/healthz"):
                assert time.monotonic() < deadline, "the catalogue never loaded"
                time.sleep(0.05)
        finally:
            stop(process)
    lines = log.read_text().splitlines()
    assert not [line for line in lines if "Traceback" in line]
    skipped = [line for line in lines if "[skipped]" in line]
    assert len(skipped) == len(set(skipped))  # each problem once
    for ref in SKIPPED:
        assert any(f" {ref}: " in line for line in skipped), (ref, lines)
    for source in ("Hanging()", "ComesBack()"):
        prefix = f"WARNING mcp_core.registry: source {source} unavailable"
        assert sum(line.startswith(prefix) for line in lines) == 1, (source, lines)
