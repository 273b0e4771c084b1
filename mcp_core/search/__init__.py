"""Search over large catalogues, and progressive disclosure per session.

- :class:`ToolIndex`: the catalogue's tools in an SQLite FTS5 index that follows the registry's
  change events, ranked per session by BM25 over the tools that session may see;
- :class:`Disclosure` / :class:`ToolDisclosure`: a server whose sessions list a few tools, find
  the others with ``search_tools`` and call them (``App(..., disclosure=Disclosure())``).

See ``docs/large-catalogues.md``.
"""

from mcp_core.search._disclosure import Disclosure
from mcp_core.search._index import SearchHit, ToolIndex
from mcp_core.search._text import Fields, query_terms

__all__ = ["Disclosure", "Fields", "SearchHit", "ToolIndex", "query_terms"]
