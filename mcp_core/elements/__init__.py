"""Element values: kinds, refs, definitions, elements and collections (sans-IO, immutable)."""

from typing import TYPE_CHECKING

from mcp_core._lazy import LazyNames
from mcp_core._refs import SINGLE_KINDS, ElementKind, ElementRef
from mcp_core.elements._collection import (
    COLLECTION_FORMAT,
    COLLECTION_VERSION,
    CollectionDocument,
    ElementCollection,
)
from mcp_core.elements._definitions import (
    Annotations,
    Definition,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from mcp_core.elements._element import Element, HandlerRef
from mcp_core.elements._json import FrozenDict, freeze

if TYPE_CHECKING:
    from mcp_core.elements._uritemplate import UriTemplate, most_specific_first

# Imported on first use (ADR 0112): URI templates are parsed by the first resource template, and
# an app serving tools alone never parses one.
_LAZY: dict[str, str] = {
    "UriTemplate": "mcp_core.elements._uritemplate",
    "most_specific_first": "mcp_core.elements._uritemplate",
}
_NAMES = LazyNames(__name__, _LAZY, globals())

__all__ = [
    "COLLECTION_FORMAT",
    "COLLECTION_VERSION",
    "SINGLE_KINDS",
    "Annotations",
    "CollectionDocument",
    "Definition",
    "Element",
    "ElementCollection",
    "ElementKind",
    "ElementRef",
    "FrozenDict",
    "HandlerRef",
    "Icon",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "UriTemplate",
    "freeze",
    "most_specific_first",
]


def __getattr__(name: str) -> object:
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
