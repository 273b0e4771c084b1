"""The collection the reference sources provide: every kind and every optional feature once."""

from __future__ import annotations

from mcp_conformance._handlers import COMPLETION_PATH, HANDLER_PATHS
from mcp_core.elements import (
    Annotations,
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)

__all__ = ["example_collection"]


def _handler(kind: ElementKind) -> HandlerRef:
    return HandlerRef(HANDLER_PATHS[kind][0])


def example_collection() -> ElementCollection:
    """A serializable collection with tools, resources, templates and prompts."""
    icon = Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
    return ElementCollection(
        [
            Element(
                definition=Tool(
                    name="add",
                    title="Add",
                    description="Add two numbers.",
                    input_schema={
                        "type": "object",
                        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                        "required": ["a", "b"],
                    },
                    output_schema={"type": "object", "properties": {"sum": {"type": "number"}}},
                    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
                    icons=[icon],
                    meta={"example.com/origin": "reference", "weights": [0.5, 1, None]},
                ),
                handler=_handler(ElementKind.TOOL),
                tags=frozenset({"math"}),
            ),
            Element(
                definition=Tool(name="ping", input_schema={"type": "object"}),
                handler=HandlerRef(HANDLER_PATHS[ElementKind.TOOL][1]),
            ),
            Element(
                definition=Resource(
                    uri="file:///notes.txt",
                    name="notes",
                    mime_type="text/plain",
                    size=42,
                    annotations=Annotations(audience=["user"], priority=0.5),
                ),
                handler=_handler(ElementKind.RESOURCE),
            ),
            Element(
                definition=ResourceTemplate(
                    uri_template="app://items/{id}{?fields}",
                    name="item",
                    description="One item, by id.",
                    mime_type="application/json",
                ),
                handler=_handler(ElementKind.RESOURCE_TEMPLATE),
                completions={"id": HandlerRef(COMPLETION_PATH)},
            ),
            Element(
                definition=Prompt(
                    name="review",
                    description="Review a change.",
                    arguments=[
                        PromptArgument(name="diff", required=True),
                        PromptArgument(name="style", description="Tone of the review."),
                    ],
                ),
                handler=_handler(ElementKind.PROMPT),
                completions={"style": HandlerRef(COMPLETION_PATH)},
                tags=frozenset({"review", "code"}),
            ),
        ]
    )
