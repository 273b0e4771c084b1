"""Content values a handler may return, and their MCP 2025-11-25 wire shapes.

Handlers return these (or plain ``str``/``bytes``/JSON-like values, see
:mod:`mcp_core.handlers._results`); ``to_wire()`` renders the exact JSON shape of the
specification's ``ContentBlock`` members. Values are frozen and validated on construction, so a
malformed result fails where it is built rather than in a client far away.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, TypeAlias, final

from mcp_core.elements import Annotations, FrozenDict, Icon, freeze
from mcp_core.elements._definitions import own_value
from mcp_core.elements._json import thaw

__all__ = [
    "Audio",
    "Content",
    "EmbeddedResource",
    "Image",
    "Message",
    "ResourceLink",
    "Role",
    "Text",
    "ToolResult",
]

Role: TypeAlias = Literal["user", "assistant"]
_MIME_TYPE = re.compile(r"[\w!#$&\-^.+]+/[\w!#$&\-^.+]+(\s*;.*)?")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def _check_mime(owner: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not _MIME_TYPE.fullmatch(value):
        raise ValueError(f"{owner}: mime_type {value!r} is not a MIME type like 'image/png'")


def _check_uri(owner: str, value: object) -> None:
    if not isinstance(value, str) or not _URI_SCHEME.match(value):
        raise ValueError(f"{owner}: uri {value!r} has no scheme; write e.g. 'file:///a.txt'")


def _check_data(owner: str, field_name: str, value: object) -> None:
    if isinstance(value, bytes):
        return
    if not isinstance(value, str):
        raise TypeError(
            f"{owner}: {field_name} must be bytes or a base64 string, got {type(value).__name__}"
        )
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise ValueError(
            f"{owner}: {field_name} is a str but not valid base64; pass the raw bytes instead"
        ) from exc


def _b64(value: bytes | str) -> str:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


def _plain(value: Mapping[str, Any]) -> Any:
    """A mutable JSON copy of a mapping frozen on construction."""
    return thaw(value if isinstance(value, FrozenDict) else freeze(value))


def _check_common(owner: str, obj: Any) -> None:
    if obj.annotations is not None and not isinstance(obj.annotations, Annotations):
        # The SDK's mcp.types.Annotations (or a wire mapping) is read once into mcp-core's.
        annotations = own_value(Annotations, obj.annotations, parameter=f"{owner}: annotations")
        object.__setattr__(obj, "annotations", annotations)
    if obj.meta is not None:
        object.__setattr__(obj, "meta", freeze(obj.meta, path="meta"))


def _finish(obj: Any, wire: dict[str, Any]) -> dict[str, Any]:
    if obj.annotations is not None:
        wire["annotations"] = obj.annotations.to_wire()
    if obj.meta is not None:
        wire["_meta"] = _plain(obj.meta)
    return wire


@final
@dataclass(frozen=True, slots=True)
class Text:
    """Text content: ``{"type": "text", "text": ...}``."""

    text: str
    _: KW_ONLY
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Text: text must be a str, got {type(self.text).__name__}")
        _check_common("Text", self)

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``TextContent`` shape."""
        return _finish(self, {"type": "text", "text": self.text})


