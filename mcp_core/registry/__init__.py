"""The registry: four role protocols and the reference Registry implementing all of them."""

from mcp_core.registry._collect import collect
from mcp_core.registry._protocols import (
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
    ResolvedResource,
    ResourceCandidates,
)
from mcp_core.registry._registry import ChangeListener, Priority, Registry

__all__ = [
    "ChangeListener",
    "DeferredRegistry",
    "ElementCatalog",
    "ElementResolver",
    "ElementWriter",
    "Priority",
    "Registry",
    "ResolvedResource",
    "ResourceCandidates",
    "collect",
]
