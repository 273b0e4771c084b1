"""What a registry law needs of the target, and ending a check N/A (or FAIL) when it lacks it.

For check modules about registries (``_checks/registry_*_laws.py``)::

    @checks("registry.my-law")
    def test_registry_my_law(kit: Kit) -> None:
        roles = require(kit, Needs(roles=("catalog", "resolver")))
        ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from mcp_conformance._contract import ROLE_NAMES, LawViolation, Role, RoleStatus
from mcp_conformance._kit import Kit

__all__ = ["Needs", "require"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Needs:
    """What a law needs: roles, a registry built over sources, a way to change the catalogue."""

    roles: tuple[Role, ...] = ()
    sources: bool = False  # only meaningful for a registry built over sources
    changes: bool = False  # something must be able to change the catalogue (writer or reload)


def require(kit: Kit, needs: Needs) -> dict[Role, RoleStatus]:
    """The target's roles, after ending the check as N/A (or FAIL) if it cannot apply."""
    capabilities = kit.capabilities
    roles = dict(kit.session.roles)
    for role in needs.roles:
        status = roles[role]
        if status.claimed_but_missing:
            raise LawViolation(f"the target claims {ROLE_NAMES[role]}, but {status.reason}")
        if not status.present:
            kit.not_applicable(status.reason, why="declared" if status.declared else "absent")
    if needs.sources and not capabilities.composes_sources:
        kit.not_applicable(
            f"needs a registry built over sources; not claimed (composes_sources=False): "
            f"{capabilities.reason}",
            why="declared",
        )
    if needs.changes and not (roles["writer"].present or roles["deferred"].present):
        kit.not_applicable(
            "nothing can change its catalogue: it has neither an ElementWriter nor reload()",
            why="absent",
        )
    return roles
