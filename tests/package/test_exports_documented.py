"""Each package's ``__init__`` is its user API: every exported name is a documented one.

Adding a name to a package's ``__all__`` is an API decision; the name must then appear in what a
user reads (``README.md``, ``docs/``, ``examples/``). Plumbing that layers share is imported from
the private module that defines it, never re-exported (ADR 0092). The count of public names is
held too, so that growth is a visible decision.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Final

import pytest

import mcp_core

ROOT: Final = Path(__file__).resolve().parents[2]

PUBLIC_MODULES: Final = (
    "mcp_core",
    "mcp_core.errors",
    "mcp_core.handlers.containers",
    "mcp_core.handlers.testing",
    *(f"mcp_core.{m.name}" for m in pkgutil.iter_modules(mcp_core.__path__) if m.ispkg),
)
"""The modules whose ``__all__`` is public API: the root, every subpackage, the public modules."""

MAX_EXPORTS: Final = 255  # 241, mcp_core.search's five, the operators' eight (ADR 0099-0101),
# WorkerStatus (ADR 0111)
"""How many names all ``__all__`` lists hold together (the root's repeat its layers' names)."""


def _documentation() -> str:
    paths = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "examples").rglob("*.py")),
        *sorted((ROOT / "examples").rglob("*.md")),
    ]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


def _exports() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        exported: list[str] = list(getattr(module, "__all__", []))
        found.extend((name, export) for export in exported if not export.startswith("__"))
    return found


_DOCS: Final = _documentation()


@pytest.mark.parametrize(("module", "name"), _exports(), ids=lambda x: x)
def test_every_export_is_documented(module: str, name: str) -> None:
    """The name appears, as a whole word, in the README, docs/ or examples/."""
    assert re.search(rf"(?<!\w){re.escape(name)}(?!\w)", _DOCS), (
        f"{module}.{name} is exported but mentioned nowhere in README.md, docs/ or examples/: "
        "document it, or import it from its private module and drop it from __all__"
    )


def test_the_public_surface_does_not_grow_unnoticed() -> None:
    """The total stays under the recorded bound; raise MAX_EXPORTS only as an API decision."""
    assert len(_exports()) <= MAX_EXPORTS


def test_every_export_resolves() -> None:
    """Each name of every ``__all__`` is an attribute of its module."""
    missing = [
        f"{module}.{name}"
        for module, name in _exports()
        if not hasattr(importlib.import_module(module), name)
    ]
    assert not missing


def _private_imports(path: Path) -> list[str]:
    """The ``mcp_core`` modules ``path`` imports that have a private component."""
    import ast

    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level == 0
            else [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        found.extend(
            name
            for name in names
            if name.split(".")[0] == "mcp_core"
            and any(part.startswith("_") for part in name.split(".")[1:])
        )
    return found


def test_scripts_and_examples_import_public_faces_only() -> None:
    """Files outside mcp_core that are not packages (scripts/, examples/) keep off private modules.

    The kit and the benchmark are packages: the import-linter contract in pyproject.toml holds
    them to the same rule.
    """
    files = [*sorted((ROOT / "scripts").glob("*.py")), *sorted((ROOT / "examples").rglob("*.py"))]
    offending = {
        str(path.relative_to(ROOT)): found for path in files if (found := _private_imports(path))
    }
    assert not offending, f"private mcp_core modules imported outside the package: {offending}"


def test_the_contract_lists_every_private_module() -> None:
    """The forbidden list of the kit's contract covers every private module that exists."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "forbidden" and "mcp_conformance" in c["source_modules"]
    ]
    listed = set(contract["forbidden_modules"])
    package = ROOT / "mcp_core"
    for path in package.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        private = [p for p in parts[1:] if p.startswith("_") and not p.startswith("__")]
        if parts[-1] == "__init__" or not private:
            continue
        module = ".".join(parts)
        parent = ".".join(parts[:2]) + ".*"
        assert module in listed or (len(parts) == 3 and parent in listed), (
            f"{module} is private but not in the kit's forbidden_modules"
        )
