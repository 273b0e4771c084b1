"""``SqliteStore`` as a ``--mcp-cache-store`` target: a fresh database file per store, on the kit's clock."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final

from mcp_core.stores import SqliteStore

# One directory for the run, removed when the interpreter exits; a new file in it per store.
_DIRECTORY: Final = tempfile.TemporaryDirectory(prefix="mcp-conformance-sqlite-")
_NUMBERS: Final = itertools.count()


def make_cache_store(*, clock: Callable[[], float]) -> SqliteStore:
    """A new, empty SqliteStore in its own file, expiring entries on ``clock``."""
    return SqliteStore(Path(_DIRECTORY.name) / f"{next(_NUMBERS)}.sqlite3", clock=clock)
