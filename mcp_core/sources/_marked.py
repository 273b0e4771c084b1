"""Elements from marked callables, one at a time: a broken declaration costs only itself.

:class:`~mcp_core.sources.FunctionSource` and :class:`~mcp_core.sources.DiscoverySource` find
marked callables in different places (given functions, imported modules) and hand them here as
:class:`Marked` and :class:`Provider` records. :func:`build_elements` is the one place that turns
them into elements, and it never lets one declaration take the others down:

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    ResourceTemplate,
)
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import CompletionMark, ElementMark, escapes
from mcp_core.sources._diagnostics import SourceDiagnostic

__all__ = ["Marked", "Provider", "build_elements", "first_of_each_ref"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Marked:
    """One marked callable: what to derive from, its element marks, and what serves it.

    ``handler`` replaces ``function`` as the element's handler (a reference, for discovery);
    ``drop_first`` derives from an unbound method without ``self``/``cls``; ``origin`` names the
    callable in messages (``module.qualname`` or ``module:Class.method``).
    """

    function: Callable[..., Any]
    marks: tuple[ElementMark, ...]
    origin: str
    handler: object | None = None
    drop_first: bool = False


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


def build_elements(
    marked: Sequence[Marked], providers: Sequence[Provider], *, source: str
) -> tuple[ElementCollection, tuple[SourceDiagnostic, ...]]:
    """The elements ``marked`` declares, completions attached, and a diagnostic per skip.

    ``source`` describes the source in diagnostics. Never raises for a bad declaration.
    """
    notes: list[SourceDiagnostic] = []
    # Keyed by (kind, key), known from the mark without deriving; an ElementRef is built only
    # for a message (building 10k of them would show in a cold start).
    first: dict[tuple[ElementKind, str], Marked] = {}
    kept: list[tuple[Marked, ElementMark]] = []
    for entry in marked:
        mark = entry.marks[0]
        key = (mark.kind, mark.key(entry.function))
        if len(entry.marks) > 1:
            notes.append(
                _skipped(
                    source,
                    _ref_of(mark, entry.function),
                    f"{entry.origin} is marked twice: {entry.marks[0].describe()} and "
                    f"{entry.marks[1].describe()}; keep one mark",
                )
            )
        elif not key[1]:
            notes.append(
                _skipped(source, None, f"{entry.origin} ({mark.describe()}) has an empty key")
            )
        elif key in first:
            earlier = first[key]
            notes.append(
                _declared_twice(
                    source,
                    mark.ref(entry.function),
                    _Place(earlier.origin, earlier.marks[0]),
                    _Place(entry.origin, mark),
                )
            )
        else:
            first[key] = entry
            kept.append((entry, mark))
    attached = _attach(kept, providers, source, notes)
    elements: list[Element] = []
    for index, (entry, mark) in enumerate(kept):
        element = _derived(entry, mark, attached.get(index, {}), source, notes)
        if element is not None:
            elements.append(element)
    return ElementCollection(elements), tuple(notes)


@final
@dataclass(frozen=True, slots=True)
class _Place:
    """``origin at file:line``, worked out only when a message needs it."""

    origin: str
    mark: ElementMark

    def __str__(self) -> str:
        return f"{self.origin} at {self.mark.where}"


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
    kept: Sequence[tuple[Marked, ElementMark]],
    providers: Sequence[Provider],
    source: str,
    notes: list[SourceDiagnostic],
) -> dict[int, dict[str, Provider]]:
    """The providers of each kept declaration (by index); a diagnostic for each one dropped."""
    completable = ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE
    attached: dict[int, dict[str, Provider]] = {}
    for provider in providers:
        mark = provider.mark
        found = [
            index
            for index, (entry, element_mark) in enumerate(kept)
            if element_mark.kind in completable and _targets(mark, entry, element_mark)
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
        entry, element_mark = kept[index]
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
