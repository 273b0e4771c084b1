"""Every reference in the repository's prose resolves inside the repository.

Read: the Markdown documents (README, CHANGELOG, ``docs/``, ``adr/``, the kit's and the bench's
READMEs, any other tracked ``*.md``) and the docstrings and comments of every Python file. Checked:

- a Markdown link or image to a relative path names a file or folder that exists;
- a path whose first part is a top-level entry of the repository (``docs/serving.md``,
  ``scripts/install``, ``mcp_core/server/_binding.py``) exists; other paths are examples
  (``path/to/server.py``) and are left alone, as are ones with placeholders (``<layer>``, ``*``);
- a bare document name (``concepts.md``) is the name of a document in the repository;
- ``ADR 0003`` has its record, ``adr/0003-*.md``;
- nothing names an absolute path of a machine (a user's home, a work folder) or a document
  outside the repository (a design folder next to it).

Usage: ``python scripts/links.py [ROOT]`` (default: the repository this file is in). Prints one
``file:line: problem`` per problem and exits 1 if there is any. The tree is what ``git`` tracks
plus new files not ignored, so a reference to a file that exists only on this machine still
fails.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

_MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_PATH = re.compile(r"(?<![\w./~:-])((?:\.{1,2}/)?[\w.-]+(?:/[\w.<>*{}$-]+)+/?)")
_DOCUMENT = re.compile(r"(?<![\w./-])([\w-]+(?:\.[\w-]+)*\.md)\b")
_ADR = re.compile(r"\bADRs? (\d{4})\b")
_MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|Users|opt|srv|mnt)/[\w.-]")
_OUTSIDE = re.compile(r"\.\./shared\b|\bshared/(?:design|seeds)\b")
_PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.")
_EXTERNAL = ("http://", "https://", "mailto:", "#")


def tracked_files(root: Path) -> list[PurePosixPath]:
    """The repository's files: tracked, plus new ones that are not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],  # noqa: S607 -- git from PATH, as the rest of the tooling
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(
        PurePosixPath(name) for name in listed.split("\0") if name and (root / name).exists()
    )


def prose_of_python(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` for each comment and docstring of a Python module."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                start = body[0].lineno
                for offset, line in enumerate(body[0].value.value.splitlines()):
                    yield start + offset, line
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


class Checker:
    """The references of one repository, checked against its tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = tracked_files(root)
        self.top = {path.parts[0] for path in self.files}
        self.names = {path.name for path in self.files}
        self.adrs = {path.name[:4] for path in self.files if path.parts[0] == "adr"}

    def problems(self) -> Iterator[str]:
        """Every broken reference, as ``file:line: problem``."""
        for path in self.files:
            if path.suffix == ".md":
                text = (self.root / path).read_text(encoding="utf-8")
                lines: Iterator[tuple[int, str]] = enumerate(text.splitlines(), start=1)
                for number, line in lines:
                    for problem in self._line(path, line, markdown=True):
                        yield f"{path}:{number}: {problem}"
            elif path.suffix == ".py":
                source = (self.root / path).read_text(encoding="utf-8")
                for number, line in prose_of_python(source):
                    for problem in self._line(path, line, markdown=False):
                        yield f"{path}:{number}: {problem}"

    def _line(self, path: PurePosixPath, line: str, *, markdown: bool) -> Iterator[str]:
        yield from self._places(line)
        rest = line
        if markdown:
            yield from self._links(path, line)
            rest = _MARKDOWN_LINK.sub(" ", line)
        yield from self._paths(path, rest)
        for name in _DOCUMENT.findall(rest):
            if name not in self.names:
                yield f"{name!r} is not a document in the repository"

    def _places(self, line: str) -> Iterator[str]:
        if _MACHINE_PATH.search(line):
            yield f"an absolute path of a machine: {line.strip()!r}; name a path in the repository"
        if _OUTSIDE.search(line):
            yield f"points outside the repository: {line.strip()!r}"
        for number in _ADR.findall(line):
            if number not in self.adrs:
                yield f"ADR {number} does not exist (no adr/{number}-*.md)"

    def _links(self, path: PurePosixPath, line: str) -> Iterator[str]:
        for target in _MARKDOWN_LINK.findall(line):
            if not target.startswith(_EXTERNAL) and not self._exists(path, target, relative=True):
                yield f"link to {target!r}, which does not exist"

    def _paths(self, path: PurePosixPath, text: str) -> Iterator[str]:
        for token in _PATH.findall(text):
            candidate = token.rstrip(".,;:)")
            if _PLACEHOLDER.search(candidate) or "://" in candidate or _OUTSIDE.search(candidate):
                continue
            relative = candidate.startswith(("./", "../"))
            first = candidate.removeprefix("./").split("/")[0]
            if first.startswith(".") and first not in self.top and first != "..":
                continue  # made by the tooling and ignored by git (.venv, .tools)
            if (relative or first in self.top) and not self._exists(
                path, candidate, relative=relative
            ):
                yield f"{candidate!r} does not exist"

    def _exists(self, path: PurePosixPath, target: str, *, relative: bool) -> bool:
        target = target.split("#", maxsplit=1)[0]
        if not target:
            return True
        if relative or target.split("/")[0] not in self.top:
            return (self.root / path.parent / target).exists()
        return (self.root / target).exists()


def main(argv: list[str]) -> int:
    """Check the repository at ``argv[0]`` (default: this one); the exit status."""
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    checker = Checker(root)
    problems = list(checker.problems())
    for problem in problems:
        print(problem)
    if problems:
        print(f"links: {len(problems)} broken reference(s)", file=sys.stderr)
        return 1
    print(f"links: every reference in {len(checker.files)} files resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
