"""The registry: the role protocols and the reference Registry implementing all of them.

The reference Registry also bounds each source's time (``provide_timeout``), retries failing
sources in the background (:class:`Backoff`) and reports :class:`RegistryHealth`.
"""

from mcp_core.registry._collect import collect
from mcp_core.registry._health import RegistryHealth, RegistryStatus, SourceHealth, SourceState
from mcp_core.registry._protocols import (
    ChangeListener,
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
    ResolvedResource,
    ResourceCandidates,
)
from mcp_core.registry._recovery import DEFAULT_BACKOFF, Backoff
from mcp_core.registry._registry import DEFAULT_PROVIDE_TIMEOUT, Priority, Registry

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_PROVIDE_TIMEOUT",
    "Backoff",
    "ChangeListener",
    "ChangeNotifier",
    "DeferredRegistry",
    "ElementCatalog",
    "ElementResolver",
    "ElementWriter",
    "Priority",
    "Registry",
    "RegistryHealth",
    "RegistryStatus",
    "ResolvedResource",
    "ResourceCandidates",
    "SourceHealth",
    "SourceState",
    "collect",
]