@dataclass(frozen=True, slots=True)
class _Media:
    """What Image and Audio share: base64 data of a MIME type, rendered as ``{"type": _TYPE, ...}``."""

    _TYPE: ClassVar[str]

    data: bytes | str
    mime_type: str
    _: KW_ONLY
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_data(owner, "data", self.data)
        _check_mime(owner, self.mime_type, optional=False)
        _check_common(owner, self)

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``ImageContent`` / ``AudioContent`` shape."""
        return _finish(
            self, {"type": self._TYPE, "data": _b64(self.data), "mimeType": self.mime_type}
        )


@final
@dataclass(frozen=True, slots=True)
class Image(_Media):
    """Image content; ``data`` is raw bytes or an already base64-encoded string."""

    _TYPE: ClassVar[str] = "image"


@final
@dataclass(frozen=True, slots=True)
class Audio(_Media):
    """Audio content; ``data`` is raw bytes or an already base64-encoded string."""

    _TYPE: ClassVar[str] = "audio"


@final
@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource's contents carried inline: exactly one of ``text`` or ``blob`` (bytes or base64)."""

    uri: str
    _: KW_ONLY
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | str | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_uri("EmbeddedResource", self.uri)
        _check_mime("EmbeddedResource", self.mime_type, optional=True)
        if (self.text is None) == (self.blob is None):
            raise ValueError("EmbeddedResource: give exactly one of text= or blob=")
        if self.text is not None and not isinstance(self.text, str):
            raise TypeError(f"EmbeddedResource: text must be a str, got {type(self.text).__name__}")
        if self.blob is not None:
            _check_data("EmbeddedResource", "blob", self.blob)
        _check_common("EmbeddedResource", self)

    def resource_contents(self) -> dict[str, Any]:
        """The inner ``TextResourceContents`` / ``BlobResourceContents`` shape."""
        contents: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            contents["mimeType"] = self.mime_type
        if self.text is not None:
            contents["text"] = self.text
        else:
            assert self.blob is not None  # noqa: S101 -- exactly one is set, checked on construction
            contents["blob"] = _b64(self.blob)
        if self.meta is not None:
            contents["_meta"] = _plain(self.meta)
        return contents

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``EmbeddedResource`` content shape."""
        wire: dict[str, Any] = {"type": "resource", "resource": self.resource_contents()}
        if self.annotations is not None:
            wire["annotations"] = self.annotations.to_wire()
        return wire


@final
@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the client may read later: ``{"type": "resource_link", "uri", "name"}``."""

    uri: str
    name: str
    _: KW_ONLY
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: Sequence[Icon] | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_uri("ResourceLink", self.uri)
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ResourceLink: name must be a non-empty string, got {self.name!r}")
        _check_mime("ResourceLink", self.mime_type, optional=True)
        if self.size is not None and (
            isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 0
        ):
            raise ValueError(
                f"ResourceLink: size must be a non-negative integer, got {self.size!r}"
            )
        if self.icons is not None:
            if not all(isinstance(icon, Icon) for icon in self.icons):
                raise TypeError("ResourceLink: icons must be Icon values")
            object.__setattr__(self, "icons", tuple(self.icons))
        _check_common("ResourceLink", self)

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``ResourceLink`` shape."""
        wire: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional = {
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
            "size": self.size,
        }
        wire.update({key: value for key, value in optional.items() if value is not None})
        if self.icons is not None:
            wire["icons"] = [icon.to_wire() for icon in self.icons]
        return _finish(self, wire)


Content: TypeAlias = Text | Image | Audio | EmbeddedResource | ResourceLink
"""The closed union of content values (the specification's ``ContentBlock``)."""

CONTENT_TYPES = (Text, Image, Audio, EmbeddedResource, ResourceLink)


@final
@dataclass(frozen=True, slots=True)
class Message:
    """One prompt message; a ``str`` content is shorthand for ``Text(str)``.

    ``Message.user(...)`` and ``Message.assistant(...)`` are the short spellings.
    """

    role: Role
    content: Content | str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"Message: role must be 'user' or 'assistant', got {self.role!r}")
        if isinstance(self.content, str):
            object.__setattr__(self, "content", Text(self.content))
        elif not isinstance(self.content, CONTENT_TYPES):
            raise TypeError(
                f"Message: content must be a str or a content value (Text, Image, Audio, "
                f"EmbeddedResource, ResourceLink), got {type(self.content).__name__}"
            )

    @classmethod
    def user(cls, content: Content | str) -> Message:
        """A message from the user."""
        return cls("user", content)

    @classmethod
    def assistant(cls, content: Content | str) -> Message:
        """A message from the assistant."""
        return cls("assistant", content)

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``PromptMessage`` shape."""
        content = self.content
        assert not isinstance(content, str)  # noqa: S101 -- normalised to Text on construction
        return {"role": self.role, "content": content.to_wire()}


@final
@dataclass(frozen=True, slots=True)
class ToolResult:
    """A complete tool result, passed through as is: content, structured content, error flag.

    Return it from a tool to control every field of ``CallToolResult`` (e.g. an error result
    without raising, or structured content alongside a custom text rendering).
    """

    content: Content | str | Sequence[Content | str] = ()
    _: KW_ONLY
    structured: Mapping[str, Any] | None = None
    is_error: bool = False
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        content = self.content
        items: list[object] = (
            [content] if isinstance(content, (str, *CONTENT_TYPES)) else list(content)
        )
        blocks: list[Content] = []
        for item in items:
            if isinstance(item, str):
                blocks.append(Text(item))
            elif isinstance(item, CONTENT_TYPES):
                blocks.append(item)
            else:
                raise TypeError(
                    f"ToolResult: content items must be str or content values, got {type(item).__name__}"
                )
        object.__setattr__(self, "content", tuple(blocks))
        if self.structured is not None:
            if not isinstance(self.structured, Mapping):
                raise TypeError("ToolResult: structured must be a JSON object (a mapping)")
            object.__setattr__(self, "structured", freeze(self.structured, path="structured"))
        if not isinstance(self.is_error, bool):
            raise TypeError(f"ToolResult: is_error must be a bool, got {self.is_error!r}")
        if self.meta is not None:
            object.__setattr__(self, "meta", freeze(self.meta, path="meta"))

    @property
    def blocks(self) -> tuple[Content, ...]:
        """The content values, normalised to a tuple."""
        content = self.content
        assert isinstance(content, tuple)  # noqa: S101 -- normalised on construction
        return content

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` shape."""
        wire: dict[str, Any] = {"content": [block.to_wire() for block in self.blocks]}
        if self.structured is not None:
            wire["structuredContent"] = _plain(self.structured)
        if self.is_error:
            wire["isError"] = True
        if self.meta is not None:
            wire["_meta"] = _plain(self.meta)
        return wire
