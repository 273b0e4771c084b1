"""Per-session visibility: the ElementVisibility protocol, SessionInfo, and combinators."""

from mcp_core.visibility._combinators import (
    ALWAYS,
    NEVER,
    ElementLookup,
    all_of,
    any_of,
    by_tag,
    not_,
    predicate,
    requires_scopes,
    scoped_by_tag,
)
from mcp_core.visibility._protocol import ElementVisibility, SessionInfo

__all__ = [
    "ALWAYS",
    "NEVER",
    "ElementLookup",
    "ElementVisibility",
    "SessionInfo",
    "all_of",
    "any_of",
    "by_tag",
    "not_",
    "predicate",
    "requires_scopes",
    "scoped_by_tag",
]
