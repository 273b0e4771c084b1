"""``mcp-core run`` as a worker of a deployment: incomplete or bad settings are one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MCP_CORE = Path(sys.executable).with_name("mcp-core")
SERVER = ROOT / "examples" / "deployment" / "shared_catalogue.py"


def run(*flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mcp-core run`` the example with ``flags``, without the deployment variables of this shell."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MCP_CORE_DEPLOYMENT")}
    clean.pop("MCP_CORE_WORKER_ID", None)
    return subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "run", str(SERVER), "--transport", "http", "--port", "0", *flags],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--redis", "redis://127.0.0.1:1/0"], "missing: MCP_CORE_WORKER_ID"),
        (["--worker-id", "w1"], "missing: MCP_CORE_DEPLOYMENT_REDIS"),
        (
            ["--worker-id", "w 1", "--redis", "redis://127.0.0.1:1/0", "--secret-file", "{secret}"],
            "a worker id is 1-40 letters",
        ),
        (
            ["--worker-id", "w1", "--redis", "redis://127.0.0.1:1/0", "--secret-file", "{short}"],
            "at least 32 bytes",
        ),
    ],
)
def test_refused_in_one_line(flags: list[str], said: str, tmp_path: Path) -> None:
    """Half a deployment, a bad id or a short secret: exit 2 with one line naming it."""
    (tmp_path / "secret").write_text("s" * 40)
    (tmp_path / "short").write_text("tiny")
    values = {"{secret}": str(tmp_path / "secret"), "{short}": str(tmp_path / "short")}
    done = run(*(values.get(flag, flag) for flag in flags))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2
    assert len(lines) == 1
    assert lines[0].startswith("mcp-core: ")
    assert said in lines[0]
