"""ToolIndex: the catalogue's tools in an SQLite FTS5 index, ranked per session by BM25.

The index holds the tools the catalogue lists (the registry's merge: precedence already
applied, so a shadowed tool is never found) and follows the catalogue's change events. A change
marks it stale; the next search reads the catalogue's current elements and rewrites only the
rows whose tool changed, found by identity first (a source that did not change keeps its element
objects through a re-merge), so one source's reload costs a walk over the catalogue's references
and the writes for that source's tools, never a rebuild.

Hidden is missing through search: the ranking of a session is BM25 over the tools *that session
may list*, as SQLite's own ``bm25()`` would rank them in a table holding those tools alone. The
statistics BM25 needs (how many tools, their average length, how many hold each query word) are
taken over the session's visible tools, so neither the hits, nor their count, nor their order
or scores depend on a tool the session cannot see. SQLite keeps the words (its inverted index
answers which tools hold a word, and where); the formula is SQLite's ``bm25()``, evaluated over
the visible statistics (a test holds the two equal on generated catalogues and rules).

A query word held by half the visible tools or more has no positive IDF and does not rank
(unless every word of the query is that common): "in" or "the" neither makes every tool a hit
nor costs a walk over every tool's postings.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, final

import anyio

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef, Tool
from mcp_core.registry import SourceChangeNotifier
from mcp_core.search._text import COLUMNS, WEIGHTS, Fields, query_terms
from mcp_core.visibility import ALWAYS, ElementVisibility, SessionInfo

if TYPE_CHECKING:
    import sqlite3

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "IndexedCatalog", "SearchHit", "ToolIndex"]

DEFAULT_LIMIT: Final = 8
"""Hits a search returns unless asked for another number."""

MAX_LIMIT: Final = 50
"""The most hits one search returns."""

# SQLite's bm25() constants (fts5_aux.c): term saturation and length normalisation.
_K1: Final = 1.2
_B: Final = 0.75
_CREATE: Final = (
    "CREATE VIRTUAL TABLE tools USING fts5(name, title, description, params, tags, "
    "tokenize='ascii')"
)
_SPREAD: Final = "SELECT doc FROM tool_rows WHERE term = ?"
_POSTINGS: Final = (
    "SELECT doc, total(CASE col "  # noqa: S608 -- the columns' names and weights are constants
    + " ".join(f"WHEN '{c}' THEN {w!r}" for c, w in zip(COLUMNS, WEIGHTS, strict=True))
    + " END) FROM tool_words WHERE term = ? GROUP BY doc"
)
_OPTIMISTIC: Final = 3  # searches tried while the index may change, before one holds it still
_INSERT: Final = (
    "INSERT INTO tools (rowid, name, title, description, params, tags) VALUES (?, ?, ?, ?, ?, ?)"
)


class IndexedCatalog(Protocol):
    """What the index reads: the listed elements, and when they change (``Registry`` is one)."""

    async def elements(self) -> ElementCollection:
        """The effective catalogue (what the lists show before visibility)."""
        ...

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each change; return a function that unsubscribes."""
        ...


@final
@dataclass(frozen=True, slots=True)
class SearchHit:
    """One tool a search found, with its BM25 score among the tools the session may see."""

    tool: Tool
    score: float


@final
class _Row:
    __slots__ = ("element", "length", "ref")

    def __init__(self, element: Element, length: int) -> None:
        self.element = element
        self.ref = element.ref
        self.length = length


@final
class _Snapshot:
    """The rows at one moment: a search works on one snapshot from start to end."""

    __slots__ = ("lengths", "rows", "total")

    def __init__(self, rows: dict[int, _Row], total: int) -> None:
        self.rows = rows
        self.total = total
        self.lengths = {rowid: row.length for rowid, row in rows.items()}


