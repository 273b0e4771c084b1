"""Results in wire shape turned back into values: for handlers that relay another server's answers.

A handler that forwards to another MCP server (a remote one, or an SDK server adopted in process)
receives ``CallToolResult`` / ``ReadResourceResult`` wire dicts. Returning them as values keeps the
invoker's normalisation, output-schema check and error handling the same for every handler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_core.elements import Annotations, Icon
from mcp_core.handlers._content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    ToolResult,
)

__all__ = ["content_from_wire", "resource_contents_from_wire", "tool_result_from_wire"]


def _annotations(wire: Mapping[str, Any]) -> Annotations | None:
    data = wire.get("annotations")
    return Annotations.from_wire(data) if isinstance(data, Mapping) else None


def content_from_wire(wire: Mapping[str, Any]) -> Content:
    """The content value of a ``ContentBlock`` wire dict.

    Raises:
        ValueError: the dict is not a content block of a known type (the message names it).
    """
    kind = wire.get("type")
    annotations = _annotations(wire)
    meta = wire.get("_meta")
    if kind == "text":
        return Text(wire["text"], annotations=annotations, meta=meta)
    if kind in ("image", "audio"):
        media = Image if kind == "image" else Audio
        return media(wire["data"], wire["mimeType"], annotations=annotations, meta=meta)
    if kind == "resource":
        contents = resource_contents_from_wire(wire["resource"])
        return EmbeddedResource(
            contents.uri,
            mime_type=contents.mime_type,
            text=contents.text,
            blob=contents.blob,
            annotations=annotations,
            meta=contents.meta,
        )
    if kind == "resource_link":
        icons = wire.get("icons")
        return ResourceLink(
            wire["uri"],
            wire["name"],
            title=wire.get("title"),
            description=wire.get("description"),
            mime_type=wire.get("mimeType"),
            size=wire.get("size"),
            icons=[Icon.from_wire(icon) for icon in icons] if icons is not None else None,
            annotations=annotations,
            meta=meta,
        )
    raise ValueError(f"not a content block of a known type: {kind!r}")


def resource_contents_from_wire(
    wire: Mapping[str, Any], *, uri: str | None = None
) -> EmbeddedResource:
    """The ``TextResourceContents`` / ``BlobResourceContents`` wire dict as a value.

    ``uri`` replaces the contents' own URI (a relay answers with the URI its client asked for).
    """
    return EmbeddedResource(
        uri if uri is not None else wire["uri"],
        mime_type=wire.get("mimeType"),
        text=wire.get("text"),
        blob=wire.get("blob"),
        meta=wire.get("_meta"),
    )


def tool_result_from_wire(wire: Mapping[str, Any]) -> ToolResult:
    """The ``CallToolResult`` wire dict as a :class:`ToolResult` (passed through as is)."""
    blocks: Sequence[Mapping[str, Any]] = wire.get("content") or ()
    return ToolResult(
        [content_from_wire(block) for block in blocks],
        structured=wire.get("structuredContent"),
        is_error=bool(wire.get("isError", False)),
        meta=wire.get("_meta"),
    )
