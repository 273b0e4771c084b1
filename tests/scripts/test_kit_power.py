"""scripts/kit_power.py: each broken implementation of the kit's suite, certified on fresh seeds."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_conformance import LAWS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kit_power() -> ModuleType:
    """The script, imported as a module."""
    spec = importlib.util.spec_from_file_location("kit_power", ROOT / "scripts" / "kit_power.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_case_runs_an_existing_check(kit_power: ModuleType) -> None:
    """The suite's cases are read, and each broken law names a check the kit collects."""
    cases = kit_power._cases()
    assert len(cases) > 50
    checks = {
        path.stem: path.read_text(encoding="utf-8")
        for path in (ROOT / "conformance" / "mcp_conformance" / "_checks").glob("*_laws.py")
    }
    known = {entry.id for entry in LAWS}
    for case in cases:
        assert case.breaks in known, case
        name = kit_power._test_name(case.breaks)
        assert any(f"def {name}(" in text for text in checks.values()), name


def test_a_case_is_measured_and_its_misses_fail_the_run(
    kit_power: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One seed of a case the kit always catches: 1/1, exit 0; demanding more than all: exit 1."""
    out = tmp_path / "power.json"
    code = kit_power.main(["--seeds", "1", "--jobs", "1", "--json", str(out), "source_idempotent"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "source.idempotent" in printed
    assert "1/1" in printed
    (row,) = json.loads(out.read_text(encoding="utf-8"))
    assert (row["case"], row["law"], len(row["caught"]), row["missed"]) == (
        "source_idempotent",
        "source.idempotent",
        1,
        [],
    )
    assert kit_power.main(["--seeds", "1", "--at-least", "1.5", "source_idempotent"]) == 1


def test_an_unknown_case_is_refused(kit_power: ModuleType) -> None:
    """A module name that is no case stops with a usage error naming where the cases live."""
    with pytest.raises(SystemExit) as stopped:
        kit_power.main(["no_such_broken_module"])
    assert stopped.value.code == 2
