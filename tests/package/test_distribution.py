"""The distribution as a user installs it: a wheel of ``mcp-core-server`` in a fresh venv.

The wheel is built from the package's own files, installed with its dependencies from the package
index into a virtual environment that has nothing else, and then the README's commands run there
on the README's own ``server.py``: ``mcp-core inspect`` and ``mcp-core run --transport http``
(driven by the official client), and ``python -m mcp_core``. Outside CI, a machine that cannot
reach the package index skips this test and says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from mcp import Client

from tests.clients import ROOT, ok_text
from tests.e2e.conftest import free_port, start, stop

NAME = "mcp-core-server"
WHEEL_FILES = ("pyproject.toml", "README.md", "LICENSE", "mcp_core")
_UNREACHABLE = re.compile(
    r"(Failed to establish a new connection|Temporary failure in name resolution|"
    r"Network is unreachable|No matching distribution found for (?!mcp-core-server))",
    re.IGNORECASE,
)


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 -- our own interpreters, fixed arguments
        [str(part) for part in command],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}},
        timeout=900,
    )


def _checked(result: subprocess.CompletedProcess[str], what: str) -> str:
    if result.returncode != 0:
        if _UNREACHABLE.search(result.stderr) and not os.environ.get("CI"):
            pytest.skip(f"{what}: the package index is unreachable ({result.stderr[-300:]})")
        pytest.fail(f"{what} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def readme_server() -> str:
    """The README's ``server.py``: the Python block that starts with ``# server.py``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# server\.py\n.*?)```", readme, re.DOTALL)
    assert blocks, "README.md has no ```python block starting with # server.py"
    return str(blocks[0])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel of this checkout installed: its ``bin`` folder."""
    root = tmp_path_factory.mktemp("distribution")
    tree = root / "tree"
    tree.mkdir()
    for name in WHEEL_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, tree / name)
    wheels = root / "wheels"
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, tree)
    _checked(built, "building the wheel")
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name.startswith("mcp_core_server-"), wheel.name
    fresh = root / "venv"
    venv.EnvBuilder(with_pip=True).create(fresh)
    bin_dir = fresh / "bin"
    _checked(_run(bin_dir / "python", "-m", "pip", "install", wheel), f"pip install {wheel.name}")
    return bin_dir


def test_the_wheel_installs_the_package_and_the_command(installed: Path) -> None:
    """``mcp-core-server`` brings ``mcp_core`` (its version from its own metadata) and ``mcp-core``."""
    probe = (
        "import importlib.metadata as m, mcp_core;"
        f"print(mcp_core.__version__ == m.version({NAME!r}), mcp_core.__file__)"
    )
    same, where = _checked(
        _run(installed / "python", "-c", probe, cwd=installed), "import mcp_core"
    ).split()
    assert same == "True"
    assert Path(where).is_relative_to(installed.parent)  # the venv's copy, not this checkout
    assert (installed / "mcp-core").is_file()
    shown = _run(installed / "python", "-m", "pip", "show", "mcp-core")
    assert shown.returncode != 0  # the unrelated PyPI project of that name is not involved


def test_the_readme_commands_work(installed: Path, tmp_path: Path) -> None:
    """``mcp-core inspect server.py`` and ``python -m mcp_core inspect`` list the README's app."""
    (tmp_path / "server.py").write_text(readme_server(), encoding="utf-8")
    for command in ([installed / "mcp-core"], [installed / "python", "-m", "mcp_core"]):
        report = _checked(_run(*command, "inspect", "server.py", cwd=tmp_path), "inspect")
        assert "add" in report
        assert "review" in report
        assert "app://config" in report


async def test_the_readme_server_serves_over_http(installed: Path, tmp_path: Path) -> None:
    """``mcp-core run server.py --transport http --port N`` answers the official client."""
    (tmp_path / "server.py").write_text(readme_server(), encoding="utf-8")
    port = free_port()
    command = [str(installed / "mcp-core"), "run", str(tmp_path / "server.py")]
    process = start([*command, "--transport", "http", "--port", str(port)], port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert ok_text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
    finally:
        stop(process)
