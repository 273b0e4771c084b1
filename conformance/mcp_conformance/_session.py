"""The state of one certification run, shared by the plugin and the checks.

No hypothesis here: the plugin imports this in every pytest run, and must stay cheap when the kit
is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias, final

import pytest

from mcp_conformance._profiles import Profile
from mcp_conformance._target import Target

__all__ = ["CHECK_FACTS", "LAW_MARK", "SESSION", "CheckFacts", "KitSession", "NotApplicableWhy"]

LAW_MARK: Final = "mcp_law"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class KitSession:
    """One certification run: what is certified, how hard, and where the JSON report goes."""

    target: Target
    profile: Profile
    report_path: Path | None


SESSION: Final = pytest.StashKey[KitSession]()


NotApplicableWhy: TypeAlias = Literal["declared", "absent", "inapplicable", "unsupported"]
"""Why a law is N/A: the target's Capabilities withdraw it (``declared``); the registry lacks the
role (``absent``); the law's condition never held for what the target provided
(``inapplicable``); or the kit cannot check it yet (``unsupported``)."""


@final
@dataclass(slots=True)
class CheckFacts:
    """Per-check facts the report needs beyond pass/fail/skip."""

    why: NotApplicableWhy = "inapplicable"
    examples: int = 0


CHECK_FACTS: Final = pytest.StashKey[CheckFacts]()
