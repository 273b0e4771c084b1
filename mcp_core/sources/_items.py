"""One factory's result, admitted element by element: one broken plugin costs only itself.

A plugin manager registers every plugin from one factory (``LazySource(factory)``, an entry
point naming a factory). What that factory returns is taken apart here, item by item:

- an :class:`~mcp_core.elements.Element` is kept unless an earlier item holds its ref (then it is
  skipped, naming both items);
- a *builder* — any other callable, e.g. a plugin's bound ``element`` method, a class, a
  ``functools.partial`` — is called with no arguments, on its own: whatever it raises
  (an invalid name, a constructor that fails) skips that item alone; it may return an element,
  an iterable of elements, or an awaitable of either;
- an element outside the kinds the source declares is skipped (the source still answers
  ``kinds()`` honestly);
- anything else is skipped, saying what was expected;
- an iteration that raises (a generator whose body failed building its next element) keeps what
  it yielded before, and says that the rest was lost and how to keep it: yield builders.

Every skip is one ``skipped`` :class:`SourceDiagnostic`; nothing here raises for an item.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeGuard, cast, final

from mcp_core.elements import SINGLE_KINDS, Element, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import InvalidElementError
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name

__all__ = ["Admitted", "admit_items", "is_item_iterable"]

_BUILDERS: Final = (
    "yield each plugin's builder instead (a callable returning its element, e.g. "
    "`plugin.element` without calling it), so one that fails costs only itself"
)


def is_item_iterable(value: object) -> TypeGuard[Iterable[object]]:
    """Whether ``value`` is an iterable of items (not a string, bytes or a mapping)."""
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


@final
@dataclass(slots=True)
class Admitted:
    """What :func:`admit_items` kept, in order, and one diagnostic per item it skipped."""

    elements: dict[ElementRef, Element] = field(default_factory=dict)
    diagnostics: list[SourceDiagnostic] = field(default_factory=list)
    whole: ElementCollection | None = None
    """Set when every item was an element and all were kept: the collection, built once."""

    @property
    def collection(self) -> ElementCollection:
        """The kept elements as a collection."""
        return self.whole if self.whole is not None else ElementCollection(self.elements.values())


async def admit_items(
    items: Iterable[object],
    *,
    source: str,
    owner: str,
    kinds: ElementKind = ElementKind.ALL,
) -> Admitted:
    """Admit each item of ``items`` alone (see the module docstring); ``owner`` names the factory.

    ``source`` describes the source for the diagnostics; ``kinds`` are the kinds it declares.
    Elements are the usual items, admitted in a tight loop (a factory may return 100k of them).
    """
    collected, failure = _collected(items, source=source, owner=owner)
    whole = _whole(collected, kinds) if failure is None else None
    if whole is not None:
        return Admitted(whole=whole)
    admitted = Admitted()
    elements = admitted.elements
    origins: dict[ElementRef, int] = {}
    # The single kinds declared, for an identity test per element (Flag's `&` is Python).
    allowed = {kind for kind in SINGLE_KINDS if kind & kinds}

    def label(index: int) -> str:
        return f"{owner}, item {index}"

    def admit(element: Element, index: int) -> None:
        ref = element.ref
        if ref.kind in allowed and ref not in elements:
            elements[ref] = element
            origins[ref] = index
            return
        if ref.kind not in allowed:
            message = (
                f"{label(index)} is a {element.kind.label} element, outside the declared "
                f"kinds={kinds.label or 'none'}; declare every kind the factory registers"
            )
        else:
            message = (
                f"{label(index)} repeats {ref}, which {label(origins[ref])} holds first; this "
                "one is skipped (rename one of them)"
            )
        admitted.diagnostics.append(
            SourceDiagnostic(source=source, kind="skipped", message=message, ref=ref)
        )

    for index, item in enumerate(collected):
        if type(item) is Element:
            admit(item, index)
            continue
        for element in await _built(item, label(index), source, admitted.diagnostics):
            admit(element, index)
    if failure is not None:
        admitted.diagnostics.append(failure)
    return admitted


def _collected(
    items: Iterable[object], *, source: str, owner: str
) -> tuple[list[object], SourceDiagnostic | None]:
    """The items, iterated first and on their own: a generator that fails keeps what it yielded."""
    collected: list[object] = []
    try:
        collected.extend(items)  # appends as it goes: what came before a failure stays
    except Exception as exc:  # noqa: BLE001 -- a failing iteration loses its rest, not what it gave
        return collected, SourceDiagnostic(
            source=source,
            kind="skipped",
            message=(
                f"{owner} raised {type(exc).__name__}: {exc} after {len(collected)} items; "
                f"the items after them were lost: {_BUILDERS}"
            ),
        )
    return collected, None


def _whole(items: list[object], kinds: ElementKind) -> ElementCollection | None:
    """``items`` as one collection when they are all healthy elements of ``kinds``.

    The usual result, built in one pass; anything else (a builder, a repeat, another kind)
    takes the item-by-item path.
    """
    try:
        # ElementCollection checks that each item is an Element (InvalidElementError if not).
        whole = ElementCollection(cast("list[Element]", items))
    except InvalidElementError:
        return None
    return whole if not whole.kinds & ~kinds else None


async def _built(
    item: object, label: str, source: str, diagnostics: list[SourceDiagnostic]
) -> list[Element]:
    """The elements one item stands for; a diagnostic (and none) when it cannot be built."""
    if isinstance(item, Element):
        return [item]
    what = item
    if callable(item):
        try:
            what = item()
            if inspect.isawaitable(what):
                what = await what
        except Exception as exc:  # noqa: BLE001 -- a failing builder costs only its item
            diagnostics.append(
                SourceDiagnostic(
                    source=source,
                    kind="skipped",
                    message=(
                        f"{label} ({_builder_name(item)}) raised {type(exc).__name__}: {exc}; "
                        "the other items are served; fix this one"
                    ),
                )
            )
            return []
    if isinstance(what, Element):
        return [what]
    if is_item_iterable(what):
        found: list[Element] = []
        for inner in what:
            if isinstance(inner, Element):
                found.append(inner)
            else:
                diagnostics.append(_stray(label, source, inner))
        return found
    diagnostics.append(_stray(label, source, what))
    return []


def _builder_name(builder: object) -> str:
    """The builder's name for a message: a partial by the function it wraps."""
    if isinstance(builder, functools.partial):
        return f"partial({callable_name(builder.func)}, ...)"
    return callable_name(builder)


def _stray(label: str, source: str, value: object) -> SourceDiagnostic:
    return SourceDiagnostic(
        source=source,
        kind="skipped",
        message=(
            f"{label} is a {type(value).__name__}, not an Element or a callable building one "
            "(or an iterable of them); leave it out or wrap it in an Element"
        ),
    )
