"""Element values: kinds, refs, definitions, elements and collections (sans-IO, immutable)."""

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
from mcp_core.elements._uritemplate import UriTemplate, most_specific_first

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
