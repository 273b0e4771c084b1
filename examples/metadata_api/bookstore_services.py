"""The services behind the API: a repository, the operation builder, and the one handler service.

All three are built by the dependency-injection container (``bookstore_api.Services``); mcp-core
reaches the handler service through it by its id, ``"api.operations"``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final, final

from bookstore_metadata import FieldSpec, MetadataIndex, OperationKind, ResourceMetadata

from mcp_core import ClientGateway, ToolError
from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Tool,
    ToolAnnotations,
)

OPERATIONS_SERVICE: Final = "api.operations"
"""The container id every operation's handler names."""

MAX_PAGE_SIZE: Final = 100

_DESCRIPTIONS: Final[Mapping[OperationKind, str]] = {
    "list": "List {label}s, a page at a time.",
    "get": "Get one {label} by id.",
    "create": "Create a {label}; returns it with its new id.",
    "update": "Change some fields of a {label}.",
    "delete": "Delete a {label} by id.",
}
_HINTS: Final[Mapping[OperationKind, ToolAnnotations]] = {
    "list": ToolAnnotations(read_only_hint=True),
    "get": ToolAnnotations(read_only_hint=True),
    "create": ToolAnnotations(read_only_hint=False, destructive_hint=False),
    "update": ToolAnnotations(read_only_hint=False, idempotent_hint=True),
    "delete": ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
}
_ID: Final = {"type": "integer", "minimum": 1, "description": "The id."}


@final
class OperationBuilder:
    """Builds operation tools from the metadata: all of them for a list, one for a call.

    An operation is built once and kept (a call builds its own; a list builds the others), the
    way a framework's metadata factory caches what it computed. ``built`` counts the operations
    built since start-up, so anyone can see what a request cost (the ``api_stats`` tool reports
    it).
    """

    __slots__ = ("_built", "_index", "_lock")

    def __init__(self, index: MetadataIndex) -> None:
        self._index = index
        self._lock = threading.Lock()
        self._built: dict[str, Element] = {}

    @property
    def built(self) -> int:
        """How many operations were built since start-up."""
        return len(self._built)

    def everything(self) -> ElementCollection:
        """Every operation of every resource: the full catalogue (what a list needs)."""
        return ElementCollection(
            self._element(resource, kind)
            for resource in self._index
            for kind in resource.operations
        )

    def one(self, ref: ElementRef) -> Element | None:
        """The operation at ``ref`` alone, or None when the metadata declares no such operation."""
        if ref.kind != ElementKind.TOOL:
            return None
        found = self._index.operation(ref.key)
        return self._element(*found) if found is not None else None

    def _element(self, resource: ResourceMetadata, kind: OperationKind) -> Element:
        name = f"{resource.name}_{kind}"
        with self._lock:
            found = self._built.get(name)
            if found is None:
                found = self._built[name] = self._build(name, resource, kind)
            return found

    @staticmethod
    def _build(name: str, resource: ResourceMetadata, kind: OperationKind) -> Element:
        tool = Tool(
            name=name,
            description=_DESCRIPTIONS[kind].format(label=resource.label),
            input_schema=_input_schema(resource, kind),
            annotations=_HINTS[kind],
        )
        return Element(
            definition=tool,
            handler=HandlerRef(OPERATIONS_SERVICE),
            tags=frozenset({f"resource:{resource.name}", f"operation:{kind}"}),
        )


def _input_schema(resource: ResourceMetadata, kind: OperationKind) -> dict[str, Any]:
    if kind == "list":
        properties: dict[str, Any] = {
            "page": {"type": "integer", "minimum": 1, "default": 1},
            "page_size": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": 20},
        }
        return {"type": "object", "properties": properties, "additionalProperties": False}
    if kind in {"get", "delete"}:
        return {
            "type": "object",
            "properties": {"id": _ID},
            "required": ["id"],
            "additionalProperties": False,
        }
    fields = {field.name: _field_schema(field) for field in resource.fields}
    if kind == "create":
        required = [field.name for field in resource.fields if field.required]
        return {
            "type": "object",
            "properties": fields,
            "required": required,
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "properties": {"id": _ID, **fields},
        "required": ["id"],
        "additionalProperties": False,
    }


def _field_schema(field: FieldSpec) -> dict[str, str]:
    return {"type": field.type, "description": field.description}


@final
class Repository:
    """Where the API keeps its data: one table per resource, in memory for the example."""

    __slots__ = ("_lock", "_next_id", "_rows")

    def __init__(self) -> None:
        self._rows: dict[str, dict[int, dict[str, Any]]] = {}
        self._next_id: dict[str, int] = {}
        self._lock = threading.Lock()

    def page(self, resource: str, page: int, size: int) -> list[dict[str, Any]]:
        """One page of a resource's rows, by id."""
        rows = self._rows.get(resource, {})
        start = (page - 1) * size
        return [rows[key] for key in sorted(rows)[start : start + size]]

    def get(self, resource: str, row_id: int) -> dict[str, Any] | None:
        """The row ``row_id`` of ``resource``, or None."""
        return self._rows.get(resource, {}).get(row_id)

    def add(self, resource: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Store a new row; returns it with its id."""
        with self._lock:
            row_id = self._next_id.get(resource, 1)
            self._next_id[resource] = row_id + 1
            row = {"id": row_id, **fields}
            self._rows.setdefault(resource, {})[row_id] = row
            return row

    def change(
        self, resource: str, row_id: int, fields: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """Update some fields of a row; None when there is no such row."""
        with self._lock:
            row = self._rows.get(resource, {}).get(row_id)
            if row is not None:
                row.update(fields)
            return row

    def remove(self, resource: str, row_id: int) -> bool:
        """Delete a row; whether there was one."""
        with self._lock:
            return self._rows.get(resource, {}).pop(row_id, None) is not None


@final
class OperationService:
    """The one handler behind every operation: it learns which from ``gateway.element``.

    Registered once in the container (``"api.operations"``); mcp-core resolves it on the first
    call and keeps it, so 10,000 tools share one object. Arguments arrive validated against the
    operation's input schema.
    """

    __slots__ = ("_index", "_repository")

    def __init__(self, index: MetadataIndex, repository: Repository) -> None:
        self._index = index
        self._repository = repository

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Run the operation the gateway says is being served."""
        operation = gateway.element.ref.key
        found = self._index.operation(operation)
        if found is None:  # a tool named like no operation was pointed at this service
            raise ToolError(f"{operation!r} is not an operation of this API")
        resource, kind = found
        await gateway.log("debug", {"operation": operation, "arguments": dict(arguments)})
        repository = self._repository
        if kind == "list":
            return {
                "items": repository.page(
                    resource.name, arguments.get("page", 1), arguments.get("page_size", 20)
                )
            }
        if kind == "create":
            return repository.add(resource.name, arguments)
        row_id: int = arguments["id"]
        if kind == "get":
            row = repository.get(resource.name, row_id)
        elif kind == "update":
            row = repository.change(
                resource.name, row_id, {k: v for k, v in arguments.items() if k != "id"}
            )
        else:
            row = {"deleted": row_id} if repository.remove(resource.name, row_id) else None
        if row is None:
            raise ToolError(f"there is no {resource.label} with id {row_id}")
        return row
