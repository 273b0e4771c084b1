"""The registry: the role protocols and the reference Registry implementing all of them.

The reference Registry also bounds each source's time (``provide_timeout``), retries failing
sources in the background (:class:`Backoff`) and reports :class:`RegistryHealth`;
:class:`ChangePropagation` keeps the registries of several workers in step over a change bus.
"""

from mcp_core.registry._collect import collect
from mcp_core.registry._health import RegistryHealth, RegistryStatus, SourceHealth, SourceState
from mcp_core.registry._propagation import ChangePropagation
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
