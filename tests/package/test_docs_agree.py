"""The documents agree with each other and with the code where they state the same fact.

- how many registry roles there are: the kit's own list of roles is the count;
- how long the benchmark takes: the README, ``bench/README.md`` and ``docs/benchmarks.md`` give
  one figure;
- how long ``scripts/check`` takes: the README gives it, as minutes on 2 cores.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcp_conformance._contract import ROLE_NAMES

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
ROLE_COUNT = re.compile(
    rf"\b({'|'.join(NUMBERS)})\b (?:registry )?role(?:s| protocols)\b", re.IGNORECASE
)


def documents() -> list[Path]:
    """The prose a reader meets: README, docs, the kit's README, the registry's docstrings."""
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "conformance" / "README.md",
        *sorted((ROOT / "mcp_core" / "registry").glob("*.py")),
    ]


def test_every_document_counts_the_kits_roles() -> None:
    """Each "N roles" / "N role protocols" says as many as the kit probes."""
    stated = {
        f"{path.relative_to(ROOT)}: {found.group(0)}": NUMBERS[found.group(1).lower()]
        for path in documents()
        for found in ROLE_COUNT.finditer(path.read_text(encoding="utf-8"))
    }
    assert stated, "no document states how many registry roles there are"
    wrong = [where for where, count in stated.items() if count != len(ROLE_NAMES)]
    assert not wrong, f"the kit has {len(ROLE_NAMES)} roles; these say otherwise: {wrong}"


def minutes(path: Path, command: str) -> set[str]:
    """The time figures (``about 15 min``, ``~15 min``) on the lines that run ``command``."""
    return {
        found.group(1)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.rstrip().split("#")[0].rstrip().endswith(command) and "#" in line
        for found in [re.search(r"#.*?(?:about |~)(\d+(?:(?:-|\u2013)\d+)?) min", line)]
        if found is not None
    }


def test_the_benchmark_takes_one_time_everywhere() -> None:
    """The full benchmark's duration, as the three documents that run it state it."""
    stated = {
        name: minutes(ROOT / name, "bench/run.py")
        for name in ("README.md", "bench/README.md", "docs/benchmarks.md")
    }
    assert all(len(figures) == 1 for figures in stated.values()), stated
    assert len({figure for figures in stated.values() for figure in figures}) == 1, stated


def test_the_readme_says_how_long_the_check_takes() -> None:
    """`bash scripts/check` comes with its expected duration on 2 cores."""
    assert minutes(ROOT / "README.md", "bash scripts/check") != set()
