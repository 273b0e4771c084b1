"""The official SDK's result values where mcp-core takes its own, recognised without importing it.

Code moved over from the SDK's ``MCPServer`` returns ``mcp.types`` content blocks
(``TextContent``, ``ImageContent``...), a whole ``CallToolResult``, ``PromptMessage`` values,
resource contents, or the SDK's ``Image``/``Audio`` helpers. The handlers layer does not import the
SDK (ADR 0035): such a value is recognised by its class's package and name, read once through its
wire form (``model_dump``), and becomes mcp-core's own value; from there it is served exactly as
that value is. A return *annotation* naming one of these types marks the tool's result as content,
as it does for mcp-core's own content types: no output schema is published for it, as
``MCPServer`` publishes none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcp_core.handlers._content import Content, Message
from mcp_core.handlers._wire import (
    content_from_wire,
    resource_contents_from_wire,
    tool_result_from_wire,
)

__all__ = ["is_protocol_error", "is_sdk_content_type", "own_message", "own_result_value"]

_SDK_PACKAGES: Final = frozenset({"mcp_types", "mcp"})
_CONTENT: Final = frozenset(
    {"TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource"}
)
_HELPERS: Final = {"Image": "to_image_content", "Audio": "to_audio_content"}
_CONTENT_ANNOTATIONS: Final = _CONTENT | {"CallToolResult", "PromptMessage", *_HELPERS}


def _sdk_name(cls: object) -> str | None:
    """The class's name when it is one of the SDK's (``mcp_types`` or ``mcp.*``), else None."""
    if not isinstance(cls, type):
        return None
    module = getattr(cls, "__module__", "")
    if not isinstance(module, str) or module.partition(".")[0] not in _SDK_PACKAGES:
        return None
    return cls.__name__


def _wire(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def is_protocol_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK's ``MCPError``: a deliberate JSON-RPC error with code and data.

    Subclasses count (``UrlElicitationRequiredError``). A tool raising one answers with that
    error, as an ``MCPServer`` tool does, rather than with a contained failure: a policy's
    refusal, or -32042 with the URL the user must open.
    """
    return any(
        cls.__name__ == "MCPError" and cls.__module__ == "mcp.shared.exceptions"
        for cls in type(exc).__mro__
    )


def is_sdk_content_type(annotation: object) -> bool:
    """Whether ``annotation`` is an SDK content type, ``CallToolResult`` or ``PromptMessage``."""
    return _sdk_name(annotation) in _CONTENT_ANNOTATIONS


def own_result_value(value: object) -> object:
    """``value`` as mcp-core's own value when it is one of the SDK's, else ``value`` itself.

    Content blocks become content values (:class:`Text`, :class:`Image`...), a ``CallToolResult``
    a :class:`ToolResult`, resource contents an :class:`EmbeddedResource`, a ``PromptMessage`` a
    :class:`Message`; the SDK's ``Image``/``Audio`` helpers their content.
    """
    name = _sdk_name(type(value))
    if name is None:
        return value
    helper = _HELPERS.get(name)
    if helper is not None and callable(convert := getattr(value, helper, None)):
        value, name = convert(), "content"
    reader = _READERS.get("content" if name in _CONTENT else name)
    return value if reader is None else reader(_wire(value))


def own_message(wire: Mapping[str, Any]) -> Message:
    """A ``PromptMessage`` wire dict as a :class:`Message`."""
    content: Content = content_from_wire(wire["content"])
    return Message(wire["role"], content)


_READERS: Final[Mapping[str, Callable[[Mapping[str, Any]], object]]] = {
    "content": content_from_wire,
    "CallToolResult": tool_result_from_wire,
    "TextResourceContents": resource_contents_from_wire,
    "BlobResourceContents": resource_contents_from_wire,
    "PromptMessage": own_message,
}
