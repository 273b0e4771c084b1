"""Before a run: what the target plays, and whether there is anything to certify at all.

A target that implements no role the kit can check would otherwise come out "certified" with
every law N/A; it is refused instead, with what was looked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

import anyio

from mcp_conformance._contract import ROLE_NAMES, Role, RoleStatus, probe_roles
from mcp_conformance._target import Target
from mcp_conformance.faults import MutableSource

__all__ = ["OPTIONAL", "Probed", "refusal"]

OPTIONAL: Final[dict[str, str]] = {
    # method: the optional protocol it stands for (a certificate covers it when present)
    "resource_candidates": "ResourceCandidates",
    "lookup": "ElementLookup",
    "handler_targets": "HandlerTargets",
    "entries": "ListingStore",
    "take_down": "outages the kit rehearses (take_down/bring_back)",
}
_OPTIONAL_FOR: Final[dict[str, frozenset[str]]] = {
    # method: the kinds of target it is an optional protocol of
    "resource_candidates": frozenset({"registry", "source", "wrapper"}),
    "lookup": frozenset({"registry", "source", "wrapper"}),
    "handler_targets": frozenset({"source"}),
    "entries": frozenset({"cache-store"}),
    "take_down": frozenset({"change-bus"}),
}
_DUCK_TYPED: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    # kind: (the methods a target of that kind must have, what it then is)
    "visibility": (("is_visible",), "an ElementVisibility"),
    "event-store": (("store_event", "replay_events_after", "end_session"), "a SessionEventStore"),
    "cache-store": (("get", "set", "delete", "delete_prefix"), "a CacheStore"),
    "change-bus": (("publish", "subscribe", "health"), "a ChangeBus"),
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Probed:
    """What one object of the target showed: its roles (registries), optional protocols, refusal."""

    roles: dict[Role, RoleStatus] = field(default_factory=dict)
    optional: tuple[str, ...] = ()
    refused: str = ""


def refusal(target: Target) -> Probed:
    """The target's roles and optional protocols, and why it is refused ("" when it is not)."""
    made: list[object] = []

    async def make() -> None:
        # On a running loop: a factory may create loop-bound state.
        made.append(_make(target))

    anyio.run(make)
    [obj] = made
    optional = tuple(
        name
        for method, name in OPTIONAL.items()
        if target.kind in _OPTIONAL_FOR[method] and callable(getattr(obj, method, None))
    )
    if target.kind == "registry":
        roles, refused = _registry(obj, target)
        return Probed(roles=roles, optional=optional, refused=refused)
    if target.kind == "server":
        return Probed(refused=_server(obj))
    if target.kind in _DUCK_TYPED:
        return Probed(optional=optional, refused=_missing(obj, *_DUCK_TYPED[target.kind]))
    missing = [name for name in ("provide", "kinds") if not callable(getattr(obj, name, None))]
    if len(missing) == 2:  # noqa: PLR2004 -- both methods of ElementSource
        return Probed(
            refused=f"the factory returned {type(obj).__qualname__}, which has neither provide() "
            "nor kinds(): it is no ElementSource"
        )
    return Probed(optional=optional)


def _make(target: Target) -> object:
    """One object from the factory, called as a check would call it."""
    from mcp_conformance._events import GENEROUS, KitClock  # noqa: PLC0415 -- keeps the plugin's import cheap
    from mcp_conformance._rules import Part  # noqa: PLC0415 -- same
    from mcp_core.visibility import ALWAYS  # noqa: PLC0415 -- same

    calls: dict[str, Callable[[], object]] = {
        "registry": lambda: target.factory([]),
        "source": target.factory,
        "wrapper": lambda: target.factory(MutableSource()),
        "visibility": lambda: target.factory([Part(), Part()]),
        "event-store": lambda: target.factory(**GENEROUS.keywords(KitClock())),
        "cache-store": lambda: target.factory(clock=KitClock()),
        "change-bus": target.factory,
        "server": lambda: target.factory([], visibility=ALWAYS, page_size=2),
    }
    return calls[target.kind]()


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


def _missing(obj: object, methods: tuple[str, ...], what: str) -> str:
    absent = [f"{name}()" for name in methods if not callable(getattr(obj, name, None))]
    if not absent:
        return ""
    return (
        f"the factory returned {type(obj).__qualname__}, which has no {', '.join(absent)}: "
        f"it is not {what}"
    )
