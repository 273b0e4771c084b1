"""Before a run: what the target plays, and whether there is anything to certify at all.

A target that implements no role the kit can check would otherwise come out "certified" with
every law N/A; it is refused instead, with what was looked for.
"""

from __future__ import annotations

import anyio

from mcp_conformance._contract import ROLE_NAMES, Role, RoleStatus, probe_roles
from mcp_conformance._target import Target
from mcp_conformance.faults import MutableSource

__all__ = ["refusal"]


def refusal(target: Target) -> tuple[dict[Role, RoleStatus], str]:
    """The target's roles (registries only) and why it is refused ("" when it is not)."""
    made: list[object] = []

    async def make() -> None:
        # On a running loop: a factory may create loop-bound state.
        if target.kind == "registry":
            made.append(target.factory([]))
        elif target.kind == "source":
            made.append(target.factory())
        elif target.kind == "wrapper":
            made.append(target.factory(MutableSource()))
        else:
            from mcp_core.visibility import ALWAYS  # noqa: PLC0415 -- only servers need it

            made.append(target.factory([], visibility=ALWAYS, page_size=2))

    anyio.run(make)
    [obj] = made
    if target.kind == "registry":
        return _registry(obj, target)
    if target.kind == "server":
        return {}, _server(obj)
    missing = [name for name in ("provide", "kinds") if not callable(getattr(obj, name, None))]
    if len(missing) == 2:  # noqa: PLR2004 -- both methods of ElementSource
        return {}, (
            f"the factory returned {type(obj).__qualname__}, which has neither provide() nor "
            "kinds(): it is no ElementSource"
        )
    return {}, ""


def _registry(obj: object, target: Target) -> tuple[dict[Role, RoleStatus], str]:
    roles = probe_roles(obj, target.capabilities)
    found = ", ".join(ROLE_NAMES[role] for role, status in roles.items() if status.present)
    if not (roles["catalog"].present or roles["resolver"].present):
        return roles, (
            f"{type(obj).__qualname__} plays neither {ROLE_NAMES['catalog']} nor "
            f"{ROLE_NAMES['resolver']} (found: {found or 'no role'}); a registry is read through "
            "at least one of them, and a certificate of nothing certifies nothing"
        )
    if not target.capabilities.composes_sources and not roles["writer"].present:
        return roles, (
            "it composes no sources (composes_sources=False) and has no ElementWriter, so the "
            "kit cannot put a single element into it"
        )
    return roles, ""


def _server(obj: object) -> str:
    from mcp.server.lowlevel.server import Server  # noqa: PLC0415 -- only servers need the SDK

    lowlevel = getattr(obj, "lowlevel", None)
    if not isinstance(lowlevel, Server):
        return (
            f"the factory returned {type(obj).__qualname__}, whose .lowlevel is "
            f"{type(lowlevel).__name__}, not the SDK's low-level mcp.server.lowlevel.Server "
            "that the kit connects its in-memory clients to"
        )
    return ""
