"""Admission: what an element must satisfy to enter a catalogue, checked once per element.

Construction validates each field of a definition on its own (names, URIs, the root of a
schema). Some properties are too costly to check on every construction, or are about what the
catalogue can carry rather than about the field: they are checked here, once, when a catalogue
is built (the reference ``Registry`` does it for every element it merges or registers), never
per request. An element that fails is left out with a diagnostic, so that lists and calls of
the others never fail because of it:

- a tool's ``input_schema`` and ``output_schema`` are valid against their JSON Schema dialect's
  meta-schema (the dialect ``$schema`` names, Draft 2020-12 by default), format assertions
  included, so a ``pattern`` (or a ``patternProperties`` key) that does not compile is caught,
  and every ``$ref`` in them can be followed: it points inside the schema at something that
  exists (a reference to another document would be fetched, so it is refused, never fetched),
  and no chain of them loops back without descending into the input (``{"$ref": "#"}`` would
  make every validation recurse until it fails);
- the definition's JSON form nests objects and arrays at most :attr:`ElementLimits.max_depth`
  levels deep: JSON parsers refuse documents nested too deeply (the official SDK's stops at
  about 200 levels), so one such tool would make every ``tools/list`` unreadable;
- its JSON form is at most about :attr:`ElementLimits.max_bytes` bytes, so one element cannot
  make every list response huge;
- every string in it is valid Unicode (no lone surrogates), so it can be encoded as UTF-8.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Generic, TypeAlias, TypeVar, final

from mcp_core.elements import Definition, Element, ElementRef, Tool
from mcp_core.elements._definitions import admission_verdict, record_admission
from mcp_core.elements._json import thaw
from mcp_core.errors import InvalidElementError
from mcp_core.handlers._jsonschema import reference_problems, schema_problems

__all__ = ["DEFAULT_LIMITS", "Admission", "ElementLimits"]

K = TypeVar("K")
V = TypeVar("V")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ElementLimits:
    """The bounds on one element's definition, checked when a catalogue is built.

    ``max_depth``: how many levels of JSON objects and arrays the definition's wire form may
    nest (the definition object itself is level 1, so a tool's input schema has
    ``max_depth - 1``). ``max_bytes``: about how large its JSON encoding may be.
    """

    max_depth: int = 64
    max_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ElementLimits.{name} must be a positive int, got {value!r}")


DEFAULT_LIMITS: Final = ElementLimits()

# Definition fields whose values are JSON documents (possibly shared between thousands of
# definitions: derived schemas are); measured once per distinct object.
_JSON_FIELDS: Final = frozenset({"input_schema", "output_schema", "meta"})
_SCHEMA_FIELDS: Final = ("input_schema", "output_schema")


_Measure: TypeAlias = tuple[int, int, str | None]
"""A JSON value's nesting depth (a scalar is 0), approximate encoded size, and text problem."""

_Part: TypeAlias = tuple[tuple[object, ...], int, int]
"""A definition's JSON documents (held, so their ids stay theirs) and the room they leave: the
definition is admitted when its other fields are sound, nest less than the second item and take
at most the third in bytes (-1 when a document has a problem)."""


@final
class _Memo(Generic[K, V]):
    """A bounded memo keyed by identity: the value is held, so its id cannot be reused meanwhile.

    Cheaper than an LRU on the hot path (one dict lookup); when full it starts over, which only
    costs a recomputation.
    """

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: dict[int, tuple[K, V]] = {}

    def get(self, key: K) -> V | None:
        found = self._entries.get(id(key))
        return found[1] if found is not None and found[0] is key else None

    def put(self, key: K, value: V) -> V:
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[id(key)] = (key, value)
        return value


