"""The brute-force reference: SQLite's own ``bm25()`` over a table of the visible tools alone."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from mcp_core.elements import Element
from mcp_core.search import WEIGHTS, Fields, query_terms


def reference_ranking(visible: Iterable[Element], query: str) -> list[tuple[str, float]]:
    """Every visible tool matching ``query`` with its score, best first, ties by name.

    A fresh FTS5 table holds only ``visible``: what a server without the hidden tools would
    rank. The query's words held by half the visible tools or more are left out (unless all
    are). Scores are made positive (SQLite's ``bm25()`` is lower-is-better).
    """
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(name, title, description, params, tags, "
        "tokenize='ascii')"
    )
    names: dict[int, str] = {}
    for rowid, element in enumerate(visible, start=1):
        names[rowid] = element.ref.key
        db.execute(
            "INSERT INTO t (rowid, name, title, description, params, tags) VALUES (?, ?, ?, ?, ?, ?)",
            (rowid, *Fields.of(element).texts()),
        )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    count = len(names)
    spread = {}
    for term in query_terms(query):
        found = db.execute("SELECT doc FROM v WHERE term = ?", (term,)).fetchone()
        if found is not None:
            spread[term] = found[0]
    # A word held by half the tools or more has no positive IDF: it does not count, unless
    # every word of the query is that common.
    terms = [term for term, held in spread.items() if 2 * held < count] or list(spread)
    if not terms:
        return []
    match = " OR ".join(f'"{term}"' for term in terms)
    weights = ", ".join(str(w) for w in WEIGHTS)
    found = [
        (names[rowid], -score)
        for rowid, score in db.execute(
            f"SELECT rowid, bm25(t, {weights}) FROM t WHERE t MATCH ?",  # noqa: S608 -- constants
            (match,),
        )
    ]
    db.close()
    return sorted(found, key=lambda item: (-item[1], item[0]))
