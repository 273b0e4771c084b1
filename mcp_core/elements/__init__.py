"""Element values: kinds, refs, definitions, elements and collections (sans-IO, immutable)."""

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
    WireModel,
    definition_from_wire,
    own_value,
    shared_wire,
)
from mcp_core.elements._element import Element, HandlerRef
from mcp_core.elements._json import (
    MAX_JSON_DEPTH,
    FrozenDict,
    JsonValue,
    freeze,
    shared_plain,
    thaw,
)
from mcp_core.elements._kinds import SINGLE_KINDS, ElementKind, ElementRef
from mcp_core.elements._uritemplate import UriTemplate, most_specific_first

__all__ = [
    "COLLECTION_FORMAT",
    "COLLECTION_VERSION",
    "MAX_JSON_DEPTH",
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
    "JsonValue",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "UriTemplate",
    "WireModel",
    "definition_from_wire",
    "freeze",
    "most_specific_first",
    "own_value",
    "shared_plain",
    "shared_wire",
    "thaw",
]
