"""Per-session visibility: the ElementVisibility protocol, SessionInfo, and combinators."""

from typing import TYPE_CHECKING

from mcp_core._lazy import LazyNames
from mcp_core.visibility._protocol import (
    ALWAYS,
    NEVER,
    ElementVisibility,
    SessionInfo,
    UriVisibility,
    visible_at,
)

if TYPE_CHECKING:
    from mcp_core.visibility._combinators import (
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

# The combinators are imported on first use (ADR 0112): a server whose rule is the default ALWAYS
# composes none.
_LAZY: dict[str, str] = dict.fromkeys(
    (
        "TagLookup",
        "all_of",
        "any_of",
        "by_tag",
        "handler_access",
        "not_",
        "per_uri",
        "predicate",
        "requires_scopes",
        "scoped_by_tag",
    ),
    "mcp_core.visibility._combinators",
)
_NAMES = LazyNames(__name__, _LAZY, globals())

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


def __getattr__(name: str) -> object:
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