@final
class ToolIndex:
    """The catalogue's tools, searchable per session (see the module docstring).

    ``catalog`` gives the elements and change events (a :class:`~mcp_core.registry.Registry`);
    tools named in ``exclude`` are never indexed (the disclosure tools themselves). The index
    subscribes at once; :meth:`close` unsubscribes and frees the database.
    """

    __slots__ = (
        "_catalog",
        "_db",
        "_exclude",
        "_ids",
        "_lock",
        "_next",
        "_snapshot",
        "_stale",
        "_unsubscribes",
    )

    def __init__(self, catalog: IndexedCatalog, *, exclude: Collection[str] = ()) -> None:
        self._catalog = catalog
        self._exclude = frozenset(exclude)
        import sqlite3  # noqa: PLC0415 -- an app without search never loads it (ADR 0057)

        # One connection, used from the event loop's thread only, never across an await.
        self._db: sqlite3.Connection = sqlite3.connect(
            ":memory:", check_same_thread=False, isolation_level=None
        )
        # Words arrive already split (see _text): the ascii tokenizer splits on the spaces
        # between them and keeps every word as it is.
        self._db.execute(_CREATE)
        self._db.execute("CREATE VIRTUAL TABLE tool_words USING fts5vocab(tools, instance)")
        self._db.execute("CREATE VIRTUAL TABLE tool_rows USING fts5vocab(tools, row)")
        self._snapshot = _Snapshot({}, 0)
        self._ids: dict[str, int] = {}
        self._next = 1
        self._stale = True
        self._lock = anyio.Lock()
        unsubscribes = [catalog.subscribe(self._changed)]
        if isinstance(catalog, SourceChangeNotifier):
            # A change event covers what the lists show (definitions); a source whose elements
            # changed only in what the index also reads (tags) says so here.
            unsubscribes.append(catalog.subscribe_sources(self._sources_changed))
        self._unsubscribes: list[Callable[[], None]] = unsubscribes

    def __repr__(self) -> str:
        state = "stale" if self._stale else "current"
        return f"ToolIndex(<{len(self._snapshot.rows)} tools, {state}>)"

    def __len__(self) -> int:
        return len(self._snapshot.rows)

    def close(self) -> None:
        """Stop following the catalogue and free the database."""
        unsubscribes, self._unsubscribes = self._unsubscribes, []
        for unsubscribe in unsubscribes:
            unsubscribe()
        self._db.close()

    def _changed(self, kinds: ElementKind) -> None:
        if kinds & ElementKind.TOOL:
            self._stale = True

    def _sources_changed(self, _sources: object) -> None:
        self._stale = True

    # -- keeping current ------------------------------------------------------------------------

    async def refresh(self) -> None:
        """Bring the index up to the catalogue (a no-op unless a change was announced).

        Rewrites only the rows of tools that were added, removed or changed.
        """
        if not self._stale:
            return
        async with self._lock:
            if not self._stale:
                return
            # Cleared before reading: a change announced while the catalogue is read marks the
            # index stale again, and the next search reads it once more.
            self._stale = False
            try:
                collection = await self._catalog.elements()
            except BaseException:
                self._stale = True
                raise
            self._apply(collection)

    def _apply(self, collection: ElementCollection) -> None:
        exclude = self._exclude
        current: dict[str, Element] = {}
        for element in collection:
            ref = element.ref
            if ref.kind is ElementKind.TOOL and ref.key not in exclude:
                current[ref.key] = element
        snapshot = self._snapshot
        rows = dict(snapshot.rows)  # copied: a search under way keeps the rows it started with
        total = snapshot.total
        ids = self._ids
        removed: list[tuple[int]] = []
        added: list[tuple[int, str, str, str, str, str]] = []
        for name in [n for n in ids if n not in current]:
            rowid = ids.pop(name)
            total -= rows.pop(rowid).length
            removed.append((rowid,))
        for name, element in current.items():
            known = ids.get(name)
            if known is not None:
                row = rows[known]
                if row.element is element:
                    continue
                if (
                    row.element.definition == element.definition
                    and row.element.tags == element.tags
                ):
                    rows[known] = _Row(element, row.length)  # same words: nothing to rewrite
                    continue
                total -= row.length
                del rows[known]
                removed.append((known,))
            rowid = ids[name] = self._next
            self._next += 1
            fields = Fields.of(element)
            rows[rowid] = _Row(element, fields.length)
            total += fields.length
            added.append((rowid, *fields.texts()))  # type: ignore[arg-type]  # five columns
        if removed or added:
            db = self._db
            db.execute("BEGIN")
            try:
                db.executemany("DELETE FROM tools WHERE rowid = ?", removed)
                db.executemany(
                    _INSERT,
                    added,
                )
            except BaseException:
                db.execute("ROLLBACK")
                self._stale = True
                raise
            db.execute("COMMIT")
        self._snapshot = _Snapshot(rows, total)

    # -- searching ------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        session: SessionInfo,
        visibility: ElementVisibility = ALWAYS,
        *,
        limit: int = DEFAULT_LIMIT,
    ) -> tuple[SearchHit, ...]:
        """The tools best matching ``query`` among those ``session`` may list, best first.

        A tool matches when it holds at least one of the query's words (words held by half the
        visible tools or more aside, unless all are); hits are ranked by BM25
        (SQLite's ``bm25()`` with the column weights of :data:`~mcp_core.search.WEIGHTS`) over
        the tools ``visibility`` lets ``session`` list, ties by name. At most ``limit`` hits.

        Raises:
            ValueError: a query too long or with too many words, or a ``limit`` that is not
                between 1 and ``MAX_LIMIT`` (the message says which).
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
        terms = query_terms(query)
        for attempt in range(_OPTIMISTIC + 1):
            await self.refresh()
            if attempt < _OPTIMISTIC:
                found = await self._search(terms, session, visibility, limit)
            else:  # the catalogue keeps changing under the search: hold the changes back
                async with self._lock:
                    found = await self._search(terms, session, visibility, limit)
            if found is not None:
                return found
        raise AssertionError("unreachable: the last attempt holds the lock")  # pragma: no cover

    async def _search(
        self,
        terms: tuple[str, ...],
        session: SessionInfo,
        visibility: ElementVisibility,
        limit: int,
    ) -> tuple[SearchHit, ...] | None:
        """One attempt on the current snapshot; None if the index changed while rules were asked."""
        snapshot = self._snapshot
        spread = [(term, self._spread(term)) for term in terms]
        spread = [(term, held) for term, held in spread if held]
        if not spread:
            return ()
        rows = snapshot.rows
        visible: set[int] | None = None
        if visibility is ALWAYS:
            count, total = len(rows), snapshot.total
        else:
            visible = await _visible_rows(rows, visibility, session)
            if self._snapshot is not snapshot:
                return None  # rows were rewritten meanwhile: their words are not these any more
            lengths = snapshot.lengths
            count, total = len(visible), sum(lengths[rowid] for rowid in visible)
        if not count:
            return ()
        # From here on nothing awaits: the postings read now are the snapshot's.
        chosen = self._chosen(spread, visible, count, len(rows))
        average = total / count
        lengths = snapshot.lengths
        scores: dict[int, float] = {}
        get = scores.get
        for postings in chosen:
            hits = len(postings)
            idf = math.log((count - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            # SQLite's expression, term for term (fts5_aux.c), so the scores are its own.
            for rowid, f in postings.items():
                norm = _K1 * (1 - _B + _B * lengths[rowid] / average)
                scores[rowid] = get(rowid, 0.0) + idf * ((f * (_K1 + 1.0)) / (f + norm))
        return tuple(
            SearchHit(tool=rows[rowid].element.definition, score=score)  # type: ignore[arg-type]  # rows hold tools
            for rowid, score in _best(scores, rows, limit)
        )

    def _chosen(
        self, spread: list[tuple[str, int]], visible: set[int] | None, count: int, total_rows: int
    ) -> list[dict[int, float]]:
        """The postings, among ``visible`` tools (None: all), of the words that rank.

        A word held by half the ``count`` visible tools or more has no positive IDF: it is left
        out, unless every word of the query is that common, when they all count.
        """
        informative: list[dict[int, float]] = []
        common: list[tuple[str, dict[int, float] | None]] = []  # None: not read yet
        # Tools not visible: a word held by ``held`` tools is held by at least ``held - hidden``
        # visible ones, which may already prove it common without reading its postings.
        hidden = total_rows - count
        for term, held in spread:
            if 2 * (held - hidden) >= count:
                common.append((term, None))
                continue
            postings = self._postings(term, visible)
            if not postings:
                continue
            if 2 * len(postings) >= count:
                common.append((term, postings))
            else:
                informative.append(postings)
        if informative:
            return informative
        # The smallest IDF SQLite gives then ranks them (a non-positive IDF is taken as 1e-6).
        return [p if p is not None else self._postings(t, visible) for t, p in common]

    def _spread(self, term: str) -> int:
        """How many tools hold ``term`` (all of them, visible or not): read from the vocabulary."""
        found = self._db.execute(_SPREAD, (term,)).fetchone()
        return int(found[0]) if found is not None else 0

    def _postings(self, term: str, visible: set[int] | None) -> dict[int, float]:
        """Each tool (of ``visible``; None: all) holding ``term``, with BM25's ``f(q, D)``."""
        found = self._db.execute(_POSTINGS, (term,)).fetchall()
        if visible is None:
            return dict(found)
        return {rowid: f for rowid, f in found if rowid in visible}

    def tools(self) -> Sequence[ElementRef]:
        """The refs of the indexed tools (for inspection)."""
        return [row.ref for row in self._snapshot.rows.values()]


def _best(scores: dict[int, float], rows: dict[int, _Row], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best scores, ties by name: the cut is found on scores alone, then sorted."""
    items = scores.items()
    if len(scores) > limit:
        cutoff = heapq.nlargest(limit, scores.values())[-1]
        items = [(rowid, score) for rowid, score in items if score >= cutoff]  # type: ignore[assignment]
    ranked = sorted(items, key=lambda item: (-item[1], rows[item[0]].ref.key))
    return ranked[:limit]


async def _visible_rows(
    rows: dict[int, _Row], visibility: ElementVisibility, session: SessionInfo
) -> set[int]:
    decide = visibility.is_visible
    return {rowid for rowid, row in rows.items() if await decide(row.ref, session)}
