"""PostgresCatalogue: elements stored as rows of a PostgreSQL table, changes announced by NOTIFY.

The Shopware case: an application's database says which tools, prompts and resources exist (an
installed app adds rows), and the server follows it. What a source over a database must do:

- **Unavailable is not empty.** When the database cannot be reached (refused, reset, or silent
  past ``timeout`` seconds), ``provide()`` raises ``SourceUnavailableError``; the registry keeps
  serving the last good catalogue and reports the source ``unavailable``. It never answers an
  empty catalogue for an outage.
- **Bounded I/O.** Every connection and query of the source is bounded by ``timeout``.
- **Its own schema.** A database without the table gets it (and the ``seed`` statements) on the
  first ``provide()``, in one transaction.
- **One bad row costs only itself.** A row whose definition is invalid, or whose handler is not
  one of the server's (``handlers.has(id)``), is skipped with a diagnostic naming it.
- **Changes are announced** (``ChangingSource``): a trigger on the table sends ``NOTIFY``; while
  the server runs (``RunningSource``: ``App`` runs it), a listening connection hears it and asks
  the registry to provide again, which tells clients ``list_changed``. The same loop checks the
  database every ``health_interval`` seconds: losing it is announced (the registry then records
  ``unavailable``), and reconnecting is retried with exponential backoff up to ``max_backoff``
  seconds; getting it back is announced (the registry reloads, and clients see what changed
  meanwhile).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final, final

import anyio
import psycopg
from psycopg import sql
from psycopg.rows import TupleRow, class_row

from mcp_core.elements import (
    COLLECTION_FORMAT,
    COLLECTION_VERSION,
    Element,
    ElementCollection,
    ElementKind,
)
from mcp_core.errors import CollectionFormatError, SourceUnavailableError
from mcp_core.handlers import Container
from mcp_core.sources import SourceDiagnostic

_log = logging.getLogger("catalogue")

CHANNEL: Final = "mcp_elements_changed"
# The table, and the trigger that tells listeners of CHANNEL about every change.
SCHEMA: Final = """
CREATE TABLE mcp_elements (
    kind       text    NOT NULL CHECK (kind IN ('tool', 'prompt', 'resource', 'resource_template')),
    key        text    NOT NULL,
    definition jsonb   NOT NULL,
    handler    text    NOT NULL,
    tags       text[]  NOT NULL DEFAULT '{}',
    enabled    boolean NOT NULL DEFAULT true,
    PRIMARY KEY (kind, key)
);
CREATE FUNCTION mcp_elements_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mcp_elements_changed', TG_OP);
    RETURN NULL;
END $$;
CREATE TRIGGER mcp_elements_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mcp_elements
    FOR EACH STATEMENT EXECUTE FUNCTION mcp_elements_notify();
