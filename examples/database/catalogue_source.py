"""PostgresCatalogue: elements stored as rows of a PostgreSQL table, changes announced by NOTIFY.

The Shopware case: an application's database says which tools, prompts and resources exist (an
installed app adds rows), and the server follows it. What a source over a database must do:

- **Unavailable is not empty.** When the database cannot be reached (refused, reset, or silent
  past ``timeout`` seconds), ``provide()`` raises ``SourceUnavailableError``; the registry keeps
  serving the last good catalogue, reports the source ``unavailable`` and provides it again in
  the background, with backoff, until it answers (``App(retry=Backoff(...))``). It never answers
  an empty catalogue for an outage, and retries nothing itself.
- **Bounded I/O.** Every connection and query of the source is bounded by ``timeout``.
- **Its own schema.** A database without the table gets it (and the ``seed`` statements) on the
  first ``provide()``, in one transaction.
- **One bad row costs only itself.** A row whose definition is invalid, or whose handler is not
  one of the server's (``handlers.has(id)``), is skipped with a diagnostic naming it.
- **Changes are announced** (``ChangingSource``): a trigger on the table sends ``NOTIFY``; while
  the server runs (``RunningSource``: ``App`` runs it), a listening connection hears it and asks
  the registry to provide again, which tells clients ``list_changed``. Losing that connection is
  announced too (the registry provides, fails and records ``unavailable``); the source listens
  again once a ``provide()`` has reached the database, and announces once more for what changed
  while it was not listening.
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
from mcp_core.sources import ChangeListeners, SourceDiagnostic

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
        "_listeners",
        "_reached",
        "_seed",
        "_timeout",
    )

    def __init__(
        self,
        dsn: str,
        *,
        handlers: Container,
        seed: sql.SQL | None = None,
        timeout: float = 5.0,
    ) -> None:
        self._dsn = dsn
        self._handlers = handlers
        self._seed = seed
        self._timeout = timeout
        self._listeners = ChangeListeners()
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()
        self._reached = anyio.Event()  # set by a provide() that reached the database

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
            self._reached.set()
        except (psycopg.OperationalError, TimeoutError) as exc:
            raise SourceUnavailableError(
                f"{self!r}: the catalogue database is unreachable ({type(exc).__name__})",
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
        # TCP keepalives bounded by the timeout: a listening connection to a host that vanished
        # without a word (no reset) fails instead of waiting forever for the next NOTIFY.
        seconds = max(int(self._timeout), 1)
        connection: psycopg.AsyncConnection[
            tuple[object, ...]
        ] = await psycopg.AsyncConnection.connect(
            self._dsn,
            connect_timeout=max(seconds, 2),
            autocommit=True,
            keepalives=1,
            keepalives_idle=seconds,
            keepalives_interval=seconds,
            keepalives_count=3,
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
        """Call ``listener(kinds)`` when the table changed, or the listening connection was lost."""
        return self._listeners.subscribe(listener)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Listen for changes while the server runs."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._follow)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def _follow(self) -> None:
        lost = False
        while True:
            # Retrying is the registry's: listen once one of its provides reached the database.
            await self._reached.wait()
            try:
                await self._listen(announce=lost)  # returns only by raising: the connection is lost
            except (psycopg.OperationalError, TimeoutError) as exc:
                lost, self._reached = True, anyio.Event()
                _log.warning("catalogue database lost (%s)", type(exc).__name__)
                # The registry provides, fails, reports "unavailable" and retries with backoff.
                self._listeners.announce(ElementKind.ALL)

    async def _listen(self, *, announce: bool) -> None:
        with anyio.fail_after(self._timeout):
            connection = await self._connect()
        async with connection:
            await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
            if announce:  # listening again: whatever changed while nobody listened
                _log.warning("catalogue database is back")
                self._listeners.announce(ElementKind.ALL)
            async for _ in connection.notifies():
                self._listeners.announce(ElementKind.ALL)


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
