"""ElementCollection: the immutable value a source provides, a cache stores and a build dumps."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, final, overload

from mcp_core._collector import collector_paused
from mcp_core._refs import ElementKind, ElementRef
from mcp_core.elements._definitions import (
    Definition,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    definition_from_wire,
)
from mcp_core.elements._element import Element, HandlerRef
from mcp_core.elements._json import MAX_JSON_DEPTH, FrozenDict, freeze
from mcp_core.errors import (
    CollectionFormatError,
    DuplicateElementError,
    InvalidElementError,
    NotSerializableError,
)

__all__ = [
    "COLLECTION_FORMAT",
    "COLLECTION_VERSION",
    "CollectionBuild",
    "CollectionDocument",
    "ElementCollection",
]

COLLECTION_FORMAT: Final = "mcp-core/element-collection"
COLLECTION_VERSION: Final = 2
"""The version :meth:`ElementCollection.to_json` writes; every version up to it is read.

Version 2 stores each distinct tool schema once, in the document's ``"schemas"`` list: a tool
definition's ``"inputSchema"`` and ``"outputSchema"`` are indexes into it (a schema written
inline is read too, so a version-1 record is a valid version-2 record). Version 1 wrote every
schema inline in every definition.

Sharing amplifies: a small document can name one large schema from many tools, and every list
page then carries it for each. A reader of a document it does not trust bounds that with
``max_expanded_bytes`` (ADR 0072): the document's size with every indexed schema counted where
it is used.
"""

# The definition fields that version 2 stores in the document's schema table.
_SCHEMA_FIELDS: Final = ("inputSchema", "outputSchema")


@final
class ElementCollection:
    """An immutable, ordered set of elements with at most one element per :class:`ElementRef`.

    Iteration yields elements in the order given. Two collections are equal when they hold equal
    elements in the same order.
    """

    __slots__ = ("__weakref__", "_by_ref", "_elements", "_fingerprint", "_kinds")

    def __init__(self, elements: Iterable[Element] = ()) -> None:
        by_ref: dict[ElementRef, Element] = {}
        # A catalogue's first load builds collections of 100k elements: the loop does only what
        # each element needs (its type, its ref once), and the kinds are united once at the end
        # over the few distinct ones (an `ElementKind |` per element was a tenth of a first list).
        for element in elements:
            if element.__class__ is not Element and not isinstance(element, Element):
                raise InvalidElementError(
                    f"an ElementCollection holds Element values, got {type(element).__name__}; "
                    "wrap a definition as Element(definition=..., handler=...)"
                )
            ref = element.definition.ref
            if ref in by_ref:
                raise DuplicateElementError(
                    f"{ref} appears twice in one collection; keep one, or merge collections with "
                    "merged_over() to state which wins",
                    ref=ref,
                )
            by_ref[ref] = element
        self._by_ref: Final = by_ref
        self._elements: Final = tuple(by_ref.values())
        self._kinds: Final = _union({ref.kind for ref in by_ref})
        self._fingerprint: str | None = None

    # -- container protocol ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._elements)

    def __iter__(self) -> Iterator[Element]:
        return iter(self._elements)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Element):
            return self._by_ref.get(item.ref) == item
        return item in self._by_ref

    def __bool__(self) -> bool:
        return bool(self._elements)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ElementCollection):
            return NotImplemented
        return self._elements == other._elements

    def __hash__(self) -> int:
        return hash(self._elements)

    def __repr__(self) -> str:
        return f"ElementCollection(<{len(self)} elements, kinds={self._kinds.label or 'none'}>)"

    # -- lookups and views -------------------------------------------------------------------

    @overload
    def get(self, ref: ElementRef) -> Element | None: ...
    @overload
    def get(self, ref: ElementRef, default: Element) -> Element: ...
    def get(self, ref: ElementRef, default: Element | None = None) -> Element | None:
        """The element at ``ref``, or ``default``."""
        return self._by_ref.get(ref, default)

    @property
    def refs(self) -> tuple[ElementRef, ...]:
        """Every ref, in order."""
        return tuple(self._by_ref)

    @property
    def kinds(self) -> ElementKind:
        """The union of the kinds present."""
        return self._kinds

    def of_kind(self, kinds: ElementKind) -> ElementCollection:
        """The sub-collection of elements whose kind is in ``kinds``, order kept."""
        if kinds & self._kinds == self._kinds:
            return self
        return ElementCollection(e for e in self._elements if e.ref.kind & kinds)

    def definitions(self, kind: ElementKind) -> tuple[Definition, ...]:
        """The definitions of one kind, in order."""
        return tuple(e.definition for e in self._elements if e.ref.kind is kind)

    @property
    def tools(self) -> tuple[Tool, ...]:
        """Tool definitions, in order."""
        return tuple(e.definition for e in self._elements if isinstance(e.definition, Tool))

    @property
    def resources(self) -> tuple[Resource, ...]:
        """Resource definitions, in order."""
        return tuple(e.definition for e in self._elements if isinstance(e.definition, Resource))

    @property
    def resource_templates(self) -> tuple[ResourceTemplate, ...]:
        """Resource template definitions, in order."""
        return tuple(
            e.definition for e in self._elements if isinstance(e.definition, ResourceTemplate)
        )

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        """Prompt definitions, in order."""
        return tuple(e.definition for e in self._elements if isinstance(e.definition, Prompt))

    def merged_over(self, other: ElementCollection) -> ElementCollection:
        """This collection laid over ``other``: where both have a ref, this one's element wins.

        Order: this collection's elements, then ``other``'s elements that were not shadowed.
        """
        if not other:
            return self
        if not self:
            return other
        merged = list(self._elements)
        merged.extend(e for e in other if e.ref not in self._by_ref)
        return ElementCollection(merged)

    # -- identity and serialization ----------------------------------------------------------

    @property
    def is_serializable(self) -> bool:
        """Whether every handler and completion provider is a :class:`HandlerRef`."""
        return all(e.is_serializable for e in self._elements)

    @property
    def fingerprint(self) -> str:
        """A stable content hash (SHA-256 hex) over definitions, handlers, completions and tags.

        Stable across processes for serializable collections; a live handler contributes its
        qualified name, so two different closures with one name share a fingerprint.
        """
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for element in self._elements:
                record = _element_record(element, strict=False)
                digest.update(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
                digest.update(b"\n")
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    def to_json(self, *, indent: int | None = None) -> str:
        """The versioned JSON form; raises :class:`NotSerializableError` for live handlers."""
        live = [e.ref for e in self._elements if not e.is_serializable]
        if live:
            shown = ", ".join(str(ref) for ref in live[:5]) + (" ..." if len(live) > 5 else "")  # noqa: PLR2004 -- a readable excerpt
            raise NotSerializableError(
                f"{len(live)} element(s) hold live handlers or completion providers ({shown}); "
                "only elements whose handlers are HandlerRef('pkg.mod:attr') names can be "
                "serialized. Declare them by reference (e.g. with DiscoverySource) to dump or cache them.",
                refs=live,
            )
        table = _SchemaTable()
        records = [_element_record(e, strict=True, table=table) for e in self._elements]
        document = {
            "format": COLLECTION_FORMAT,
            "version": COLLECTION_VERSION,
            "schemas": table.schemas,
            "elements": records,
        }
        return json.dumps(document, indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(
        cls,
        text: str | bytes,
        *,
        max_bytes: int | None = None,
        max_expanded_bytes: int | None = None,
        on_invalid: Callable[[CollectionFormatError], object] | None = None,
    ) -> ElementCollection:
        """Rebuild a collection from :meth:`to_json` output.

        Decoding is bounded, so a hostile document fails like any corrupt one: it may be at most
        ``max_bytes`` long (None: any length), expand to at most ``max_expanded_bytes`` with
        its shared schemas written out where they are used (None: any size), and its JSON
        values may nest at most :data:`~mcp_core.elements.MAX_JSON_DEPTH` levels.

        With ``on_invalid``, one bad element record costs only itself: a record that does not
        validate, or that repeats a ref read before it (the first is kept), is handed to
        ``on_invalid`` as a :class:`CollectionFormatError` (``.index``, ``.ref`` when known) and
        left out. The document as a whole must still be a valid collection.

        Raises:
            CollectionFormatError: the text is not JSON, too long (or expanding too far) or too
                deeply nested, not a collection document, of a newer format version, or
                (without ``on_invalid``) holds an element that does not validate (its index is
                named).
        """
        document = CollectionDocument.parse(
            text, max_bytes=max_bytes, max_expanded_bytes=max_expanded_bytes
        )
        return document.collection(on_invalid)


@final
class CollectionDocument:
    """A parsed collection document (:meth:`ElementCollection.to_json`), built as needed.

    :meth:`collection` builds every element, exactly as :meth:`ElementCollection.from_json`
    does; :meth:`element` builds only the element at one ref, the one :meth:`collection` would
    hold there (with ``on_invalid``: invalid records left out, the first valid one of a repeated
    ref kept). A source answering per-name lookups from a large file builds one element per
    call instead of the whole collection. Safe to use from several threads.
    """

    __slots__ = ("_index", "_lock", "_records", "_scanned", "_schemas")

    def __init__(self, records: list[Any], schemas: _Schemas) -> None:
        self._records = records
        self._schemas = schemas
        # Records indexed by ref, in file order, as far as _scanned: a lookup reads only as far
        # as its ref's first record (a first call at start-up indexes next to nothing).
        self._index: dict[ElementRef, list[int]] = {}
        self._scanned = 0
        self._lock = threading.Lock()

    @classmethod
    def parse(
        cls,
        text: str | bytes,
        *,
        max_bytes: int | None = None,
        max_expanded_bytes: int | None = None,
    ) -> CollectionDocument:
        """Parse and check a document's header; elements are built later, when asked for.

        Bounded as :meth:`ElementCollection.from_json` is.

        Raises:
            CollectionFormatError: the text is not JSON, too long (or expanding too far) or too
                deeply nested, not a collection document, or of a newer format version.
        """
        if max_bytes is not None and len(text) > max_bytes:
            raise CollectionFormatError(
                f"collection JSON is {len(text)} bytes, more than the {max_bytes} allowed"
            )
        try:
            # Every object decoded here lives as long as the collection: see mcp_core._collector.
            with collector_paused():
                document = json.loads(text)
        except RecursionError:
            raise _too_deep() from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CollectionFormatError(f"collection JSON is corrupt: {exc}") from exc
        if not isinstance(document, dict) or document.get("format") != COLLECTION_FORMAT:
            raise CollectionFormatError(
                f"not an element collection document: expected a JSON object with "
                f'"format": {COLLECTION_FORMAT!r}; re-create it with ElementCollection.to_json() '
                "or `mcp-core dump`"
            )
        version = document.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise CollectionFormatError(f"collection document has an invalid version {version!r}")
        if version > COLLECTION_VERSION:
            raise CollectionFormatError(
                f"collection document is format version {version}, newer than this mcp-core "
                f"understands ({COLLECTION_VERSION}); upgrade mcp-core or re-dump it with this version"
            )
        records = document.get("elements")
        if not isinstance(records, list):
            raise CollectionFormatError('collection document has no "elements" list')
        if version == 1:
            return cls(records, _Schemas(None))
        return cls(records, _Schemas(_table_of(document, records, len(text), max_expanded_bytes)))

    def __len__(self) -> int:
        return len(self._records)

    def collection(
        self, on_invalid: Callable[[CollectionFormatError], object] | None = None
    ) -> ElementCollection:
        """Every element (see :meth:`ElementCollection.from_json` for ``on_invalid``).

        Raises:
            CollectionFormatError: without ``on_invalid``, an element that does not validate or
                repeats another's ref (its index is named); a record nested too deeply.
        """
        return self.build(on_invalid).collection()

    def build(
        self, on_invalid: Callable[[CollectionFormatError], object] | None = None
    ) -> CollectionBuild:
        """A build of :meth:`collection` that can be done a few records at a time."""
        return CollectionBuild(self._records, self._schemas, on_invalid)

    def recorded_kinds(self) -> ElementKind:
        """The union of the ``"kind"`` labels of the records (valid or not), building none."""
        labels = {
            record["kind"]
            for record in self._records
            if isinstance(record, dict) and isinstance(record.get("kind"), str)
        }
        kinds = ElementKind.NONE
        for label in labels:
            try:
                kinds |= ElementKind.from_label(label)
            except ValueError:
                continue  # an unknown kind: that record is invalid, and costs only itself
        return kinds

    def index(self, until: ElementRef | None = None) -> None:
        """Index the records by ref now (as far as ``until``'s first record), e.g. off the loop.

        :meth:`element` indexes as far as it needs on its own; this only moves the work.
        """
        with self._lock:
            self._scan(until)

    def element(self, ref: ElementRef) -> Element | None:
        """The element :meth:`collection` (with ``on_invalid``) holds at ``ref``, or None."""
        tried = 0
        while True:
            with self._lock:
                if tried == len(self._index.get(ref, ())):
                    self._scan(ref, after=tried)
                positions = self._index.get(ref, ())[tried:]
            if not positions:
                return None
            for index in positions:
                try:
                    with collector_paused():
                        built = _element_from_record(self._records[index], self._schemas)
                except _RECORD_ERRORS:
                    continue  # left out by collection() too: the next record of the ref may count
                if built.ref != ref:  # pragma: no cover -- a key the definition normalises
                    return self.collection(on_invalid=lambda _error: None).get(ref)
                return built
            tried += len(positions)

    def _scan(self, until: ElementRef | None, *, after: int = 0) -> None:
        """Index further, until ``until`` has more than ``after`` records indexed (None: all)."""
        index, records = self._index, self._records
        position, end = self._scanned, len(records)
        while position < end:
            ref = _record_ref(records[position])
            if ref is not None:
                index.setdefault(ref, []).append(position)
            position += 1
            if until is not None and ref == until and len(index[ref]) > after:
                break
        self._scanned = position


def _table_of(
    document: dict[str, Any], records: list[Any], size: int, limit: int | None
) -> list[Any]:
    """A version-2 document's schema table, its expansion checked against ``limit``."""
    table = document.get("schemas", [])
    if not isinstance(table, list):
        raise CollectionFormatError('collection document\'s "schemas" is not a list')
    if limit is not None:
        _check_expansion(size, records, table, limit)
    return table


def _check_expansion(size: int, records: list[Any], table: list[Any], limit: int) -> None:
    """CollectionFormatError when the records' indexed schemas, written out, exceed ``limit``."""
    sizes: dict[int, int] = {}
    expanded = size
    for record in records:
        definition = record.get("definition") if isinstance(record, dict) else None
        if not isinstance(definition, dict):
            continue
        for field in _SCHEMA_FIELDS:
            index = definition.get(field)
            if type(index) is not int or not 0 <= index < len(table):
                continue  # inline (counted in the text already) or invalid (costs its element)
            schema_size = sizes.get(index)
            if schema_size is None:
                schema_size = sizes[index] = len(json.dumps(table[index], ensure_ascii=False))
            expanded += schema_size
        if expanded > limit:
            raise CollectionFormatError(
                f"collection document of {size} bytes expands to more than the "
                f"{limit} bytes allowed once its shared schemas are written out where they are "
                "used; it is hostile or corrupt (a trusted writer's entry is read without this "
                "bound: configure the secret)"
            )


def _too_deep() -> CollectionFormatError:
    # json and the element constructors recurse per nesting level; a document nested deeper
    # than the interpreter allows is corrupt, not a crash of whoever decodes it.
    return CollectionFormatError(
        "collection JSON is nested too deeply to decode; it is corrupt or hostile"
    )


def _union(kinds: Iterable[ElementKind]) -> ElementKind:
    union = ElementKind.NONE
    for kind in kinds:
        union |= kind
    return union


def _handler_name(handler: object, *, strict: bool) -> str:
    if isinstance(handler, HandlerRef):
        return handler.target
    if strict:  # pragma: no cover -- to_json checks serializability before building records
        raise NotSerializableError("live handler", refs=())
    module = getattr(handler, "__module__", None) or type(handler).__module__
    qualname = getattr(handler, "__qualname__", None) or type(handler).__qualname__
    return f"<live {module}:{qualname}>"


@final
class _SchemaTable:
    """The distinct tool schemas of a document being written, each stored once."""

    __slots__ = ("_by_id", "_by_text", "schemas")

    def __init__(self) -> None:
        self.schemas: list[object] = []
        self._by_id: dict[int, tuple[object, int]] = {}
        self._by_text: dict[str, int] = {}

    def index(self, frozen: object, wire: object) -> int:
        """The index of ``wire`` (the wire form of the schema value ``frozen``) in the table."""
        # Derived tools share schema objects: most are found by identity, without encoding.
        found = self._by_id.get(id(frozen))
        if found is not None and found[0] is frozen:
            return found[1]
        text = json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        index = self._by_text.get(text)
        if index is None:
            index = self._by_text[text] = len(self.schemas)
            self.schemas.append(wire)
        self._by_id[id(frozen)] = (frozen, index)
        return index


def _element_record(
    element: Element, *, strict: bool, table: _SchemaTable | None = None
) -> dict[str, Any]:
    definition = element.definition
    wire = definition.to_wire()
    if table is not None and isinstance(definition, Tool):
        values = (definition.input_schema, definition.output_schema)
        for field, value in zip(_SCHEMA_FIELDS, values, strict=True):
            if field in wire:
                wire[field] = table.index(value, wire[field])
    record: dict[str, Any] = {
        "kind": element.ref.kind.label,
        "definition": wire,
        "handler": _handler_name(element.handler, strict=strict),
    }
    if element.completions:
        record["completions"] = {
            name: _handler_name(provider, strict=strict)
            for name, provider in element.completions.items()
        }
    if element.tags:
        record["tags"] = sorted(element.tags)
    return record


@final
class _Schemas:
    """How a document's tool definitions get their schemas: each distinct one frozen once.

    A schema written inline (every version) is shared with equal ones by canonical text; in
    version 2 a schema may instead be an index into the document's ``"schemas"`` list, frozen on
    first use. A bad index, or a listed entry that is no schema, costs only the elements using it.
    """

    __slots__ = ("_by_text", "_listed", "_table")

    def __init__(self, table: list[Any] | None) -> None:
        self._table = table
        self._by_text: dict[str, FrozenDict] = {}
        self._listed: dict[int, FrozenDict] = {}

    def resolved(self, definition: object) -> object:
        """``definition`` with its schemas replaced by shared frozen values."""
        if not isinstance(definition, dict):
            return definition  # definition_from_wire says what is wrong with it
        shared = dict(definition)
        for field in _SCHEMA_FIELDS:
            value = shared.get(field)
            if isinstance(value, dict):
                shared[field] = self._inline(field, value)
            elif self._table is not None and value is not None:
                shared[field] = self._at(field, value)
        return shared

    def _inline(self, field: str, schema: dict[str, Any]) -> FrozenDict:
        text = json.dumps(schema, sort_keys=True)
        frozen = self._by_text.get(text)
        if frozen is None:
            frozen = self._by_text[text] = _frozen_schema(field, schema)
        return frozen

    def _at(self, field: str, index: object) -> FrozenDict:
        table = self._table
        assert table is not None  # noqa: S101 -- resolved() asks only with a table
        if type(index) is not int or not 0 <= index < len(table):
            raise ValueError(
                f'{field} must be a schema, or the index of one in the document\'s "schemas" '
                f"list ({len(table)} long), got {index!r}"
            )
        frozen = self._listed.get(index)
        if frozen is None:
            schema = table[index]
            if not isinstance(schema, dict):
                raise TypeError(
                    f"{field}: schema #{index} of the document must be a JSON object, "
                    f"got {type(schema).__name__}"
                )
            frozen = self._listed[index] = _frozen_schema(field, schema)
        return frozen


def _frozen_schema(field: str, schema: dict[str, Any]) -> FrozenDict:
    return FrozenDict(
        {k: freeze(v, path=f"{field}.{k}", max_depth=MAX_JSON_DEPTH - 1) for k, v in schema.items()}
    )


@final
class CollectionBuild:
    """:meth:`CollectionDocument.collection`, built ``count`` records at a time by :meth:`step`.

    A source building a large file on the event loop builds it in stretches, so requests are
    served between them (and without a worker thread competing for the interpreter).
    """

    __slots__ = ("_elements", "_first", "_next", "_on_invalid", "_records", "_schemas")

    def __init__(
        self,
        records: list[Any],
        schemas: _Schemas,
        on_invalid: Callable[[CollectionFormatError], object] | None,
    ) -> None:
        self._records = records
        # Catalogues derived from functions repeat a handful of schemas thousands of times;
        # each distinct one is frozen once and the value shared (see _Schemas).
        self._schemas = schemas
        self._on_invalid = on_invalid
        self._elements: list[Element] = []
        self._first: dict[ElementRef, int] = {}
        self._next = 0

    def step(self, count: int) -> bool:
        """Build the next ``count`` records; whether any remain.

        Raises:
            CollectionFormatError: as :meth:`CollectionDocument.collection`.
        """
        records = self._records
        stop = min(len(records), self._next + count)
        try:
            # Every element made here lives as long as the collection: see mcp_core._collector.
            with collector_paused():
                for index in range(self._next, stop):
                    self._add(index, records[index])
        except RecursionError:
            raise _too_deep() from None
        finally:
            self._next = stop
        return stop < len(records)

    def collection(self) -> ElementCollection:
        """The collection, once every remaining record is built.

        Raises:
            CollectionFormatError: as :meth:`CollectionDocument.collection`.
        """
        self.step(len(self._records))
        try:
            with collector_paused():
                return ElementCollection(self._elements)
        except DuplicateElementError as exc:
            raise CollectionFormatError(f"collection document is invalid: {exc}") from exc

    def _add(self, index: int, record: object) -> None:
        on_invalid = self._on_invalid
        try:
            element = _element_from_record(record, self._schemas)
        except _RECORD_ERRORS as exc:
            error = CollectionFormatError(
                f"collection element #{index} is invalid: {exc}",
                index=index,
                ref=_record_ref(record),
            )
            if on_invalid is None:
                raise error from exc
            on_invalid(error)
            return
        ref = element.ref
        first = self._first
        if on_invalid is not None and ref in first:
            on_invalid(
                CollectionFormatError(
                    f"collection element #{index} repeats {ref} of element #{first[ref]}; "
                    "the first is kept",
                    index=index,
                    ref=ref,
                )
            )
            return
        first.setdefault(ref, index)
        self._elements.append(element)


# What building one record may raise when the record is bad (it costs only that record).
_RECORD_ERRORS: Final = (InvalidElementError, KeyError, TypeError, ValueError, RecursionError)


def _record_ref(record: object) -> ElementRef | None:
    """The ref a record declares, as far as it can be read (for messages about a bad record)."""
    try:
        kind = ElementKind.from_label(record["kind"])  # type: ignore[index]  # any failure: unknown
        definition = record["definition"]  # type: ignore[index]  # same
        key = definition[_KEY_FIELD[kind]]
        return ElementRef(kind, key)
    except Exception:  # noqa: BLE001 -- a record too broken to name is reported by index alone
        return None


_KEY_FIELD: Final = {
    ElementKind.TOOL: "name",
    ElementKind.PROMPT: "name",
    ElementKind.RESOURCE: "uri",
    ElementKind.RESOURCE_TEMPLATE: "uriTemplate",
}


def _element_from_record(record: object, schemas: _Schemas) -> Element:
    if not isinstance(record, Mapping):
        raise TypeError(f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - {"kind", "definition", "handler", "completions", "tags"})
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}")
    kind = ElementKind.from_label(record["kind"])
    handler = record["handler"]
    if not isinstance(handler, str):
        raise TypeError('"handler" must be a string reference')
    completions = record.get("completions")
    if completions is not None and not isinstance(completions, Mapping):
        raise TypeError('"completions" must be an object')
    tags = record.get("tags", [])
    if not isinstance(tags, list):
        raise TypeError('"tags" must be a list of strings')
    return Element(
        definition=definition_from_wire(kind, schemas.resolved(record["definition"])),  # type: ignore[arg-type]  # validated by from_wire
        handler=HandlerRef(handler),
        completions={k: HandlerRef(v) for k, v in completions.items()} if completions else None,
        tags=frozenset(tags),
    )