"""
_ROWS: Final = (
    "SELECT kind, key, definition, handler, tags FROM mcp_elements WHERE enabled ORDER BY kind, key"
)


@final
@dataclass(frozen=True, slots=True)
class _Row:
    """One row of ``mcp_elements``, as the query selects it."""

    kind: str
    key: str
    definition: object
    handler: str
    tags: list[str]


@final
class PostgresCatalogue:
    """The enabled rows of ``mcp_elements`` as elements (see the module docstring)."""

    __slots__ = (
        "_diagnostics",
        "_dsn",
        "_handlers",
        "_health_interval",
        "_listeners",
        "_max_backoff",
        "_seed",
        "_timeout",
        "_up",
    )

    def __init__(
        self,
        dsn: str,
        *,
        handlers: Container,
        seed: sql.SQL | None = None,
        timeout: float = 5.0,
        health_interval: float = 5.0,
        max_backoff: float = 30.0,
    ) -> None:
        self._dsn = dsn
        self._handlers = handlers
        self._seed = seed
        self._timeout = timeout
        self._health_interval = health_interval
        self._max_backoff = max_backoff
        self._listeners: list[Callable[[ElementKind], object]] = []
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()
        self._up = True

    def __repr__(self) -> str:
        return "PostgresCatalogue('mcp_elements')"  # never the DSN: it holds a password

    def kinds(self) -> ElementKind:
        """Any kind: a row may hold any (declared by the table's CHECK constraint)."""
        return ElementKind.ALL

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The rows the last ``provide()`` skipped, and why."""
        return self._diagnostics

    async def provide(self) -> ElementCollection:
        """The enabled rows now; ``SourceUnavailableError`` while the database is unreachable."""
        try:
            with anyio.fail_after(self._timeout):
                async with await self._connect() as connection:
                    await self._ensure_schema(connection)
                    async with connection.cursor(row_factory=class_row(_Row)) as cursor:
                        await cursor.execute(_ROWS)
                        rows = await cursor.fetchall()
        except (psycopg.OperationalError, TimeoutError) as exc:
            raise SourceUnavailableError(
                f"{self!r}: the catalogue database is unreachable ({type(exc).__name__}); "
                "serving the last good catalogue until it is back",
                source=self,
            ) from exc
        elements: list[Element] = []
        diagnostics: list[SourceDiagnostic] = []
        for row in rows:
            problem = self._problem(row.handler)
            element = None
            if problem is None:
                try:
                    element = _element(row)
                except CollectionFormatError as exc:
                    problem = f"its definition is invalid: {exc}"
            if element is None:
                diagnostics.append(
                    SourceDiagnostic(
                        source=repr(self),
                        kind="skipped",
                        message=f"row ({row.kind}, {row.key!r}) was skipped: {problem}; fix the row",
                    )
                )
                continue
            elements.append(element)
        self._diagnostics = tuple(diagnostics)
        return ElementCollection(elements)

    def _problem(self, handler: str) -> str | None:
        if self._handlers.has(handler):
            return None
        return f"its handler {handler!r} is not one of this server's handlers"

    async def _connect(self) -> psycopg.AsyncConnection[TupleRow]:
        connection: psycopg.AsyncConnection[
            tuple[object, ...]
        ] = await psycopg.AsyncConnection.connect(
            self._dsn, connect_timeout=max(int(self._timeout), 2), autocommit=True
        )
        return connection

    async def _ensure_schema(self, connection: psycopg.AsyncConnection[TupleRow]) -> None:
        """Create the table (and run ``seed``) in a database that does not have it yet."""
        found = await (await connection.execute("SELECT to_regclass('mcp_elements')")).fetchone()
        if found is not None and found[0] is not None:
            return
        async with connection.transaction():
            await connection.execute(SCHEMA)
            if self._seed is not None:
                await connection.execute(self._seed)

    # -- ChangingSource / RunningSource ------------------------------------------------------------

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` when the table changed, the database was lost, or came back."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Listen for changes and watch the database while the server runs."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    def _announce(self) -> None:
        for listener in tuple(self._listeners):
            listener(ElementKind.ALL)

    async def _watch(self) -> None:
        first = min(1.0, self._max_backoff)
        backoff = first
        while True:
            try:
                await self._listen()  # returns only by raising: the database was lost
            except (psycopg.OperationalError, TimeoutError) as exc:
                if self._up:
                    self._up = False
                    backoff = first
                    _log.warning("catalogue database lost (%s); retrying", type(exc).__name__)
                    self._announce()  # the registry provides, fails, and reports "unavailable"
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, self._max_backoff)

    async def _listen(self) -> None:
        with anyio.fail_after(self._timeout):
            connection = await self._connect()
        async with connection:
            await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
            if not self._up:
                self._up = True
                _log.warning("catalogue database is back")
                self._announce()  # the registry provides again: whatever changed meanwhile
            while True:
                changed = False
                async for _ in connection.notifies(timeout=self._health_interval):
                    changed = True
                    break
                if changed:
                    self._announce()
                    continue
                with anyio.fail_after(self._timeout):
                    await connection.execute("SELECT 1")


def _element(row: _Row) -> Element:
    """One row as an element, decoded like a collection file's record (bounded, validated)."""
    record: Mapping[str, object] = {
        "kind": row.kind,
        "definition": row.definition,
        "handler": row.handler,
        "tags": list(row.tags),
    }
    document = {"format": COLLECTION_FORMAT, "version": COLLECTION_VERSION, "elements": [record]}
    (element,) = ElementCollection.from_json(json.dumps(document))
    return element
