"""The state of one certification run, shared by the plugin and the checks.

No hypothesis here: the plugin imports this in every pytest run, and must stay cheap when the kit
is not used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, final

import pytest

from mcp_conformance._profiles import Profile
from mcp_conformance._target import Target

if TYPE_CHECKING:
    from mcp_conformance._contract import Role, RoleStatus

__all__ = ["CHECK_FACTS", "LAW_MARK", "SESSION", "CheckFacts", "KitSession", "NotApplicableWhy"]

LAW_MARK: Final = "mcp_law"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class KitSession:
    """One certification run: what is certified, how hard, and where the JSON report goes."""

    target: Target
    profile: Profile
    report_path: Path | None
    # The seed every check draws its examples from: the same seed, target and profile replay
    # the same run.
    seed: int | None = 0
    """None: derandomized (``--mcp-conformance-seed=derandomized``)."""
    # Where progress lines go while a check runs (the terminal), or None for silence.
    progress: Callable[[str], None] | None = None
    # A registry target's roles, probed once when the run starts (empty for other kinds).
    roles: Mapping[Role, RoleStatus] = field(default_factory=dict)
    # The optional protocols the target's object has (ResourceCandidates, ElementLookup): a
    # certificate covers them too, since their laws then apply.
    optional: tuple[str, ...] = ()


SESSION: Final = pytest.StashKey[KitSession]()


NotApplicableWhy: TypeAlias = Literal["declared", "live-handlers", "absent", "inapplicable"]
"""Why a law is N/A: the target's Capabilities withdraw it (``declared``); the source provides
live handlers, so serialization does not apply to it (``live-handlers``); the registry lacks the
role (``absent``); or the law's condition never held for what the target provided
(``inapplicable``). Only the first two leave a run certified."""


@final
@dataclass(slots=True)
class CheckFacts:
    """Per-check facts the report needs beyond pass/fail/skip."""

    why: NotApplicableWhy = "inapplicable"
    examples: int = 0


CHECK_FACTS: Final = pytest.StashKey[CheckFacts]()
