"""The visibility rules the kit hands a rule target as its parts: decision tables that say so.

A ``--mcp-visibility`` factory composes the parts it is given; the kit knows what each part
decides (for lists, ``is_visible``; for one URI of a template, ``is_uri_visible``), so it can tell
what the composed rule must decide. A part without a URI decision is a plain
``ElementVisibility`` (it has no ``is_uri_visible`` at all); one with it is a ``UriVisibility``
whose URI table is drawn independently of its list table, so it may well "admit" URIs of a
template its list decision hides: a composition that asks a part's ``is_uri_visible`` without
its ``is_visible`` lets those through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, final

from mcp_core.elements import ElementRef
from mcp_core.visibility import SessionInfo

__all__ = ["Asked", "ListKey", "Part", "UriKey", "UriPart"]

ListKey: TypeAlias = tuple[ElementRef, str]
"""A list decision's question: the ref and the session id."""

UriKey: TypeAlias = tuple[ElementRef, str, str]
"""A URI decision's question: the template ref, the session id and the concrete URI."""


@final
@dataclass(frozen=True, slots=True)
class Asked:
    """One ``is_uri_visible`` call a part received, as it received it."""

    ref: ElementRef
    uri: str
    variables: dict[str, str]
    session: SessionInfo


@dataclass(slots=True, kw_only=True)
class Part:
    """A list-only rule (an ``ElementVisibility``): ``listed`` are the questions it says yes to."""

    name: str = "part"
    listed: frozenset[ListKey] = frozenset()

    def __repr__(self) -> str:
        return f"{self.name}(lists {sorted((str(ref), sid) for ref, sid in self.listed)})"

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        """Whether the table admits ``ref`` for this session."""
        return (ref, session.session_id or "") in self.listed


@final
@dataclass(slots=True, kw_only=True)
class UriPart(Part):
    """A ``UriVisibility``: a list table and an independent URI table, recording what it is asked."""

    admitted: frozenset[UriKey] = frozenset()
    asked: list[Asked] = field(default_factory=list)

    def __repr__(self) -> str:
        uris = sorted((str(ref), sid, uri) for ref, sid, uri in self.admitted)
        return f"{Part.__repr__(self)[:-1]}, admits URIs {uris})"

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        """Whether the URI table admits ``uri`` through ``ref`` for this session."""
        self.asked.append(Asked(ref, uri, dict(variables), session))
        return (ref, session.session_id or "", uri) in self.admitted
