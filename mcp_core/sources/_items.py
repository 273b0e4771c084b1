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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeGuard, final

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
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
    origins: dict[ElementRef, str] = field(default_factory=dict)

    @property
    def collection(self) -> ElementCollection:
        """The kept elements as a collection."""
        return ElementCollection(self.elements.values())

    def admit(self, element: Element, label: str, *, source: str, kinds: ElementKind) -> None:
        """Keep ``element`` (from the item ``label``) unless its kind or ref rules it out."""
        ref = element.ref
        if not element.kind & kinds:
            message = (
                f"{label} is a {element.kind.label} element, outside the declared "
                f"kinds={kinds.label or 'none'}; declare every kind the factory registers"
            )
        elif ref in self.elements:
            message = (
                f"{label} repeats {ref}, which {self.origins[ref]} holds first; this one is "
                "skipped (rename one of them)"
            )
        else:
            self.elements[ref] = element
            self.origins[ref] = label
            return
        self.diagnostics.append(
            SourceDiagnostic(source=source, kind="skipped", message=message, ref=ref)
        )


async def admit_items(
    items: Iterable[object],
    *,
    source: str,
    owner: str,
    kinds: ElementKind = ElementKind.ALL,
) -> Admitted:
    """Admit each item of ``items`` alone (see the module docstring); ``owner`` names the factory.

    ``source`` describes the source for the diagnostics; ``kinds`` are the kinds it declares.
    """
    admitted = Admitted()
    index = -1
    iterator: Iterator[object] = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            break
        except Exception as exc:  # noqa: BLE001 -- a failing iteration loses its rest, not what it gave
            admitted.diagnostics.append(
                SourceDiagnostic(
                    source=source,
                    kind="skipped",
                    message=(
                        f"{owner} raised {type(exc).__name__}: {exc} after {index + 1} items; "
                        f"the items after them were lost: {_BUILDERS}"
                    ),
                )
            )
            break
        index += 1
        label = f"{owner}, item {index}"
        elements = await _built(item, label, source, admitted.diagnostics)
        for element in elements:
            admitted.admit(element, label, source=source, kinds=kinds)
    return admitted


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
