"""The ElementVisibility protocol and the session it is asked about."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, final

from mcp_core.elements import ElementRef

__all__ = ["ElementVisibility", "SessionInfo"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """Who is asking: built by the server from the transport for each session.

    ``principal``, ``client_id``, ``claims`` and ``scopes`` are filled when the transport
    authenticated the client (e.g. bearer tokens over HTTP); ``attributes`` are free values an
    application attaches.
    """

    session_id: str | None = None
    principal: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    attributes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if isinstance(self.scopes, str):
            raise TypeError("SessionInfo.scopes must be a set of strings, not one string")
        object.__setattr__(self, "scopes", frozenset(self.scopes))
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))
        object.__setattr__(self, "attributes", MappingProxyType(dict(self.attributes)))

    def __hash__(self) -> int:
        return hash((self.session_id, self.principal, self.client_id, self.scopes))


class ElementVisibility(Protocol):
    """Decides, per session, whether an element exists for that session.

    The server applies it to list results *and* to call/read/get/complete, so the registry stays
    a process-level catalogue while filtering is per session.

    Laws:
        1. ``server.visibility-agrees``: an element hidden from a session's lists is not callable,
           readable or gettable by that session, and answers exactly like a missing one.
    """

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        """Whether ``session`` may see the element at ``ref``."""
        ...
