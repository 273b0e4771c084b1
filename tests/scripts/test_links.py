"""scripts/links.py: every kind of broken reference is found, and nothing else is."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _links() -> ModuleType:
    spec = importlib.util.spec_from_file_location("links", ROOT / "scripts" / "links.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


links = _links()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git repository with a document, a record and a module."""
    files = {
        "README.md": "See `docs/guide.md` and [the record](adr/0001-first.md).\n",
        "docs/guide.md": "Run `scripts/run`; output goes to `./.venv` (made by the tooling).\n",
        "adr/0001-first.md": "# 0001\n\nAs ADR 0001 says; examples like `path/to/server.py` are free.\n",
        "scripts/run": "#!/bin/sh\n",
        "pkg/mod.py": '"""See docs/guide.md §2."""\n\n# ADR 0001 explains why.\nX = "/work/not/prose"\n',
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # noqa: S607 -- git from PATH
    return tmp_path


def problems(root: Path) -> list[str]:
    """What the checker reports for ``root``."""
    return list(links.Checker(root).problems())


class TestLinks:
    """References in documents, docstrings and comments resolve inside the repository."""

    def test_a_clean_tree(self, repo: Path) -> None:
        """Existing files, a record, an example path, a generated folder, a string in code: clean."""
        assert problems(repo) == []

    @pytest.mark.parametrize(
        ("name", "text", "expected"),
        [
            (
                "docs/a.md",
                "See `docs/missing.md`.\n",
                "docs/a.md:1: 'docs/missing.md' does not exist",
            ),
            (
                "docs/b.md",
                "[x](../nowhere.md)\n",
                "docs/b.md:1: link to '../nowhere.md', which does not exist",
            ),
            (
                "docs/c.md",
                "The targets of bench.md.\n",
                "docs/c.md:1: 'bench.md' is not a document in the repository",
            ),
            (
                "docs/d.md",
                "As ADR 0042 decided.\n",
                "docs/d.md:1: ADR 0042 does not exist (no adr/0042-*.md)",
            ),
            (
                "docs/e.md",
                "Read ../shared/design/x first.\n",
                "docs/e.md:1: points outside the repository: 'Read ../shared/design/x first.'",
            ),
            (
                "pkg/f.py",
                '"""Made in /home/me/work."""\n',
                "pkg/f.py:1: an absolute path of a machine: 'Made in /home/me/work.'; name a path in the repository",
            ),
            (
                "pkg/g.py",
                "X = 1  # see scripts/gone\n",
                "pkg/g.py:1: 'scripts/gone' does not exist",
            ),
        ],
    )
    def test_each_kind_of_break(self, repo: Path, name: str, text: str, expected: str) -> None:
        """Each kind of broken reference is one line naming the file, the line and the culprit."""
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        assert problems(repo) == [expected]

    def test_command_line(self, repo: Path) -> None:
        """The script exits 1 and prints each problem; 0 on a clean tree."""
        command = [sys.executable, str(ROOT / "scripts" / "links.py"), str(repo)]
        assert subprocess.run(command, check=False, capture_output=True).returncode == 0  # noqa: S603 -- our script
        (repo / "docs" / "guide.md").write_text("See `adr/0009-none.md`.\n", encoding="utf-8")
        result = subprocess.run(command, check=False, capture_output=True, text=True)  # noqa: S603 -- same
        assert result.returncode == 1
        assert result.stdout == "docs/guide.md:1: 'adr/0009-none.md' does not exist\n"
        assert result.stderr == "links: 1 broken reference(s)\n"
