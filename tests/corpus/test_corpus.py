"""Real third-party servers: served natively and through mcp-core, the answers compared.

Each cell is one server of tests/corpus/servers.toml, one flavor of serving it, and one client
era (the official client by default, which negotiates 2026-07-28 where the server speaks it, and
``mode="legacy"``). Its transcript (every list, then the requests of the server's ``ask``
entries) must equal the same client's transcript of the server served natively, once the
differences documented in docs/adopt.md are taken out — and those, exactly, are all that differ
across the corpus.

The servers are installed from PyPI by ``scripts/corpus.py install`` (``scripts/install
--with-services``, so CI has them); without them these tests are skipped, except in CI, where a
missing server fails.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

from mcp_core.cli._target import load_target
from mcp_core.errors import TargetError
from tests.clients import ROOT
from tests.corpus._corpus import (
    RULES,
    SERVERS,
    Place,
    adopted,
    bounded,
    documented,
    make_place,
    native,
    normalised,
    proxied,
    reconciled,
    require,
    transcript,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

ERAS = {"2026-07-28": "auto", "2025-11-25": "legacy"}
"""The client's era, and the official client's mode that gives it (where the server speaks it)."""

Flavor = Callable[[str, Place], StdioServerParameters]
FLAVORS: dict[str, Flavor] = {
    "remote-auto": lambda name, place: proxied(name, place, "auto"),
    "remote-legacy": lambda name, place: proxied(name, place, "legacy"),
    "adopted": lambda name, place: adopted(name, place, "adopted"),
    "as-is": lambda name, place: adopted(name, place, "as-is"),
}
"""How mcp-core serves a corpus server, besides natively.

``adopted`` and ``as-is`` serve the server's own object in mcp-core's process, so only servers
built on the SDK and fastmcp versions mcp-core runs have them (an ``adopt`` entry).
"""


def _cli_serves(spec: str) -> bool:
    """Whether ``mcp-core run`` takes the target ``spec`` (asked of the CLI's own loader)."""
    try:
        load_target(spec)
    except TargetError:
        return False
    return True


PENDING: dict[tuple[str, str], str] = {}
"""Cells that fail until the work named is done: strict xfails (an xfail that passes fails)."""
if not _cli_serves(str(ROOT / "tests" / "corpus" / "fastmcp_probe.py")):
    PENDING["sample", "as-is"] = "mcp-core run does not serve a fastmcp object (issue 21, item 4)"


def cells() -> list[Any]:
    """Every server x flavor x era that applies, the pending ones marked."""
    found: list[Any] = []
    for name, entry in SERVERS.items():
        for flavor in FLAVORS:
            if flavor in ("adopted", "as-is") and "adopt" not in entry:
                continue
            marks = []
            if (name, flavor) in PENDING:
                marks.append(pytest.mark.xfail(strict=True, reason=PENDING[name, flavor]))
            found.extend(
                pytest.param(name, flavor, era, marks=marks, id=f"{name}-{flavor}-{era}")
                for era in ERAS
            )
    return found


DIFFERENCES = ROOT / "docs" / "adopt.md"
_NATIVE: dict[tuple[str, str], list[Any]] = {}


async def _run(target: StdioServerParameters, era: str, name: str, place: Place) -> list[Any]:
    async with bounded(120):
        answers: list[Any] = normalised(await transcript(target, ERAS[era], name, place), place)
    return answers


@pytest.mark.parametrize(("name", "flavor", "era"), cells())
async def test_same_answers_as_native(
    name: str, flavor: str, era: str, tmp_path: Path, page: str
) -> None:
    """Every answer equals the native one, but for the documented differences."""
    require(name)
    if (name, era) not in _NATIVE:  # one native run serves every flavor in this process
        here = make_place(tmp_path / "native", page)
        _NATIVE[name, era] = await _run(native(name, here), era, name, here)
    mine = _NATIVE[name, era]
    other_place = make_place(tmp_path / flavor, page)
    theirs = await _run(FLAVORS[flavor](name, other_place), era, name, other_place)
    left, right, used = reconciled(mine, theirs)
    unknown = used - set(documented(DIFFERENCES))
    assert not unknown, f"differences used but not documented in docs/adopt.md: {unknown}"
    for (label, expected), (_, got) in zip(left, right, strict=True):
        assert got == expected, f"{name} {flavor} {era}: {label} differs from native"


def test_the_documented_differences_are_exactly_the_rules() -> None:
    """docs/adopt.md lists each difference the comparison takes out, and nothing else."""
    rows = documented(DIFFERENCES)
    assert set(rows) == set(RULES)
    assert all(rows.values())
