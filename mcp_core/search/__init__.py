"""Search over large catalogues, and progressive disclosure per session.

- :class:`ToolIndex`: the catalogue's tools in an SQLite FTS5 index that follows the registry's
  change events, ranked per session by BM25 over the tools that session may see;
- :class:`Disclosure` / :class:`ToolDisclosure`: a server whose sessions list a few tools, find
  the others with ``search_tools`` and call them (``App(..., disclosure=Disclosure())``).

See ``docs/large-catalogues.md``.
"""

from mcp_core.search._disclosure import Disclosure, SessionChannel, ToolDisclosure
from mcp_core.search._index import DEFAULT_LIMIT, MAX_LIMIT, IndexedCatalog, SearchHit, ToolIndex
from mcp_core.search._text import COLUMNS, WEIGHTS, Fields, query_terms, words

__all__ = [
    "COLUMNS",
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "WEIGHTS",
    "Disclosure",
    "Fields",
    "IndexedCatalog",
    "SearchHit",
    "SessionChannel",
    "ToolDisclosure",
    "ToolIndex",
    "query_terms",
    "words",
]
