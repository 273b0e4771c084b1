"""Per-session visibility: the ElementVisibility protocol, SessionInfo, and combinators."""

from mcp_core.visibility._combinators import (
    ALWAYS,
    NEVER,
    TagLookup,
    all_of,
    any_of,
    by_tag,
    handler_access,
    not_,
    per_uri,
    predicate,
    requires_scopes,
    scoped_by_tag,
)
from mcp_core.visibility._protocol import ElementVisibility, SessionInfo, UriVisibility, visible_at

__all__ = [
    "ALWAYS",
    "NEVER",
    "ElementVisibility",
    "SessionInfo",
    "TagLookup",
    "UriVisibility",
    "all_of",
    "any_of",
    "by_tag",
    "handler_access",
    "not_",
    "per_uri",
    "predicate",
    "requires_scopes",
    "scoped_by_tag",
    "visible_at",
]
