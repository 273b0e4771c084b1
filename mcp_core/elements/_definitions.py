"""Element definitions: frozen, validated values with every field of the MCP 2025-11-25 schema.

Construction validates and raises :class:`~mcp_core.errors.InvalidElementError` naming the field
and the fix. ``to_wire()`` returns the MCP JSON shape (camelCase, absent fields omitted) as a fresh
mutable dict; ``from_wire()`` accepts it back and rejects keys it does not know, so a round trip
is lossless rather than silently dropping what a newer schema added.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar, final

from mcp_core._refs import ElementKind, ElementRef
from mcp_core.elements._json import FrozenDict, freeze, shared_plain, thaw
from mcp_core.errors import InvalidElementError

if TYPE_CHECKING:
    # Imported by the first template parsed: an app with no resource template never needs it.
    from mcp_core.elements._uritemplate import UriTemplate

__all__ = [
    "Annotations",
    "Definition",
    "Icon",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "WireModel",
    "admission_verdict",
    "own_value",
    "record_admission",
    "shared_wire",
]

# The 2025-11-25 specification's character set for tool names (SEP-986): clients may refuse others.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_MIME_TYPE = re.compile(r"[\w!#$&\-^.+]+/[\w!#$&\-^.+]+(\s*;.*)?")
_Role = Literal["user", "assistant"]
_ROLES = ("user", "assistant")


def _fail(owner: str, field_name: str, message: str) -> InvalidElementError:
    return InvalidElementError(f"{owner}: {field_name} {message}", field=field_name)


_V = TypeVar("_V", "Annotations", "Icon", "ToolAnnotations")


class WireModel(Protocol):
    """A model with a wire form, such as the official SDK's ``mcp.types`` models (pydantic)."""

    def model_dump(
        self, *, mode: str = ..., by_alias: bool = ..., exclude_none: bool = ...
    ) -> dict[str, Any]:
        """The model as a dict (``mode="json", by_alias=True``: its wire form)."""
        ...


def own_value(cls: type[_V], value: object, *, parameter: str) -> _V:
    """``value`` as mcp-core's ``cls``: as is, or read from its wire form.

    The wire form is a mapping, or a model's dump: the official SDK's ``mcp.types.ToolAnnotations``,
    ``Icon`` or ``Annotations`` (dumped once).

    Raises:
        TypeError: ``value`` is neither, or its wire form is not a valid ``cls`` (the message names
            ``parameter`` and what to pass instead).
    """
    if isinstance(value, cls):
        return value
    wire: object = value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        wire = dump(by_alias=True, mode="json", exclude_none=True)
    if not isinstance(wire, Mapping):
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise TypeError(
            f"{parameter} must be {article} {cls.__name__} (mcp-core's, the SDK's mcp.types one, "
            f"or its wire mapping), got {type(value).__name__}"
        )
    try:
        return cls.from_wire(wire)
    except InvalidElementError as exc:
        raise TypeError(f"{parameter}: {exc}") from exc


