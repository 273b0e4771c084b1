"""The kit run outside this repository, with the project's own pytest configuration: no warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("config", ["pytest.ini", "pyproject.toml", None])
def test_certification_run_is_free_of_warnings(tmp_path: Path, config: str | None) -> None:
    """In a fresh folder (its own config, or none), a certification passes under ``-W error``.

    pytest-asyncio, when installed (as it is here, for the repository's own tests), warns at
    start-up about a setting the folder's configuration does not have; the kit's checks never
    use it, so a certification run must not be failed or cluttered by that warning.
    """
    if config == "pytest.ini":
        (tmp_path / config).write_text("[pytest]\n", encoding="utf-8")
    elif config == "pyproject.toml":
        (tmp_path / config).write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-W",
            "error",
            "-p",
            "no:cacheprovider",
            "--mcp-conformance",
            "--mcp-source=mcp_conformance.reference.static:source",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Warning" not in output
    assert " 0 FAIL, 0 N/A, 0 NOT RUN - certified" in output
