"""``mcp_core`` never draws from the ``random`` module's shared stream.

That stream belongs to the application (and to test frameworks, which seed it and notice when
something else draws from it). A retry's jitter drawn from it in a background task perturbed a
seeded sequence elsewhere: hypothesis reported the tests running beside it as flaky. Each
module that needs randomness for spreading owns a ``random.Random()``; secrets come from
``secrets``. This test holds every module of the package to that, so the next use of the shared
stream is caught where it is written rather than as a flake.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parents[2] / "mcp_core"
OWN_GENERATORS: Final = frozenset({"Random", "SystemRandom"})
"""What a module may take from ``random``: a generator of its own."""
SHARED: Final = (
    frozenset(
        name for name in dir(random) if not name.startswith("_") and callable(getattr(random, name))
    )
    - OWN_GENERATORS
)


def _uses_of_the_shared_stream(path: Path, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules = {"random"}  # import random (as ...)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {
                alias.asname or alias.name for alias in node.names if alias.name == "random"
            }
        elif isinstance(node, ast.ImportFrom) and node.module == "random":
            found += [
                f"{path.relative_to(root)}:{node.lineno}: from random import {alias.name}"
                for alias in node.names
                if alias.name in SHARED
            ]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr in SHARED
        ):
            found.append(f"{path.relative_to(root)}:{node.lineno}: random.{node.attr}")
    return found


def test_no_module_draws_from_the_shared_random_stream() -> None:
    """Every ``random.<function>`` use in the package is a generator of the module's own."""
    found = [
        use for path in sorted(PACKAGE.rglob("*.py")) for use in _uses_of_the_shared_stream(path)
    ]
    assert found == [], (
        "these draw from the application's random stream; give the module a "
        f"random.Random() of its own (or use secrets): {found}"
    )


def test_the_check_sees_a_shared_draw(tmp_path: Path) -> None:
    """The check finds each spelling of a shared draw, and lets a module's own generator be."""
    module = tmp_path / "mcp_core_like.py"
    module.write_text(
        "import random\nimport random as r\nfrom random import uniform\n"
        "OWN = random.Random()\nx = random.random() + r.choice([1]) + OWN.random()\n",
        encoding="utf-8",
    )
    found = _uses_of_the_shared_stream(module, tmp_path)
    assert [use.split(": ", 1)[1] for use in found] == [
        "from random import uniform",
        "random.random",
        "random.choice",
    ]