def _check_text(owner: str, field_name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise _fail(owner, field_name, f"must be a string, got {type(value).__name__}")


def _check_name(owner: str, value: object, *, spaces: bool = False) -> None:
    """A name: at most 128 printable characters, without spaces unless ``spaces``.

    A resource's name is only a label (a resource is known by its URI), and servers in the wild
    write it as a title ("Business Insights Memo"): spaces are allowed there.
    """
    if not isinstance(value, str) or not value.strip():
        raise _fail(owner, "name", f"must be a non-empty string, got {value!r}")
    if len(value) > 128 or any(  # noqa: PLR2004 -- the spec's limit
        (ch.isspace() and not (spaces and ch == " ")) or not ch.isprintable() for ch in value
    ):
        without = "" if spaces else " without spaces"
        raise _fail(owner, "name", f"{value!r} must be at most 128 printable characters{without}")


def _frozen_object(owner: str, field_name: str, value: object) -> FrozenDict:
    if not isinstance(value, Mapping):
        raise _fail(
            owner, field_name, f"must be a JSON object (a mapping), got {type(value).__name__}"
        )
    try:
        frozen = freeze(value, path=field_name)
    except (TypeError, ValueError) as exc:
        raise _fail(owner, field_name, f"is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise _fail(owner, field_name, "is nested too deeply to be held; flatten it") from exc
    assert isinstance(frozen, FrozenDict)  # noqa: S101 -- a Mapping always freezes to a FrozenDict
    return frozen


def _check_object_schema(owner: str, field_name: str, schema: FrozenDict) -> None:
    if schema.get("type") != "object":  # an equal string: "object" is interned, not the point
        raise _fail(
            owner,
            field_name,
            f'must be a JSON Schema whose root has "type": "object" (MCP requires tool '
            f"arguments and structured results to be objects), got type {schema.get('type')!r}; "
            'wrap a scalar as {"type": "object", "properties": {"value": ...}}',
        )


def _check_mime(owner: str, value: str | None) -> None:
    if value is not None and (not isinstance(value, str) or not _MIME_TYPE.fullmatch(value)):
        raise _fail(owner, "mime_type", f"{value!r} is not a MIME type like 'text/plain'")


def _set(obj: object, name: str, value: object) -> None:
    # Frozen dataclasses normalise their inputs (lists to tuples, dicts to FrozenDict) once, here.
    object.__setattr__(obj, name, value)


def _put(wire: dict[str, Any], key: str, value: object) -> None:
    if value is not None:
        wire[key] = value


def _unknown_keys(owner: str, data: Mapping[str, Any], known: frozenset[str]) -> None:
    if not isinstance(data, Mapping):
        raise InvalidElementError(
            f"{owner}: wire form must be a JSON object, got {type(data).__name__}"
        )
    extra = sorted(set(data) - known)
    if extra:
        raise InvalidElementError(
            f"{owner}: unknown wire field(s) {extra}; known fields are {sorted(known)}"
        )


_W = TypeVar("_W")


def _wire_list(
    owner: str, data: Mapping[str, Any], key: str, convert: Callable[[Any], _W]
) -> tuple[_W, ...] | None:
    items = data.get(key)
    if items is None:
        return None
    if not isinstance(items, list | tuple):
        raise InvalidElementError(f"{owner}: wire field {key!r} must be a list")
    return tuple(convert(item) for item in items)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Icon:
    """An icon a client may display (``src`` is a URL or a data: URI)."""

    src: str
    mime_type: str | None = None
    sizes: Sequence[str] | None = None
    theme: Literal["dark", "light"] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.src, str) or not self.src:
            raise _fail("Icon", "src", f"must be a non-empty URI, got {self.src!r}")
        _check_mime("Icon", self.mime_type)
        if self.sizes is not None:
            if isinstance(self.sizes, str) or not all(isinstance(s, str) for s in self.sizes):
                raise _fail("Icon", "sizes", "must be a list of strings such as ['48x48', 'any']")
            _set(self, "sizes", tuple(self.sizes))
        if self.theme not in (None, "dark", "light"):
            raise _fail("Icon", "theme", f"must be 'dark' or 'light', got {self.theme!r}")

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        wire: dict[str, Any] = {"src": self.src}
        _put(wire, "mimeType", self.mime_type)
        _put(wire, "sizes", list(self.sizes) if self.sizes is not None else None)
        _put(wire, "theme", self.theme)
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Icon:
        """Build from the MCP JSON shape."""
        _unknown_keys("Icon", data, frozenset({"src", "mimeType", "sizes", "theme"}))
        return cls(
            src=data.get("src"),  # type: ignore[arg-type]  # validated in __post_init__
            mime_type=data.get("mimeType"),
            sizes=data.get("sizes"),
            theme=data.get("theme"),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Annotations:
    """Hints about a resource or content item: audience, priority (0..1), last modification."""

    audience: Sequence[_Role] | None = None
    priority: float | None = None
    last_modified: str | None = None

    def __post_init__(self) -> None:
        if self.audience is not None:
            if isinstance(self.audience, str) or any(r not in _ROLES for r in self.audience):
                raise _fail(
                    "Annotations",
                    "audience",
                    f"must be a list of 'user'/'assistant', got {self.audience!r}",
                )
            _set(self, "audience", tuple(self.audience))
        if self.priority is not None and (
            isinstance(self.priority, bool)
            or not isinstance(self.priority, int | float)
            or not 0.0 <= self.priority <= 1.0
        ):
            raise _fail(
                "Annotations", "priority", f"must be a number in [0, 1], got {self.priority!r}"
            )
        if self.last_modified is not None:
            try:
                datetime.fromisoformat(self.last_modified)
            except (TypeError, ValueError) as exc:
                raise _fail(
                    "Annotations",
                    "last_modified",
                    f"must be an ISO 8601 timestamp like '2025-01-12T15:00:58Z', got {self.last_modified!r}",
                ) from exc

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        wire: dict[str, Any] = {}
        _put(wire, "audience", list(self.audience) if self.audience is not None else None)
        _put(wire, "priority", self.priority)
        _put(wire, "lastModified", self.last_modified)
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Annotations:
        """Build from the MCP JSON shape."""
        _unknown_keys("Annotations", data, frozenset({"audience", "priority", "lastModified"}))
        return cls(
            audience=data.get("audience"),
            priority=data.get("priority"),
            last_modified=data.get("lastModified"),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """Behaviour hints for a tool. Hints, not guarantees: never trust them for security."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    _WIRE = (
        ("read_only_hint", "readOnlyHint"),
        ("destructive_hint", "destructiveHint"),
        ("idempotent_hint", "idempotentHint"),
        ("open_world_hint", "openWorldHint"),
    )

    def __post_init__(self) -> None:
        _check_text("ToolAnnotations", "title", self.title)
        for attr, _ in self._WIRE:
            value = getattr(self, attr)
            if value is not None and not isinstance(value, bool):
                raise _fail("ToolAnnotations", attr, f"must be true, false or None, got {value!r}")

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        wire: dict[str, Any] = {}
        _put(wire, "title", self.title)
        for attr, key in self._WIRE:
            _put(wire, key, getattr(self, attr))
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ToolAnnotations:
        """Build from the MCP JSON shape."""
        _unknown_keys("ToolAnnotations", data, frozenset({"title"} | {k for _, k in cls._WIRE}))
        return cls(title=data.get("title"), **{a: data.get(k) for a, k in cls._WIRE})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecution:
    """Execution properties of a tool (2025-11-25): whether it supports task-augmented calls."""

    task_support: Literal["forbidden", "optional", "required"] | None = None

    def __post_init__(self) -> None:
        if self.task_support not in (None, "forbidden", "optional", "required"):
            raise _fail(
                "ToolExecution",
                "task_support",
                f"must be 'forbidden', 'optional' or 'required', got {self.task_support!r}",
            )

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        wire: dict[str, Any] = {}
        _put(wire, "taskSupport", self.task_support)
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ToolExecution:
        """Build from the MCP JSON shape."""
        _unknown_keys("ToolExecution", data, frozenset({"taskSupport"}))
        return cls(task_support=data.get("taskSupport"))


def _own(owner: str, field_name: str, cls: type[_V], value: object) -> _V:
    """``value`` as ``cls`` (the SDK's model or a wire mapping read once), or the field's error."""
    try:
        return own_value(cls, value, parameter=field_name)
    except TypeError:
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise _fail(
            owner,
            field_name,
            f"must be {article} {cls.__name__} value (mcp-core's, the SDK's, or its wire mapping)",
        ) from None


def _common_post_init(owner: str, obj: Any) -> None:
    _check_text(owner, "title", obj.title)
    _check_text(owner, "description", obj.description)
    if obj.icons is not None:
        if isinstance(obj.icons, str | bytes | Mapping) or hasattr(obj.icons, "model_dump"):
            raise _fail(owner, "icons", "must be a sequence of Icon values")
        _set(obj, "icons", tuple(_own(owner, "icons", Icon, icon) for icon in obj.icons))
    if obj.meta is not None:
        _set(obj, "meta", _frozen_object(owner, "meta", obj.meta))


def _common_wire(obj: Any, wire: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    _put(wire, "title", obj.title)
    _put(wire, "description", obj.description)
    _put(wire, "icons", [icon.to_wire() for icon in obj.icons] if obj.icons is not None else None)
    _put(wire, "_meta", plain(obj.meta) if obj.meta is not None else None)
    return wire


# How a JSON document of a definition goes into its wire form: a fresh copy (thaw), or the
# document's shared plain form (shared_plain).
_Plain: TypeAlias = Callable[[object], Any]


def shared_wire(definition: Definition) -> dict[str, Any]:
    """``definition``'s wire form, built once and shared by everyone who asks for it.

    Lists are served from it: a catalogue's definitions are turned into JSON once each, and
    thousands of tools with one schema hold one plain copy of it (:func:`shared_plain`) rather
    than one each. Read-only: changing it would change what every list shows. Use
    ``to_wire()`` for a copy of one's own.
    """
    wire = definition._wire  # noqa: SLF001 -- the definitions' own cache
    if wire is None:
        wire = definition._wire_form(shared_plain)  # noqa: SLF001 -- same
        _set(definition, "_wire", wire)
    return wire


def admission_verdict(definition: Definition) -> object:
    """What admission recorded on ``definition`` (None: nothing yet).

    Admission (``mcp_core.handlers``) judges a definition once per set of limits and keeps
    the verdict on the definition itself, as the wire form is kept: a table beside the
    definitions would hold them alive after their catalogue let them go. The value is the
    limits the definition was admitted under, or a pair of those limits and the problems found.
    Definitions are immutable, so the verdict stays true; a copy made with another field
    (``dataclasses.replace``) starts without one.
    """
    return definition._admitted  # noqa: SLF001 -- the definitions' own record


def record_admission(definition: Definition, verdict: object) -> None:
    """Keep admission's ``verdict`` on ``definition`` (see :func:`admission_verdict`)."""
    _set(definition, "_admitted", verdict)


def _common_from_wire(owner: str, data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "title": data.get("title"),
        "description": data.get("description"),
        "icons": _wire_list(owner, data, "icons", Icon.from_wire),
        "meta": data.get("_meta"),
    }


_COMMON_KEYS = frozenset({"title", "description", "icons", "_meta"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool definition: a function the model can call with arguments matching ``input_schema``."""

    name: str
    input_schema: Mapping[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None
    icons: Sequence[Icon] | None = None
    meta: Mapping[str, Any] | None = None
    _ref: ElementRef = field(init=False, repr=False, compare=False, hash=False)
    # The shared wire form (see shared_wire), built on first use.
    _wire: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    # Admission's verdict on this definition (see admission_verdict).
    _admitted: object = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str):
            raise _fail("Tool", "name", f"must be a non-empty string, got {name!r}")
        # The spec's character set already excludes spaces and control characters.
        if not _TOOL_NAME.fullmatch(name):
            raise _fail(
                "Tool",
                "name",
                f"{name!r} may only use letters, digits, '_', '-' and '.' (1 to 128 "
                "characters), as the MCP 2025-11-25 specification requires",
            )
        owner = f"Tool {name!r}"
        # A schema that is frozen already (derived ones are, shared by thousands of tools) is
        # taken as it is; anything else is frozen here.
        schema = self.input_schema
        if type(schema) is not FrozenDict:
            schema = _frozen_object(owner, "input_schema", schema)
            _set(self, "input_schema", schema)
        _check_object_schema(owner, "input_schema", schema)
        output = self.output_schema
        if output is not None:
            if type(output) is not FrozenDict:
                output = _frozen_object(owner, "output_schema", output)
                _set(self, "output_schema", output)
            _check_object_schema(owner, "output_schema", output)
        if self.annotations is not None and not isinstance(self.annotations, ToolAnnotations):
            _set(self, "annotations", _own(owner, "annotations", ToolAnnotations, self.annotations))
        if self.execution is not None and not isinstance(self.execution, ToolExecution):
            raise _fail(owner, "execution", "must be a ToolExecution value")
        _common_post_init(owner, self)
        # Refs are asked for on every lookup and merge; build the value once.
        _set(self, "_ref", ElementRef(ElementKind.TOOL, name))

    @property
    def ref(self) -> ElementRef:
        """``ElementRef.tool(name)``."""
        return self._ref

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        return self._wire_form(thaw)

    def _wire_form(self, plain: _Plain) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name, "inputSchema": plain(self.input_schema)}
        _put(wire, "outputSchema", plain(self.output_schema))
        _put(wire, "annotations", self.annotations.to_wire() if self.annotations else None)
        _put(wire, "execution", self.execution.to_wire() if self.execution else None)
        return _common_wire(self, wire, plain)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Tool:
        """Build from the MCP JSON shape."""
        keys = _COMMON_KEYS | {"name", "inputSchema", "outputSchema", "annotations", "execution"}
        _unknown_keys("Tool", data, keys)
        annotations = data.get("annotations")
        execution = data.get("execution")
        return cls(
            name=data.get("name"),  # type: ignore[arg-type]  # validated in __post_init__
            input_schema=data.get("inputSchema"),  # type: ignore[arg-type]  # same
            output_schema=data.get("outputSchema"),
            annotations=ToolAnnotations.from_wire(annotations) if annotations is not None else None,
            execution=ToolExecution.from_wire(execution) if execution is not None else None,
            **_common_from_wire("Tool", data),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """A resource definition: content a client can read at a fixed ``uri``."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: Sequence[Icon] | None = None
    meta: Mapping[str, Any] | None = None
    _ref: ElementRef = field(init=False, repr=False, compare=False, hash=False)
    # The shared wire form (see shared_wire), built on first use.
    _wire: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    # Admission's verdict on this definition (see admission_verdict).
    _admitted: object = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not _URI_SCHEME.match(self.uri):
            raise _fail(
                "Resource",
                "uri",
                f"{self.uri!r} has no scheme; write an absolute URI such as 'file:///notes.txt' "
                "or 'app://config'",
            )
        owner = f"Resource {self.uri!r}"
        _check_name(owner, self.name, spaces=True)
        _check_mime(owner, self.mime_type)
        if self.size is not None and (
            isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 0
        ):
            raise _fail(owner, "size", f"must be a non-negative integer (bytes), got {self.size!r}")
        if self.annotations is not None and not isinstance(self.annotations, Annotations):
            _set(self, "annotations", _own(owner, "annotations", Annotations, self.annotations))
        _common_post_init(owner, self)
        # Refs are asked for on every lookup and merge; build the value once.
        _set(self, "_ref", ElementRef(ElementKind.RESOURCE, self.uri))

    @property
    def ref(self) -> ElementRef:
        """``ElementRef.resource(uri)``."""
        return self._ref

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        return self._wire_form(thaw)

    def _wire_form(self, plain: _Plain) -> dict[str, Any]:
        wire: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _put(wire, "mimeType", self.mime_type)
        _put(wire, "size", self.size)
        _put(wire, "annotations", self.annotations.to_wire() if self.annotations else None)
        return _common_wire(self, wire, plain)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Resource:
        """Build from the MCP JSON shape."""
        _unknown_keys(
            "Resource", data, _COMMON_KEYS | {"uri", "name", "mimeType", "size", "annotations"}
        )
        annotations = data.get("annotations")
        return cls(
            uri=data.get("uri"),  # type: ignore[arg-type]  # validated in __post_init__
            name=data.get("name"),  # type: ignore[arg-type]  # same
            mime_type=data.get("mimeType"),
            size=data.get("size"),
            annotations=Annotations.from_wire(annotations) if annotations is not None else None,
            **_common_from_wire("Resource", data),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceTemplate:
    """A family of resources addressed by an RFC 6570 ``uri_template``."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: Sequence[Icon] | None = None
    meta: Mapping[str, Any] | None = None
    template: UriTemplate = field(init=False, repr=False, compare=False, hash=False)
    _ref: ElementRef = field(init=False, repr=False, compare=False, hash=False)
    # The shared wire form (see shared_wire), built on first use.
    _wire: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    # Admission's verdict on this definition (see admission_verdict).
    _admitted: object = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.uri_template, str):
            raise _fail(
                "ResourceTemplate", "uri_template", f"must be a string, got {self.uri_template!r}"
            )
        from mcp_core.elements._uritemplate import UriTemplate  # noqa: PLC0415 -- see the imports

        _set(self, "template", UriTemplate.parse(self.uri_template))
        if not _URI_SCHEME.match(self.uri_template):
            raise _fail(
                "ResourceTemplate",
                "uri_template",
                f"{self.uri_template!r} has no scheme; start it like 'app://items/{{id}}'",
            )
        owner = f"ResourceTemplate {self.uri_template!r}"
        _check_name(owner, self.name, spaces=True)
        _check_mime(owner, self.mime_type)
        if self.annotations is not None and not isinstance(self.annotations, Annotations):
            _set(self, "annotations", _own(owner, "annotations", Annotations, self.annotations))
        _common_post_init(owner, self)
        # Refs are asked for on every lookup and merge; build the value once.
        _set(self, "_ref", ElementRef(ElementKind.RESOURCE_TEMPLATE, self.uri_template))

    @property
    def ref(self) -> ElementRef:
        """``ElementRef.resource_template(uri_template)``."""
        return self._ref

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        return self._wire_form(thaw)

    def _wire_form(self, plain: _Plain) -> dict[str, Any]:
        wire: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _put(wire, "mimeType", self.mime_type)
        _put(wire, "annotations", self.annotations.to_wire() if self.annotations else None)
        return _common_wire(self, wire, plain)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ResourceTemplate:
        """Build from the MCP JSON shape."""
        _unknown_keys(
            "ResourceTemplate",
            data,
            _COMMON_KEYS | {"uriTemplate", "name", "mimeType", "annotations"},
        )
        annotations = data.get("annotations")
        return cls(
            uri_template=data.get("uriTemplate"),  # type: ignore[arg-type]  # validated in __post_init__
            name=data.get("name"),  # type: ignore[arg-type]  # same
            mime_type=data.get("mimeType"),
            annotations=Annotations.from_wire(annotations) if annotations is not None else None,
            **_common_from_wire("ResourceTemplate", data),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PromptArgument:
    """One argument a prompt accepts."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None

    def __post_init__(self) -> None:
        _check_name("PromptArgument", self.name)
        _check_text("PromptArgument", "title", self.title)
        _check_text("PromptArgument", "description", self.description)
        if self.required is not None and not isinstance(self.required, bool):
            raise _fail(
                "PromptArgument", "required", f"must be true, false or None, got {self.required!r}"
            )

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        wire: dict[str, Any] = {"name": self.name}
        _put(wire, "title", self.title)
        _put(wire, "description", self.description)
        _put(wire, "required", self.required)
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> PromptArgument:
        """Build from the MCP JSON shape."""
        _unknown_keys(
            "PromptArgument", data, frozenset({"name", "title", "description", "required"})
        )
        return cls(
            name=data.get("name"),  # type: ignore[arg-type]  # validated in __post_init__
            title=data.get("title"),
            description=data.get("description"),
            required=data.get("required"),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """A prompt definition: a message template the client can get with ``arguments``."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: Sequence[PromptArgument] | None = None
    icons: Sequence[Icon] | None = None
    meta: Mapping[str, Any] | None = None
    _ref: ElementRef = field(init=False, repr=False, compare=False, hash=False)
    # The shared wire form (see shared_wire), built on first use.
    _wire: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    # Admission's verdict on this definition (see admission_verdict).
    _admitted: object = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_name("Prompt", self.name)
        owner = f"Prompt {self.name!r}"
        if self.arguments is not None:
            if not all(isinstance(arg, PromptArgument) for arg in self.arguments):
                raise _fail(owner, "arguments", "must be a sequence of PromptArgument values")
            names = [arg.name for arg in self.arguments]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise _fail(
                    owner, "arguments", f"declare {duplicates} more than once; names must be unique"
                )
            _set(self, "arguments", tuple(self.arguments))
        _common_post_init(owner, self)
        # Refs are asked for on every lookup and merge; build the value once.
        _set(self, "_ref", ElementRef(ElementKind.PROMPT, self.name))

    @property
    def ref(self) -> ElementRef:
        """``ElementRef.prompt(name)``."""
        return self._ref

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape."""
        return self._wire_form(thaw)

    def _wire_form(self, plain: _Plain) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        _put(
            wire,
            "arguments",
            [a.to_wire() for a in self.arguments] if self.arguments is not None else None,
        )
        return _common_wire(self, wire, plain)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Prompt:
        """Build from the MCP JSON shape."""
        _unknown_keys("Prompt", data, _COMMON_KEYS | {"name", "arguments"})
        return cls(
            name=data.get("name"),  # type: ignore[arg-type]  # validated in __post_init__
            arguments=_wire_list("Prompt", data, "arguments", PromptArgument.from_wire),
            **_common_from_wire("Prompt", data),
        )


Definition: TypeAlias = Tool | Resource | ResourceTemplate | Prompt
"""The closed union of definitions: ``match`` on it with ``assert_never`` is exhaustive."""

_WIRE_TYPES: dict[ElementKind, type[Definition]] = {
    ElementKind.TOOL: Tool,
    ElementKind.RESOURCE: Resource,
    ElementKind.RESOURCE_TEMPLATE: ResourceTemplate,
    ElementKind.PROMPT: Prompt,
}


def definition_from_wire(kind: ElementKind, data: Mapping[str, Any]) -> Definition:
    """Build the definition of ``kind`` from its MCP JSON shape."""
    return _WIRE_TYPES[kind].from_wire(data)


def kind_of(definition: Definition) -> ElementKind:
    """The kind of a definition."""
    return definition.ref.kind
