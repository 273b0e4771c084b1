"""The registry: the role protocols and the reference Registry implementing all of them.

The reference Registry also bounds each source's time (``provide_timeout``), retries failing
sources in the background (:class:`Backoff`) and reports :class:`RegistryHealth`;
:class:`ChangePropagation` keeps the registries of several workers in step over a change bus.
"""

from typing import TYPE_CHECKING

from mcp_core._lazy import LazyNames
from mcp_core.registry._collect import collect
from mcp_core.registry._health import RegistryHealth, RegistryStatus, SourceHealth, SourceState
from mcp_core.registry._protocols import (
    BackgroundRecovery,
    CatalogCollection,
    ChangeListener,
    ChangeNotifier,
    ConfiguredSources,
    DeferredRegistry,
    ElementAtRef,
    ElementCatalog,
    ElementOrigin,
    ElementResolver,
    ElementWriter,
    HealthReport,
    ResolvedResource,
    ResourceCandidates,
    SourceChangeNotifier,
    SourcesListener,
)
from mcp_core.registry._recovery import Backoff
from mcp_core.registry._registry import Priority, Registry

if TYPE_CHECKING:
    from mcp_core.registry._propagation import ChangePropagation

# Imported on first use (ADR 0112): only a deployment keeps registries in step over a change bus,
# and that module imports the stores.
_LAZY: dict[str, str] = {"ChangePropagation": "mcp_core.registry._propagation"}
_NAMES = LazyNames(__name__, _LAZY, globals())

__all__ = [
    "BackgroundRecovery",
    "Backoff",
    "CatalogCollection",
    "ChangeListener",
    "ChangeNotifier",
    "ChangePropagation",
    "ConfiguredSources",
    "DeferredRegistry",
    "ElementAtRef",
    "ElementCatalog",
    "ElementOrigin",
    "ElementResolver",
    "ElementWriter",
    "HealthReport",
    "Priority",
    "Registry",
    "RegistryHealth",
    "RegistryStatus",
    "ResolvedResource",
    "ResourceCandidates",
    "SourceChangeNotifier",
    "SourceHealth",
    "SourceState",
    "SourcesListener",
    "collect",
]


def __getattr__(name: str) -> object:
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