@final
class Admission:
    """Checks elements against the admission rules above, remembering what it has checked.

    Thousands of derived tools share a handful of schema objects, and a reload merges the same
    elements again, so each definition's verdict is kept on the definition itself (under the
    limits it was judged by: another ``Admission`` with the same limits object reuses it), and
    results per JSON document and per combination of a definition's documents (by identity),
    and meta-schema verdicts per schema text, in bounded caches: a catalogue costs about one
    meta-schema check per distinct schema and one short pass over each definition's other
    fields, and no table here holds a catalogue's definitions alive after it lets them go.
    """

    __slots__ = ("_cache_size", "_documents", "_limits", "_plans", "_schemas")

    def __init__(self, limits: ElementLimits = DEFAULT_LIMITS, *, cache_size: int = 65_536) -> None:
        if not isinstance(limits, ElementLimits):
            raise TypeError(f"limits must be an ElementLimits, got {type(limits).__name__}")
        self._limits = limits
        self._cache_size = cache_size
        self._plans: dict[type, _Plan] = {}
        self._documents: _Memo[object, _Measure] = _Memo(cache_size)
        self._schemas: _Memo[object, tuple[str, ...]] = _Memo(cache_size)

    def __repr__(self) -> str:
        return f"Admission({self._limits!r})"

    @property
    def limits(self) -> ElementLimits:
        """The bounds applied."""
        return self._limits

    def problems(self, element: Element) -> list[str]:
        """Why ``element`` may not enter a catalogue, one sentence each; empty when it may."""
        return list(self._verdict(element.definition))

    def check(self, element: Element) -> None:
        """Raise :class:`~mcp_core.errors.InvalidElementError` listing the element's problems."""
        definition = element.definition
        if admission_verdict(definition) is self._limits:  # admitted before, under these limits
            return
        problems = self._verdict(definition)
        if problems:
            ref: ElementRef = element.ref
            raise InvalidElementError(f"{ref}: {'; '.join(problems)}", ref=ref)

    # -- internals ------------------------------------------------------------------------------

    def _verdict(self, definition: Definition) -> tuple[str, ...]:
        found = admission_verdict(definition)
        if found is self._limits:
            return ()
        if found.__class__ is tuple and found[0] is self._limits:  # (limits, problems): refused
            problems: tuple[str, ...] = found[1]
            return problems
        return self._decide(definition)

    def _decide(self, definition: Definition) -> tuple[str, ...]:
        """The problems of ``definition``, remembered; the common case decided without messages.

        The hot path of a cold start. The fields that are not JSON documents (names,
        descriptions: unique to each definition) are measured here, and the JSON documents
        (shared by derived definitions) are judged together, once per combination of objects.
        Whatever this does not admit outright gets the full account of :meth:`_account`.
        """
        cls = definition.__class__
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plans[cls] = _Plan(cls)
        depth, size, sound = 0, 0, True
        # (zip(strict=True) would add about half the cost of this loop: equal by construction)
        for value, extra in zip(plan.others(definition), plan.extras, strict=False):
            if value is None:
                continue
            if value.__class__ is str and value.isascii():  # most fields: names, descriptions
                size += len(value) + extra
                continue
            measure = _measure(value)
            depth = max(depth, measure[0])
            size += extra - 2 + measure[1]
            sound = sound and measure[2] is None
        key = plan.identities(definition)
        part = plan.parts.get(key)
        if part is None:
            part = self._documents_part(plan, definition, key)
        verdict = (
            () if sound and depth < part[1] and size <= part[2] else self._account(definition, plan)
        )
        record_admission(definition, (self._limits, verdict) if verdict else self._limits)
        return verdict

    def _documents_part(self, plan: _Plan, definition: Definition, key: object) -> _Part:
        """Judge the JSON documents of ``definition``, remembering the :data:`_Part` under ``key``.

        Only a combination of documents all seen before is remembered: one that recurs (derived
        definitions share theirs) from its second definition on, and a catalogue whose schemas
        are each their own costs no memory for combinations that never recur.
        """
        documents = plan.documents(definition)
        depth, size, sound, seen = 0, 0, True, True
        memo = self._documents
        entries = memo._entries  # noqa: SLF001 -- the memo's own table, read inline
        for name, value in zip(plan.document_names, documents, strict=True):
            if value is not None:
                found = entries.get(id(value))
                if found is not None and found[0] is value:
                    measure = found[1]
                else:
                    measure, seen = memo.put(value, _measure(value)), False
                depth = max(depth, measure[0])
                size += len(name) + 4 + measure[1]
                sound = sound and measure[2] is None
        limits = self._limits
        sound = sound and depth < limits.max_depth  # a schema nested deeper is never walked
        for index in plan.schema_indexes if sound else ():
            schema = documents[index]
            if schema is not None and self._schema(schema):
                sound = False
                break
        # The definition object itself takes 2 bytes and 1 level; no room when unsound.
        part = (documents, limits.max_depth, limits.max_bytes - 2 - size if sound else -1)
        parts = plan.parts
        if seen:
            if len(parts) >= self._cache_size:
                parts.clear()
            parts[key] = part
        return part

    def _account(self, definition: Definition, plan: _Plan) -> tuple[str, ...]:
        """Every problem of ``definition``, one sentence each, from one pass over its fields."""
        depth, size, problem = 0, 2, None
        for name, value in zip(plan.names, plan.values(definition), strict=True):
            if value is None:
                continue
            measure = self._document(value) if name in _JSON_FIELDS else _measure(value)
            depth = max(depth, measure[0])
            size += len(name) + 4 + measure[1]
            if problem is None and measure[2] is not None:
                problem = f"{name}: {measure[2]}"
        depth += 1
        limits = self._limits
        found: list[str] = []
        if problem is not None:
            found.append(f"its definition cannot be sent: {problem}")
        if depth > limits.max_depth:
            found.append(
                f"its definition nests {depth} levels of JSON objects and arrays, more than the "
                f"limit of {limits.max_depth} (clients cannot parse documents nested that "
                "deeply); flatten it, e.g. with $defs and $ref, or raise ElementLimits.max_depth"
            )
        if size > limits.max_bytes:
            found.append(
                f"its definition takes about {size} bytes of JSON, more than the limit of "
                f"{limits.max_bytes}; shrink it or raise ElementLimits.max_bytes"
            )
        if depth <= limits.max_depth and isinstance(definition, Tool):
            schemas = (definition.input_schema, definition.output_schema)
            for name, schema in zip(_SCHEMA_FIELDS, schemas, strict=True):
                if schema is not None:
                    found.extend(
                        f"{name} is not a valid JSON Schema at {where}"
                        for where in self._schema(schema)[:3]
                    )
        return tuple(found)

    def _document(self, value: object) -> _Measure:
        """The measure of a JSON document (by identity: thousands of definitions share one)."""
        found = self._documents.get(value)
        return self._documents.put(value, _measure(value)) if found is None else found

    def _schema(self, schema: object) -> tuple[str, ...]:
        """The meta-schema problems of ``schema`` (by identity, then by canonical text)."""
        problems = self._schemas.get(schema)
        if problems is None:
            # Canonical text as the key: unlike frozen-value equality, it tells 1 from true.
            text = json.dumps(thaw(schema), sort_keys=True, separators=(",", ":"))
            problems = self._schemas.put(schema, _meta_problems(text))
        return problems


