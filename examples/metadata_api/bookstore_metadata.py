"""The model metadata an API framework already has: resources, their fields, their operations.

API Platform reads this from attributes on entity classes; here it is plain values. Three real
resources (books, authors, reviews) and as many generated ledger resources as it takes to reach
the size of a large deployment: ``API_RESOURCES`` resources (default 2,000) with five operations
each — 10,000 tools. Nothing here builds a tool: indexing the metadata is cheap, building an
operation (its JSON schema, its definition) is the cost a call should not pay for all of them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal, final, get_args

FieldType = Literal["string", "integer", "number", "boolean"]
OperationKind = Literal["list", "get", "create", "update", "delete"]
OPERATION_KINDS: Final[tuple[OperationKind, ...]] = get_args(OperationKind)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FieldSpec:
    """One field of a resource, as its model declares it."""

    name: str
    type: FieldType
    description: str
    required: bool = True


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetadata:
    """One API resource: its name (singular, snake_case), its fields, its operations."""

    name: str
    label: str
    fields: tuple[FieldSpec, ...]
    operations: tuple[OperationKind, ...] = OPERATION_KINDS

    def operation_names(self) -> Iterator[str]:
        """The tool names of this resource's operations: ``book_get``, ``book_list``..."""
        for kind in self.operations:
            yield f"{self.name}_{kind}"


@final
class MetadataIndex:
    """Resources by name, and the way back from an operation name to its resource and kind."""

    __slots__ = ("_resources",)

    def __init__(self, resources: Mapping[str, ResourceMetadata]) -> None:
        self._resources = dict(resources)

    def __len__(self) -> int:
        return len(self._resources)

    def __iter__(self) -> Iterator[ResourceMetadata]:
        return iter(self._resources.values())

    def fingerprint(self) -> str:
        """A digest of everything the operations are built from: it changes when the metadata does."""
        digest = hashlib.sha256()
        for resource in self:
            digest.update(repr(resource).encode())
        return digest.hexdigest()[:16]

    @property
    def operation_count(self) -> int:
        """How many operations the metadata declares (what a full catalogue holds)."""
        return sum(len(resource.operations) for resource in self)

    def resource(self, name: str) -> ResourceMetadata | None:
        """The resource called ``name``, or None."""
        return self._resources.get(name)

    def operation(self, name: str) -> tuple[ResourceMetadata, OperationKind] | None:
        """The resource and kind of the operation called ``name`` (``"book_get"``), or None."""
        resource_name, _, kind = name.rpartition("_")
        resource = self._resources.get(resource_name)
        if resource is None:
            return None
        for declared in resource.operations:
            if declared == kind:
                return resource, declared
        return None


BOOKSTORE: Final = (
    ResourceMetadata(
        name="book",
        label="book",
        fields=(
            FieldSpec(name="title", type="string", description="The title."),
            FieldSpec(name="author_id", type="integer", description="The author's id."),
            FieldSpec(name="year", type="integer", description="Year of publication."),
            FieldSpec(name="isbn", type="string", description="ISBN-13.", required=False),
        ),
    ),
    ResourceMetadata(
        name="author",
        label="author",
        fields=(
            FieldSpec(name="name", type="string", description="The author's full name."),
            FieldSpec(name="born", type="integer", description="Year of birth.", required=False),
        ),
    ),
    ResourceMetadata(
        name="review",
        label="review",
        fields=(
            FieldSpec(name="book_id", type="integer", description="The book reviewed."),
            FieldSpec(name="rating", type="integer", description="From 1 to 5."),
            FieldSpec(name="text", type="string", description="The review.", required=False),
        ),
    ),
)

_LEDGER_FIELDS: Final = (
    FieldSpec(name="code", type="string", description="The entry's code."),
    FieldSpec(name="quantity", type="integer", description="Units on hand."),
    FieldSpec(name="price", type="number", description="Unit price."),
    FieldSpec(name="active", type="boolean", description="Whether it is in use.", required=False),
)


def bookstore_metadata(resources: int | None = None) -> MetadataIndex:
    """The bookstore's resources plus generated ledgers: ``resources`` in all (``API_RESOURCES``)."""
    total = resources if resources is not None else int(os.environ.get("API_RESOURCES", "2000"))
    found = {resource.name: resource for resource in BOOKSTORE}
    for number in range(1, max(total - len(BOOKSTORE), 0) + 1):
        name = f"ledger_{number:05d}"
        found[name] = ResourceMetadata(
            name=name, label=f"ledger {number} entry", fields=_LEDGER_FIELDS
        )
    return MetadataIndex(found)
