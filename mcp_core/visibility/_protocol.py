"""The ElementVisibility protocol and the session it is asked about."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, final, runtime_checkable

from mcp_core.elements import ElementRef

__all__ = ["ALWAYS", "NEVER", "ElementVisibility", "SessionInfo", "UriVisibility", "visible_at"]


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

    A rule that should also decide on the concrete URI a resource template is read at (user 2
    may read ``node://2`` but not ``node://1``) implements :class:`UriVisibility` as well.

    Laws:
        1. ``server.visibility-agrees``: an element hidden from a session's lists is not callable,
           readable or gettable by that session, and answers exactly like a missing one;
           resolution (reads, subscriptions, completion) considers only what the session may
           see, so a request that a hidden element would have answered is answered by the next
           visible candidate, byte for byte as by a server without it.
        2. ``visibility.parts``: a rule composed of others (``all_of``, ``any_of``, ``not_``)
           lists an element exactly as a fixed boolean function of its parts' list decisions,
           asked about the same ref and session (``all``, ``any``, the negation of its part).
    """

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        """Whether ``session`` may see the element at ``ref``."""
        ...


# The constant rules live beside the protocol: the server's default is ALWAYS, and a start that
# composes no rule imports no combinator (ADR 0112).
@final
@dataclass(frozen=True, slots=True)
class _Constant:
    visible: bool

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:  # noqa: ARG002 -- the protocol's signature
        return self.visible


ALWAYS: ElementVisibility = _Constant(visible=True)
"""Everything is visible (the server's default)."""

NEVER: ElementVisibility = _Constant(visible=False)
"""Nothing is visible."""


@runtime_checkable
class UriVisibility(ElementVisibility, Protocol):
    """A visibility rule that also decides on each concrete URI a resource template answers.

    ``is_visible`` decides what lists show (a template is listed or not, whatever URI it may be
    read at); ``is_uri_visible`` decides, for a read, subscription or completion of one concrete
    URI through a template, whether that template may answer it for this session. The server
    asks ``is_uri_visible`` only when ``is_visible`` already admitted the template, so a URI
    decision can only narrow what lists promise, never reveal what they hide. A template that
    may not answer a URI is, for that URI, missing: the next candidate (a less specific
    template) answers, or the URI is not found.

    Laws:
        1. ``visibility.uri-narrows``: a template hidden by ``is_visible`` answers no URI; one
           admitted answers a URI exactly when ``is_uri_visible`` says so.
    """

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        """Whether the template at ``ref`` may answer ``uri`` (matched as ``variables``) for ``session``."""
        ...


async def visible_at(
    rule: ElementVisibility,
    ref: ElementRef,
    session: SessionInfo,
    *,
    uri: str | None = None,
    variables: Mapping[str, str] | None = None,
) -> bool:
    """Whether ``rule`` lets the element at ``ref`` answer one request of ``session``.

    ``rule.is_visible``, then, for a template asked about a concrete ``uri``,
    ``rule.is_uri_visible`` when the rule has it. What the server asks before it lets an element
    answer; combinators ask it of their parts.
    """
    if not await rule.is_visible(ref, session):
        return False
    if uri is None:
        return True
    if not isinstance(rule, UriVisibility):
        return True
    return bool(
        await rule.is_uri_visible(ref, uri, variables if variables is not None else {}, session)
    )