@final
class _Plan:
    """How :meth:`Admission._decide` reads one definition type, and its documents' verdicts.

    ``values`` gets the values of the public fields ``names`` in order; ``others`` those of
    the fields that are not JSON documents (``extras``: what each adds to the JSON size besides
    its text, when it is a string), ``documents`` those that are (``schema_indexes``: which of
    them are a tool's schemas). ``parts`` maps the identities of a definition's documents to
    their :data:`_Part`, which holds them, so no id is reused.
    """

    __slots__ = (
        "document_names",
        "documents",
        "extras",
        "identities",
        "names",
        "others",
        "parts",
        "schema_indexes",
        "values",
    )

    def __init__(self, cls: type) -> None:
        self.names = names = _public_fields(cls)
        self.values = _getter(names)
        others = tuple(name for name in names if name not in _JSON_FIELDS)
        self.document_names = tuple(name for name in names if name in _JSON_FIELDS)
        self.others = _getter(others)
        self.extras = tuple(len(name) + 6 for name in others)
        self.documents = _getter(self.document_names)
        self.identities = _identities(self.document_names)
        self.schema_indexes = (
            tuple(self.document_names.index(name) for name in _SCHEMA_FIELDS)
            if issubclass(cls, Tool)
            else ()
        )
        self.parts: dict[object, _Part] = {}


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[object, ...]]:
    """A getter of the values of ``names`` as a tuple (one C call when there are several)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda _obj: ()


def _identities(names: tuple[str, ...]) -> Callable[[object], object]:
    """A getter of the identities of the values of ``names``, as a key.

    Written out for the usual counts (a tool has three documents, other definitions one):
    ``tuple(map(id, values))`` costs twice as much.
    """
    match tuple(map(operator.attrgetter, names)):
        case (one,):
            return lambda obj: id(one(obj))
        case (one, two, three):
            return lambda obj: (id(one(obj)), id(two(obj)), id(three(obj)))
        case _:
            values = _getter(names)
            return lambda obj: tuple(map(id, values(obj)))


@functools.lru_cache(maxsize=4096)
def _meta_problems(text: str) -> tuple[str, ...]:
    schema = json.loads(text)
    found = schema_problems(schema)
    if '"$ref"' in text and isinstance(schema, dict):  # only a schema with references has these
        found = found + reference_problems(schema)
    return tuple(f"{where}: {message}" for where, message in found)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _public_fields(cls: type) -> tuple[str, ...]:
    """The fields of a definition (or nested value) type that its JSON form carries."""
    names = _FIELDS.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = _FIELDS[cls] = tuple(f.name for f in fields if not f.name.startswith("_"))
    return names


def _measure(value: object) -> _Measure:
    """Depth, approximate JSON size and the first text problem of ``value``, without recursion.

    Mappings, sequences and dataclass values (icons, annotations, prompt arguments) are walked
    as JSON objects and arrays.
    """
    deepest, size, problem = 0, 0, None
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            size += _text_size(item)
            problem = problem or _text_problem(item)
            continue
        if isinstance(item, Mapping):
            members: list[object] = []
            for key, member in item.items():
                members.extend((key, member))
        elif isinstance(item, list | tuple):
            members = list(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            members = [getattr(item, name) for name in _public_fields(type(item))]
        else:
            size += len(str(item))  # numbers, booleans, null: about their JSON text
            continue
        size += 2 + len(members)
        deepest = max(deepest, depth + 1)
        stack.extend((member, depth + 1) for member in members if member is not None)
    return deepest, size, problem


def _text_size(text: str) -> int:
    return len(text) + 2 if text.isascii() else len(text.encode("utf-8", "replace")) + 2


def _text_problem(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "a string holds a lone surrogate, which has no UTF-8 encoding"
    return None
