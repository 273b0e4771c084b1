"""The registry: the role protocols and the reference Registry implementing all of them."""

from mcp_core.registry._protocols import (
    ChangeListener,
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
    ResolvedResource,
)
from mcp_core.registry._registry import Priority, Registry

__all__ = [
    "ChangeListener",
    "ChangeNotifier",
    "DeferredRegistry",
    "ElementCatalog",
    "ElementResolver",
    "ElementWriter",
    "Priority",
    "Registry",
    "ResolvedResource",
]
