"""Elements from marked callables, one at a time: a broken declaration costs only itself.

:class:`~mcp_core.sources.FunctionSource` and :class:`~mcp_core.sources.DiscoverySource` find
marked callables in different places (given functions, imported modules) and hand them here as
:class:`Marked` and :class:`Provider` records. :class:`Declarations` is the one place that turns
them into elements (one at a time, when first needed), and it never lets one declaration take the
others down:

- a callable carrying two element marks is skipped, naming both marks;
- two declarations of one ref keep the first; each later one is skipped, naming both places;
- a completion provider whose target is not here (or is ambiguous), or that completes an
  argument the target does not have, is dropped; the target keeps its other providers; a second
  provider for one argument is dropped, the first kept;
- a declaration that cannot be derived (an invalid name, a malformed URI template, template
  variables that do not match the parameters, an annotation that does not resolve, a type
  pydantic cannot describe...) is skipped.

Each skip is a ``skipped`` :class:`~mcp_core.sources.SourceDiagnostic` naming the element
(``ref``), where it was declared (``file:line``), what is wrong and what to do.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, final

from mcp_core._collector import collector_paused
from mcp_core._stretches import pause
from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    ResourceTemplate,
)
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import escapes
from mcp_core.handlers._decorators import CompletionMark, ElementMark
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name

__all__ = ["Declarations", "Marked", "Provider", "derive_all", "first_of_each_ref"]

# Kinds whose elements take completion providers (a set: tested per declaration, by identity).
_COMPLETABLE: Final = frozenset({ElementKind.PROMPT, ElementKind.RESOURCE_TEMPLATE})

# Declarations derived between two chances for other tasks to run while a source provides: a
# few milliseconds of work, so a request arriving during a large first load waits that long at
# most (and is answered per name), instead of waiting for the whole catalogue.
STRETCH: Final = 256

_WHOLE: Final = 1 << 20  # declarations indexed in one go when nothing waits between stretches


@final
class Marked(NamedTuple):
    """One marked callable: what to derive from, its element marks, and what serves it.

    ``handler`` replaces ``function`` as the element's handler (a reference, for discovery);
    ``drop_first`` derives from an unbound method without ``self``/``cls``; ``origin`` names the
    callable in messages (``module.qualname`` or ``module:Class.method``; None: worked out from
    ``function`` when a message needs it).

    A named tuple rather than a frozen dataclass: one is made per declared function on the way
    to a server's first answer, and a tuple costs a fraction of a dataclass to build.
    """

    function: Callable[..., Any]
    marks: tuple[ElementMark, ...]
    origin: str | None = None
    handler: object | None = None
    drop_first: bool = False

    @property
    def name(self) -> str:
        """How messages name the callable."""
        return self.origin if self.origin is not None else callable_name(self.function)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """A completion provider: its mark, and what the element stores (the function or a ref)."""

    provider: object
    mark: CompletionMark
    origin: str


def first_of_each_ref(
    items: Iterable[tuple[ElementRef, object, Any]], *, source: str
) -> tuple[list[Any], list[SourceDiagnostic]]:
    """The items whose ref comes first, in order, and one diagnostic per later duplicate.

    ``items`` are ``(ref, where, item)``; ``where`` names the declaration in messages (it is
    turned into text only for a duplicate: finding a mark's line is not free).
    """
    first: dict[ElementRef, object] = {}
    kept: list[Any] = []
    notes: list[SourceDiagnostic] = []
    for ref, where, item in items:
        if ref in first:
            notes.append(_declared_twice(source, ref, first[ref], where))
            continue
        first[ref] = where
        kept.append(item)
    return kept, notes


_UNDERIVED: Any = object()


@final
class Declarations:
    """The declarations of one source: which are kept, found by ref, derived when first needed.

    Built from the marks alone (no signature is analysed): a callable carrying two element marks,
    an empty key or a second declaration of a ref is left out here, with its diagnostic. What is
    kept is derived one declaration at a time, on demand: :meth:`lookup` derives the one a ref
    names (a call before any list derives one function, not the catalogue), :meth:`derive` the
    next stretch of them (a source provides in stretches, letting requests through between
    them), :meth:`collection` whatever is left. Each declaration is derived at most once, so a
    lookup and the collection hold the very same element (law ``source.lookup-agrees``).
    Diagnostics come out in the order a single pass would give them.

    ``source`` describes the source in diagnostics. Nothing here raises for a bad declaration.
    """

    __slots__ = (
        "_attach_notes",
        "_attached",
        "_collection",
        "_count",
        "_derived",
        "_failures",
        "_index",
        "_kept",
        "_next",
        "_notes",
        "_pending",
        "_providers",
        "_source",
    )

    def __init__(
        self, marked: Iterable[Marked], providers: Sequence[Provider], *, source: str
    ) -> None:
        # ``marked`` is read as it is indexed (:meth:`index`, in stretches while a source
        # provides): a source may hand a generator that fills ``providers`` as it goes, which
        # is complete once every declaration is indexed, before anything is derived.
        self._source = source
        self._providers = providers
        self._pending: Iterator[Marked] | None = iter(marked)
        self._notes: list[SourceDiagnostic] = []
        # Positions by kind, then by key, known from the mark without deriving: neither an
        # ElementRef nor a (kind, key) pair is built per declaration (100k of them showed in a
        # cold start and in the heap); a ref is built only for a message.
        self._index: dict[ElementKind, dict[str, int]] = {}
        self._kept: list[Marked] = []
        self._derived: list[Element | None] = []
        self._failures: dict[int, list[SourceDiagnostic]] = {}
        self._attached: dict[int, dict[str, Provider]] | None = None
        self._attach_notes: list[SourceDiagnostic] = []
        self._next = 0
        self._count = 0
        self._collection: tuple[ElementCollection, tuple[SourceDiagnostic, ...]] | None = None

    def index(self, count: int) -> bool:
        """Index up to ``count`` more declarations, in order; False once all are indexed.

        Everything else indexes what is left first: this only lets a caller do it in stretches.
        """
        pending = self._pending
        if pending is None:
            return False
        source, notes, index, kept = self._source, self._notes, self._index, self._kept
        seen = 0
        for entry in itertools.islice(pending, count):
            seen += 1
            mark = entry.marks[0]
            key = mark.key(entry.function)
            keys = index.get(mark.kind)
            if keys is None:
                keys = index[mark.kind] = {}
            if len(entry.marks) > 1:
                notes.append(
                    _skipped(
                        source,
                        _ref_of(mark, entry.function),
                        f"{entry.name} is marked twice: {entry.marks[0].describe()} and "
                        f"{entry.marks[1].describe()}; keep one mark",
                    )
                )
            elif not key:
                notes.append(
                    _skipped(source, None, f"{entry.name} ({mark.describe()}) has an empty key")
                )
            elif key in keys:
                earlier = kept[keys[key]]
                notes.append(
                    _declared_twice(
                        source,
                        mark.ref(entry.function),
                        _Place(earlier, earlier.marks[0]),
                        _Place(entry, mark),
                    )
                )
            else:
                keys[key] = len(kept)
                kept.append(entry)
                self._derived.append(_UNDERIVED)
        self._count = len(kept)
        if seen == count:
            return True  # perhaps more: the next stretch finds out
        self._pending = None
        return False

    def _indexed(self) -> None:
        """Index whatever is not indexed yet."""
        while self.index(_WHOLE):
            pass

    def __len__(self) -> int:
        """How many declarations are kept (each becomes an element unless its derivation fails)."""
        self._indexed()
        return self._count

    def lookup(self, ref: ElementRef) -> Element | None:
        """The element declared at ``ref`` (derived now if it was not yet), or None."""
        if self._collection is not None:
            return self._collection[0].get(ref)
        # Indexed only as far as the first declaration of ``ref`` (later ones are skipped, so
        # the answer is the same): a first call does not wait for the whole catalogue's marks.
        position = self._index.get(ref.kind, {}).get(ref.key)
        while position is None and self.index(STRETCH):
            position = self._index.get(ref.kind, {}).get(ref.key)
        if position is None:
            position = self._index.get(ref.kind, {}).get(ref.key)
        return None if position is None else self._element(position)

    def derive(self, count: int) -> bool:
        """Derive up to ``count`` more declarations, in order; False once all are derived."""
        if self._collection is not None:
            return False
        self._indexed()
        stop = min(self._next + count, len(self._kept))
        for position in range(self._next, stop):
            self._element(position)
        self._next = stop
        return stop < len(self._kept)

    def collection(self) -> tuple[ElementCollection, tuple[SourceDiagnostic, ...]]:
        """Every declared element (in order, completions attached) and a diagnostic per skip."""
        if self._collection is None:
            self._indexed()
            self.derive(len(self._kept))
            if self._providers:
                self._attachments()  # a dropped provider is reported even if nothing uses it
            elements = [e for e in self._derived if e is not None]
            notes = [*self._notes, *self._attach_notes]
            for position in sorted(self._failures):
                notes.extend(self._failures[position])
            self._collection = ElementCollection(elements), tuple(notes)
            # Everything is derived: the collection answers lookups from now on (the very same
            # elements), so the per-declaration records and the index by key go (ADR 0054).
            self._kept, self._index, self._derived, self._failures = [], {}, [], {}
        return self._collection

    def _element(self, position: int) -> Element | None:
        element = self._derived[position]
        if element is _UNDERIVED:
            entry = self._kept[position]
            mark = entry.marks[0]
            providers = self._attachments().get(position, {}) if mark.kind in _COMPLETABLE else {}
            notes: list[SourceDiagnostic] = []
            element = self._derived[position] = _derived(
                entry, mark, providers, self._source, notes
            )
            if notes:
                self._failures[position] = notes
        return element

    def _attachments(self) -> dict[int, dict[str, Provider]]:
        if self._attached is None:
            self._indexed()  # a provider may be declared after its target
            self._attached = _attach(self._kept, self._providers, self._source, self._attach_notes)
        return self._attached


async def derive_all(
    declarations: Declarations,
) -> tuple[ElementCollection, tuple[SourceDiagnostic, ...]]:
    """:meth:`Declarations.collection`, derived in stretches that let other tasks run between them.

    The pauses are not cancellation points: deriving is work in this process that finishes
    quickly (a few microseconds a function), as it did when it ran in one go, so a provide
    timeout never cuts a catalogue in half.
    """
    # Every element made here lives as long as the catalogue: see mcp_core._collector.
    with collector_paused():
        while declarations.index(STRETCH):
            await pause()
        while declarations.derive(STRETCH):
            await pause()
        return declarations.collection()


@final
@dataclass(frozen=True, slots=True)
class _Place:
    """``origin at file:line``, worked out only when a message needs it."""

    entry: Marked
    mark: ElementMark

    def __str__(self) -> str:
        return f"{self.entry.name} at {self.mark.where}"


def _ref_of(mark: ElementMark, function: Callable[..., Any]) -> ElementRef | None:
    try:
        return mark.ref(function)
    except ValueError:  # an empty name or URI: reported by the caller
        return None


def _declared_twice(source: str, ref: ElementRef, first: object, again: object) -> SourceDiagnostic:
    return _skipped(
        source,
        ref,
        f"declared twice, by {first} and by {again}; the first is kept: "
        "rename one (name=...) or drop one",
    )


def _skipped(source: str, ref: ElementRef | None, message: str) -> SourceDiagnostic:
    return SourceDiagnostic(source=source, kind="skipped", message=message, ref=ref)


def _attach(
    kept: Sequence[Marked],
    providers: Sequence[Provider],
    source: str,
    notes: list[SourceDiagnostic],
) -> dict[int, dict[str, Provider]]:
    """The providers of each kept declaration (by index); a diagnostic for each one dropped."""
    attached: dict[int, dict[str, Provider]] = {}
    for provider in providers:
        mark = provider.mark
        found = [
            index
            for index, entry in enumerate(kept)
            if entry.marks[0].kind in _COMPLETABLE and _targets(mark, entry, entry.marks[0])
        ]
        if len(found) != 1:
            target = mark.target if isinstance(mark.target, str) else _name(mark.target)
            problem = "matches no prompt or resource template" if not found else "is ambiguous"
            notes.append(
                _skipped(
                    source,
                    None,
                    f"completion provider {provider.origin} was dropped: @completion({target!r}, "
                    f"{mark.argument!r}) at {mark.where} {problem} in this source; give the marked "
                    "function, or the prompt's name or the template's uri_template",
                )
            )
            continue
        index = found[0]
        existing = attached.setdefault(index, {})
        entry = kept[index]
        element_mark = entry.marks[0]
        if mark.argument in existing:
            notes.append(
                _skipped(
                    source,
                    element_mark.ref(entry.function),
                    f"completion provider {provider.origin} at {mark.where} was dropped: "
                    f"{mark.argument!r} already has one, {existing[mark.argument].origin}; "
                    "keep one provider per argument",
                )
            )
            continue
        existing[mark.argument] = provider
    return attached


def _targets(mark: CompletionMark, entry: Marked, element_mark: ElementMark) -> bool:
    if isinstance(mark.target, str):
        return element_mark.key(entry.function) == mark.target
    # A bound method given to a source and the function a mark names are the same element.
    return _unbound(entry.function) is _unbound(mark.target)


def _derived(
    entry: Marked,
    mark: ElementMark,
    providers: Mapping[str, Provider],
    source: str,
    notes: list[SourceDiagnostic],
) -> Element | None:
    try:
        element = mark.derive(entry.function, handler=entry.handler, drop_first=entry.drop_first)
    except BaseException as exc:
        # Deriving evaluates the author's annotations and options: any failure is this
        # declaration's alone.
        if escapes(exc):
            raise
        ref = mark.ref(entry.function)
        notes.append(_skipped(source, ref, f"declared at {mark.where}: {_without(exc, ref)}"))
        return None
    if not providers:
        return element
    ref = element.ref
    arguments = _completable(element)
    completions = dict(element.completions or {})
    for argument, provider in providers.items():
        if argument in arguments:
            completions[argument] = provider.provider
            continue
        notes.append(
            _skipped(
                source,
                ref,
                f"completion provider {provider.origin} at {provider.mark.where} was dropped: "
                f"{ref} has no argument {argument!r} (it has {sorted(arguments)})",
            )
        )
    return dataclasses.replace(element, completions=completions or None)


def _completable(element: Element) -> set[str]:
    definition = element.definition
    if isinstance(definition, Prompt):
        return {argument.name for argument in definition.arguments or ()}
    if isinstance(definition, ResourceTemplate):
        return set(definition.template.variables)
    return set()


def _without(exc: BaseException, ref: ElementRef) -> str:
    # Diagnostics carry the ref as a field; a message that starts with it says it twice. Our
    # own errors say what to do; anything else is named by its type.
    # A diagnostic is one line, whatever the exception's text looks like.
    text = " ".join(str(exc).removeprefix(f"{ref}: ").split())
    if isinstance(exc, InvalidElementError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _name(function: object) -> str:
    module = getattr(function, "__module__", "?")
    qualname = getattr(function, "__qualname__", type(function).__qualname__)
    return f"{module}.{qualname}"


def _unbound(fn: object) -> object:
    return getattr(fn, "__func__", fn)
