"""Element sources: the ElementSource protocol, built-in sources and wrappers.

A source returns an immutable :class:`~mcp_core.elements.ElementCollection`; wrappers add one
behaviour each and compose by nesting::

    CachedSource(PrefixedSource(DiscoverySource(["myapp.tools"]), "myapp"), SqliteStore("cache.db"))
"""

from typing import TYPE_CHECKING, Any

from mcp_core._lazy import LazyNames
from mcp_core.errors import SourceUnavailableError
from mcp_core.sources._diagnostics import DiagnosticKind, SourceDiagnostic
from mcp_core.sources._function import FunctionSource
from mcp_core.sources._protocol import (
    CacheInputs,
    ChangingSource,
    DiagnosticsReport,
    ElementLookup,
    ElementSource,
    HandlerTargets,
    KindsPrefetch,
    Repairable,
    RunningSource,
    WrappingSource,
    diagnostics_of,
    handler_targets_of,
    lookup_in,
    prefetch_kinds,
    source_chain,
    source_identity,
)
from mcp_core.sources._running import ChangeListeners, running_sources
from mcp_core.sources._static import StaticSource

if TYPE_CHECKING:
    from mcp_core.sources._cached import CachedSource
    from mcp_core.sources._discovery import DiscoverySource
    from mcp_core.sources._entry_points import EntryPointSource
    from mcp_core.sources._file import CollectionFileSource
    from mcp_core.sources._lazy import LazySource
    from mcp_core.sources._shared import SharedSource
    from mcp_core.sources._validated import ElementChecker, ValidatedSource
    from mcp_core.sources._wrappers import FilteredSource, IsolatedSource, PrefixedSource

# Imported on first use: a server that serves declared functions over stdio needs none of these
# (caches, discovery, files, wrappers), and start-up pays for each module it imports.
_LAZY: dict[str, str] = {
    "CachedSource": "mcp_core.sources._cached",
    "CollectionFileSource": "mcp_core.sources._file",
    "DiscoverySource": "mcp_core.sources._discovery",
    "ElementChecker": "mcp_core.sources._validated",
    "EntryPointSource": "mcp_core.sources._entry_points",
    "FilteredSource": "mcp_core.sources._wrappers",
    "IsolatedSource": "mcp_core.sources._wrappers",
    "LazySource": "mcp_core.sources._lazy",
    "PrefixedSource": "mcp_core.sources._wrappers",
    "SharedSource": "mcp_core.sources._shared",
    "ValidatedSource": "mcp_core.sources._validated",
}

__all__ = [
    "CacheInputs",
    "CachedSource",
    "ChangeListeners",
    "ChangingSource",
    "CollectionFileSource",
    "DiagnosticKind",
    "DiagnosticsReport",
    "DiscoverySource",
    "ElementChecker",
    "ElementLookup",
    "ElementSource",
    "EntryPointSource",
    "FilteredSource",
    "FunctionSource",
    "HandlerTargets",
    "IsolatedSource",
    "KindsPrefetch",
    "LazySource",
    "PrefixedSource",
    "Repairable",
    "RunningSource",
    "SharedSource",
    "SourceDiagnostic",
    "SourceUnavailableError",
    "StaticSource",
    "ValidatedSource",
    "WrappingSource",
    "diagnostics_of",
    "handler_targets_of",
    "lookup_in",
    "prefetch_kinds",
    "running_sources",
    "source_chain",
    "source_identity",
]


_NAMES = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
