"""Structural differences between what a law expected and what a target gave, for the reports.

Two unequal collections or catalogues are described by what is missing, what is extra, and, for
an element present on both sides, which fields differ and how, rather than by two reprs that
look alike.
"""

from __future__ import annotations

import reprlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from mcp_core.elements import Definition, Element, ElementCollection, ElementRef

__all__ = ["diff_collections", "diff_definitions", "diff_elements", "diff_lists"]

_MAX_ITEMS: Final = 6


def _brief(value: object) -> str:
    short = reprlib.Repr()
    short.maxstring = short.maxother = 60
    short.maxlist = short.maxdict = 4
    return short.repr(value)


def diff_definitions(expected: Definition, got: Definition) -> list[str]:
    """``field: expected -> got`` for each wire field that differs (the wire shape is the contract)."""
    if type(expected) is not type(got):
        return [f"a {type(got).__name__} instead of a {type(expected).__name__}"]
    before, after = expected.to_wire(), got.to_wire()
    return [
        f"{key}: {_brief(before.get(key))} -> {_brief(after.get(key))}"
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


def diff_elements(expected: Element, got: Element) -> list[str]:
    """What differs between two elements at one ref: definition fields, handler, completions, tags."""
    found = diff_definitions(expected.definition, got.definition)
    if expected.handler != got.handler:
        found.append(f"handler: {_brief(expected.handler)} -> {_brief(got.handler)}")
    if dict(expected.completions or {}) != dict(got.completions or {}):
        found.append(
            f"completions: {_brief(dict(expected.completions or {}))} -> "
            f"{_brief(dict(got.completions or {}))}"
        )
    if expected.tags != got.tags:
        found.append(f"tags: {sorted(expected.tags)} -> {sorted(got.tags)}")
    return found or ["equal fields, yet unequal (handler objects that compare unequal)"]


def _listed(items: Sequence[str], label: str) -> str:
    shown = ", ".join(items[:_MAX_ITEMS])
    more = f" and {len(items) - _MAX_ITEMS} more" if len(items) > _MAX_ITEMS else ""
    return f"{label} {shown}{more}"


def diff_collections(expected: ElementCollection, got: object) -> str:
    """What ``got`` lacks, adds or changes compared with ``expected``, element by element."""
    if not isinstance(got, ElementCollection):
        return f"it returned {type(got).__qualname__}, not an ElementCollection"
    return _diff_by_ref(
        {e.ref: e for e in expected},
        {e.ref: e for e in got},
        order=(list(expected.refs), list(got.refs)),
        show=str,
        fields=diff_elements,
    )


def diff_lists(
    expected: Iterable[Definition],
    got: Iterable[Definition],
    *,
    show: Callable[[Definition], str],
) -> str:
    """What a listed sequence of definitions lacks, adds or changes compared with ``expected``."""
    before, after = list(expected), list(got)
    twice = [str(ref) for ref, count in Counter(d.ref for d in after).items() if count > 1]
    if twice:
        return _listed(twice, "listed more than once:")
    return _diff_by_ref(
        {d.ref: d for d in before},
        {d.ref: d for d in after},
        order=([d.ref for d in before], [d.ref for d in after]),
        show=lambda ref: show_at(ref, before, after, show),
        fields=diff_definitions,
    )


def show_at(
    ref: ElementRef,
    before: Sequence[Definition],
    after: Sequence[Definition],
    show: Callable[[Definition], str],
) -> str:
    """``show`` of the definition at ``ref`` on whichever side has it."""
    for definition in (*before, *after):
        if definition.ref == ref:
            return show(definition)
    return str(ref)


def _diff_by_ref(
    before: Mapping[ElementRef, Any],
    after: Mapping[ElementRef, Any],
    *,
    order: tuple[list[ElementRef], list[ElementRef]],
    show: Callable[[ElementRef], str],
    fields: Callable[[Any, Any], list[str]],
) -> str:
    missing = [show(ref) for ref in before if ref not in after]
    extra = [show(ref) for ref in after if ref not in before]
    changed = [
        f"{show(ref)}: {'; '.join(fields(value, after[ref]))}"
        for ref, value in before.items()
        if ref in after and after[ref] != value
    ]
    parts = [
        _listed(items, label)
        for items, label in ((missing, "missing"), (extra, "extra"), (changed, "changed"))
        if items
    ]
    if not parts and order[0] != order[1]:
        parts.append(f"same elements in another order: {[str(r) for r in order[1]]}")
    return "; ".join(parts) or "no difference"
