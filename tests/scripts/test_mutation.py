"""scripts/mutation.py: scores say whether they come from a sample, and the ledger is consistent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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
