"""scripts/mutation.py: scores say whether they come from a sample, and the ledger is consistent."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mutation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "scripts" / "mutation.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


mutation = _mutation()


def test_a_sampled_score_says_so() -> None:
    """A sample's row names its size, seed and the mutants in scope; a full run's says all."""
    sampled = mutation.Score(
        "registry", 664, 275, 1, 8, (), 10, {"size": 10, "seed": 3, "in_scope": 389}
    )
    full = mutation.Score("event-store", 422, 215, 59, 148, (), 207)
    table = mutation.table([sampled, full])
    assert "| registry | 664 | 275 | 10 sampled (seed 3) of 389 | 1 | 8 of 9 | 88.9% |" in table
    assert "| event-store | 422 | 215 | all 207 | 59 | 148 of 148 | 100.0% |" in table


def test_every_wrapper_component_certifies_only_its_own_class() -> None:
    """The three components over _wrappers.py leave the other two wrappers out of scope."""
    wrappers = {
        "isolated-source": "Isolated",
        "filtered-source": "Filtered",
        "prefixed-source": "Prefixed",
    }
    for component, own in wrappers.items():
        outside = mutation.COMPONENTS[component].outside
        for other in set(wrappers.values()) - {own}:
            assert f"{other}Source" in outside
        assert f"{own}Source" not in outside


def _fake_mutants(count: int) -> list[object]:
    return [
        mutation.Mutant(
            "memory-store", "mcp_core/stores/_memory.py", "core/AddNot", n, n, "f", f"x{n}", 0
        )
        for n in range(count)
    ]


def _interrupted_run(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    *,
    stop_after: int,
    sample: int | None,
    resume: bool = False,
) -> dict[str, object]:
    """A run of 12 fake mutants of memory-store, cut off after ``stop_after`` of them."""
    monkeypatch.setattr(mutation, "RESULTS", tmp_path)
    monkeypatch.setattr(mutation, "mutants", lambda _component: _fake_mutants(12))
    monkeypatch.setattr(mutation, "_certify", lambda *_args: (0, ""))
    ran: list[object] = []

    def run_free(_free: object, _killers: object, mutant: object) -> dict[str, object]:
        if len(ran) == stop_after:
            raise KeyboardInterrupt
        ran.append(mutant)
        row: dict[str, object] = mutation._row(mutant, "killed", "", "")
        return row

    monkeypatch.setattr(mutation, "_run_free", run_free)
    with contextlib.suppress(KeyboardInterrupt):
        mutation.run(["memory-store"], 1, sample=sample, sample_seed=5, resume=resume)
    loaded: dict[str, object] = json.loads((tmp_path / "memory-store.json").read_text())
    return loaded


def test_an_interrupted_run_keeps_a_sample_of_what_it_certified(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Results are written after each mutant; a run cut short is a sample, and says so."""
    results = _interrupted_run(monkeypatch, tmp_path, stop_after=4, sample=None)
    assert results["sample"] == {"size": 4, "seed": 5, "in_scope": 12}
    cut = [row["key"] for row in results["mutants"]]  # type: ignore[attr-defined]
    assert len(cut) == 4
    # The order is shuffled with the seed, and a sample is its prefix: `--sample 4` runs the
    # same four mutants the interrupted run did.
    sampled = _interrupted_run(monkeypatch, tmp_path, stop_after=99, sample=4)
    assert [row["key"] for row in sampled["mutants"]] == cut  # type: ignore[attr-defined]
    assert cut != [m.key for m in _fake_mutants(12)[:4]]  # type: ignore[attr-defined]
    whole = _interrupted_run(monkeypatch, tmp_path, stop_after=99, sample=None)
    assert whole["sample"] is None
    assert len(whole["mutants"]) == 12  # type: ignore[arg-type]


def test_a_resumed_run_goes_on_where_the_stopped_one_ended(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--resume`` certifies only what the stopped run had not reached, in the same order."""
    monkeypatch.setattr(mutation, "_fingerprint", lambda _component: "same code")
    first = _interrupted_run(monkeypatch, tmp_path, stop_after=5, sample=None)
    assert first["sample"] == {"size": 5, "seed": 5, "in_scope": 12}
    resumed = _interrupted_run(monkeypatch, tmp_path, stop_after=4, sample=None, resume=True)
    assert resumed["sample"] == {"size": 9, "seed": 5, "in_scope": 12}
    whole = _interrupted_run(monkeypatch, tmp_path, stop_after=99, sample=None, resume=True)
    assert whole["sample"] is None
    keys = [row["key"] for row in whole["mutants"]]  # type: ignore[attr-defined]
    assert len(keys) == len(set(keys)) == 12
    straight = _interrupted_run(monkeypatch, tmp_path, stop_after=99, sample=None)
    assert keys == [row["key"] for row in straight["mutants"]]  # type: ignore[attr-defined]
    _interrupted_run(monkeypatch, tmp_path, stop_after=3, sample=None)
    with pytest.raises(mutation.UsageError, match="--sample-seed 5"):
        mutation.run(["memory-store"], 1, sample_seed=6, resume=True)


def test_the_likeliest_killers_run_first() -> None:
    """Laws that killed a mutant of the same definition first, then by kills in all."""
    killers = mutation._Killers()
    assert killers.order("f") == []
    killers.record("g", "test_a")
    killers.record("g", "test_a")
    killers.record("f", "test_b")
    assert killers.order("f") == ["test_b", "test_a"]
    assert killers.order("g") == ["test_a", "test_b"]
    assert killers.order("h") == ["test_a", "test_b"]
    output = "x\nFAILED conformance/x.py::test_registry_model - AssertionError: no\n"
    assert mutation._killer(output) == "test_registry_model"
    assert mutation._killer("1 passed") is None
