"""CollectionFileSource over a dump of the example collection."""

from __future__ import annotations

import atexit
import os
import tempfile
from pathlib import Path

from mcp_conformance.reference._example import example_collection
from mcp_core.sources import CollectionFileSource

__all__ = ["source"]


def source() -> CollectionFileSource:
    """A CollectionFileSource reading the example collection, dumped once per process."""
    return CollectionFileSource(_dump())


def _dump() -> Path:
    # One file per process (xdist workers write their own), replaced atomically so that a
    # reader never sees half a file.
    path = Path(tempfile.gettempdir()) / f"mcp-conformance-example-{os.getpid()}.json"
    if not path.exists():
        partial = path.with_suffix(".partial")
        partial.write_text(example_collection().to_json(indent=2), encoding="utf-8")
        partial.replace(path)
        atexit.register(path.unlink, missing_ok=True)
    return path
