"""Result normalisation: what handlers return, turned into MCP 2025-11-25 wire shapes.

Values a definition holds come back out unchanged: a frozen JSON object (a definition's ``meta``,
``input_schema``, ``output_schema``) is its plain JSON, a frozen array a list, and a definition
value itself (``Tool``, ``Prompt``, ``Icon``, ``ToolAnnotations``...) its MCP wire form, so a
plugin may return parts of its own definition.

Tools
    A :class:`ToolResult` passes through. Otherwise content values, ``str`` (text), JSON scalars
    (their JSON text), ``None`` (no content) and lists mixing them become content blocks. Objects
    (mappings, dataclasses, pydantic models) become their JSON text *and* ``structuredContent``.
    When the tool's output schema carries the wrapped marker, the value is published as
    ``{"result": value}`` in ``structuredContent`` and as its JSON text in ``content``.
    ``bytes`` are refused: wrap them in ``Image``, ``Audio`` or ``EmbeddedResource`` to say what
    they are.

Resources
    ``str`` is text, ``bytes`` a base64 blob; the MIME type is the declared one, else a guess from
    the URI's extension, else ``text/plain`` (text) or ``application/octet-stream`` (bytes).
    :class:`EmbeddedResource` values carry their own URI and type; ``Text`` is text, ``Image`` and
    ``Audio`` are blobs of their type; objects are JSON text (``application/json`` by default).
    Lists give several contents.

Prompts
    :class:`Message` values; ``{"role": ..., "content": ...}`` mappings whose content is a
    ``str``, a content value or a wire content mapping; a plain ``str`` or a bare content value is
    a *user* message. A list gives several messages. The shorthand for roles is
    ``Message.user(...)`` / ``Message.assistant(...)``; a tuple such as ``("user", "hi")`` is
    refused, because a tuple is also how a handler returns several messages and the two readings
    cannot be told apart.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import mimetypes
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pydantic_core
from pydantic_core import core_schema

from mcp_core.elements import (
    Annotations,
    FrozenDict,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from mcp_core.elements._json import thaw
from mcp_core.handlers._content import (
    CONTENT_TYPES,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Message,
    ResourceLink,
    Text,
    ToolResult,
)
from mcp_core.handlers._functions import WRAPPED_MARKER
from mcp_core.handlers._sdk_values import own_result_value

__all__ = [
    "normalize_prompt_messages",
    "normalize_resource_contents",
    "normalize_tool_result",
    "to_json",
]


def _wire_form(value: Any) -> Any:
    return value.to_wire()


# Definition values are frozen dataclasses whose fields are not their wire shape (snake_case,
# private caches): wherever pydantic serializes one, it uses the definition's own wire form.
_WIRE_SERIALIZER: Final = pydantic_core.SchemaSerializer(
    core_schema.any_schema(
        serialization=core_schema.plain_serializer_function_ser_schema(_wire_form)
    )
)
_DEFINITION_TYPES: Final[tuple[type, ...]] = (
    Annotations,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
for _definition_type in _DEFINITION_TYPES:
    setattr(_definition_type, "__pydantic_serializer__", _WIRE_SERIALIZER)  # noqa: B010 -- pydantic's hook, set once here


def _frozen(value: object) -> Any:
    """The fallback of pydantic for types it does not know: frozen JSON objects are plain ones."""
    if type(value) is FrozenDict:
        return thaw(value)
    raise pydantic_core.PydanticSerializationError(
        f"Unable to serialize unknown type: {type(value)}"
    )


def to_json(value: object) -> Any:
    """A JSON-compatible copy of ``value`` (dataclasses, models, enums, datetimes converted).

    Frozen JSON values and definitions (what a definition holds) serialize as plain JSON and as
    their wire form.
    """
    return pydantic_core.to_jsonable_python(value, fallback=_frozen)


def _json_text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False)


def _is_model(value: object) -> bool:
    """Whether ``value`` is a pydantic model, without importing pydantic's model machinery.

    ``pydantic.BaseModel`` is imported lazily, and its import (about 6 ms) would otherwise land
    on a server's first call: no value is a model before ``pydantic.main`` has been imported.
    """
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, main.BaseModel)


def _is_object(value: object) -> bool:
    if isinstance(value, (*CONTENT_TYPES, Message)):  # dataclasses too, but content, not data
        return False
    return (
        isinstance(value, Mapping)
        or _is_model(value)
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    )


def normalize_tool_result(
    value: object, *, output_schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``CallToolResult`` wire shape for a tool's return value.

    Raises:
        TypeError: the value has no content form (e.g. ``bytes``, a nested list).
        pydantic_core.PydanticSerializationError: an object cannot be converted to JSON.
    """
    if _is_model(value):
        value = own_result_value(value)  # the SDK's CallToolResult or content block, if it is one
    if isinstance(value, ToolResult):
        return value.to_wire()
    if output_schema is not None and output_schema.get(WRAPPED_MARKER) is True:
        data = to_json(value)
        text = data if isinstance(data, str) else _json_text(data)
        return {"content": [Text(text).to_wire()], "structuredContent": {"result": data}}
    if _is_object(value):
        data = to_json(value)
        blocks = [Text(_json_text(data)).to_wire()]
        # A root model may dump to a list: structured content must be an object.
        return (
            {"content": blocks, "structuredContent": data}
            if isinstance(data, dict)
            else {"content": blocks}
        )
    return {"content": [block.to_wire() for block in _blocks(value)]}


def _blocks(value: object) -> list[Content]:
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        blocks: list[Content] = []
        for item in value:
            if isinstance(item, list | tuple):
                raise TypeError("a tool's content list cannot nest lists; flatten it")
            blocks.extend(_blocks(item))
        return blocks
    return [_block(value)]


def _block(value: object) -> Content:
    if isinstance(value, CONTENT_TYPES):
        return value
    value = own_result_value(value)
    if isinstance(value, CONTENT_TYPES):
        return value
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(
            "a tool returned bytes, whose meaning is unknown; return Image(data, mime_type), "
            "Audio(data, mime_type) or EmbeddedResource(uri, blob=data, mime_type=...)"
        )
    if isinstance(value, Message):
        raise TypeError("a tool returned a prompt Message; return its content instead")
    return Text(_json_text(to_json(value)))


def normalize_resource_contents(
    value: object, *, uri: str, mime_type: str | None = None
) -> list[dict[str, Any]]:
    """The ``contents`` of a ``ReadResourceResult`` for a resource handler's return value.

    Raises:
        TypeError: the value has no resource-contents form (e.g. a ResourceLink).
    """
    if value is None:
        return []
    if isinstance(value, list | tuple):
        contents: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, list | tuple):
                raise TypeError("a resource's contents cannot nest lists; flatten them")
            contents.extend(normalize_resource_contents(item, uri=uri, mime_type=mime_type))
        return contents
    return [_contents(value, uri=uri, mime_type=mime_type)]


def _guess(uri: str) -> str | None:
    return mimetypes.guess_type(uri)[0]


def _contents(value: object, *, uri: str, mime_type: str | None) -> dict[str, Any]:
    if _is_model(value):
        value = own_result_value(value)  # the SDK's resource contents or content block
    if isinstance(value, EmbeddedResource):
        return value.resource_contents()
    if isinstance(value, str):
        return {"uri": uri, "mimeType": mime_type or _guess(uri) or "text/plain", "text": value}
    if isinstance(value, Text):
        return {
            "uri": uri,
            "mimeType": mime_type or _guess(uri) or "text/plain",
            "text": value.text,
        }
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(value).decode("ascii")
        return {
            "uri": uri,
            "mimeType": mime_type or _guess(uri) or "application/octet-stream",
            "blob": blob,
        }
    if isinstance(value, Image | Audio):
        data = value.to_wire()["data"]
        return {"uri": uri, "mimeType": value.mime_type, "blob": data}
    if isinstance(value, ResourceLink):
        raise TypeError(
            "a resource returned a ResourceLink, which is not contents; return the linked "
            "resource's text or bytes, or an EmbeddedResource"
        )
    return {
        "uri": uri,
        "mimeType": mime_type or "application/json",
        "text": _json_text(to_json(value)),
    }


def normalize_prompt_messages(value: object) -> list[dict[str, Any]]:
    """The ``messages`` of a ``GetPromptResult`` for a prompt handler's return value.

    Raises:
        TypeError: the value has no message form (see the module documentation).
        ValueError: a mapping has a role other than ``user``/``assistant``.
    """
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("user", "assistant"):  # noqa: PLR2004 -- the (role, content) shape being refused
        raise TypeError(
            f"a prompt returned {value!r}; write Message.{value[0]}(...) for a message with a "
            "role (a tuple is read as several messages)"
        )
    if isinstance(value, list | tuple):
        messages: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, list | tuple) and not (
                len(item) == 2 and item[0] in ("user", "assistant")  # noqa: PLR2004 -- same
            ):
                raise TypeError("a prompt's message list cannot nest lists; flatten it")
            messages.extend(normalize_prompt_messages(item))
        return messages
    return [_message(value)]


def _message(value: object) -> dict[str, Any]:
    if _is_model(value):
        value = own_result_value(value)  # the SDK's PromptMessage or content block
    if isinstance(value, Message):
        return value.to_wire()
    if isinstance(value, (str, *CONTENT_TYPES)):
        return Message("user", value).to_wire()
    if isinstance(value, Mapping) and set(value) == {"role", "content"}:
        role, content = value["role"], value["content"]
        if role not in ("user", "assistant"):
            raise ValueError(f"a prompt message's role must be 'user' or 'assistant', got {role!r}")
        if isinstance(content, Mapping):
            if not isinstance(content.get("type"), str):
                raise TypeError(
                    f"a prompt message's content mapping needs a 'type', got {dict(content)!r}"
                )
            return {"role": role, "content": to_json(content)}
        return Message(role, content).to_wire()
    raise TypeError(
        f"a prompt returned {type(value).__name__}; return a Message, a str (a user message), a "
        "{'role', 'content'} mapping, a content value, or a list of these"
    )
