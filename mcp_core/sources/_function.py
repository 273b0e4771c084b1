"""FunctionSource: elements from functions given by the application, derived when first provided."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, final

from mcp_core.elements import ElementCollection, ElementKind, ElementRef
from mcp_core.errors import DuplicateElementError, InvalidElementError
from mcp_core.handlers import CompletionMark, ElementMark, marks_of
from mcp_core.sources._diagnostics import callable_name

__all__ = ["FunctionSource"]

_UNMARKED = ElementMark(ElementKind.TOOL, {}, "FunctionSource(...)")


@final
class FunctionSource:
    """Provides one element per function, as its marks say; an unmarked function is a tool.

    Functions marked with :func:`~mcp_core.handlers.tool`, :func:`~mcp_core.handlers.prompt`,
    :func:`~mcp_core.handlers.resource` or :func:`~mcp_core.handlers.resource_template` become
    that element; functions marked with :func:`~mcp_core.handlers.completion` become the
    completion provider of their target (a function given here, or the key of an element given
    here). Handlers are the functions themselves, so the collection is not serializable (use
    :class:`DiscoverySource` for references).

    Construction reads the marks only: ``kinds()`` answers from them, and a function marked
    twice, two functions with one ref, or a completion without its target are reported at once
    (:class:`~mcp_core.errors.InvalidElementError`). Schemas are derived on the first
    ``provide()`` and the collection is kept, so ``provide()`` is idempotent.
    """

    __slots__ = ("_collection", "_completions", "_entries", "_kinds")

    def __init__(self, *functions: Callable[..., Any]) -> None:
        entries: list[tuple[Callable[..., Any], ElementMark]] = []
        completions: list[tuple[Callable[..., Any], CompletionMark]] = []
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"FunctionSource takes functions, got {type(fn).__name__} {fn!r}")
            marks = marks_of(fn)
            element_marks = [m for m in marks if isinstance(m, ElementMark)]
            completions.extend((fn, m) for m in marks if isinstance(m, CompletionMark))
            if len(element_marks) > 1:
                raise InvalidElementError(
                    f"{callable_name(fn)} is marked twice: "
                    f"{element_marks[0].describe()} and {element_marks[1].describe()}; keep one mark"
                )
            if element_marks:
                entries.append((fn, element_marks[0]))
            elif not marks:
                entries.append((fn, _UNMARKED))
        check_unique_refs(entries, where=callable_name)
        self._entries = tuple(entries)
        self._completions = attach_completions(self._entries, completions)
        self._kinds = ElementKind.NONE
        for _, mark in self._entries:
            self._kinds |= mark.kind
        self._collection: ElementCollection | None = None

    def __repr__(self) -> str:
        names = ", ".join(callable_name(fn) for fn, _ in self._entries[:3])
        more = f", ... {len(self._entries)} functions" if len(self._entries) > 3 else ""  # noqa: PLR2004 -- a short repr
        return f"FunctionSource({names}{more})"

    def kinds(self) -> ElementKind:
        """The kinds of the marked functions; derives nothing."""
        return self._kinds

    async def provide(self) -> ElementCollection:
        """The derived elements, in the order the functions were given (derived once, then kept).

        Raises:
            InvalidElementError: a function cannot be published as its mark says.
        """
        if self._collection is None:
            self._collection = ElementCollection(
                mark.derive(fn, completions=self._completions.get(index))
                for index, (fn, mark) in enumerate(self._entries)
            )
        return self._collection


def check_unique_refs(
    entries: Iterable[tuple[Any, ElementMark]], *, where: Callable[[Any], str]
) -> None:
    """Raise DuplicateElementError naming both places when two entries share a ref."""
    seen: dict[ElementRef, Any] = {}
    for fn, mark in entries:
        ref = mark.ref(fn)
        if ref in seen:
            raise DuplicateElementError(
                f"{ref} is defined twice, by {where(seen[ref])} and by {where(fn)}; rename one "
                "(name=...) or drop one",
                ref=ref,
            )
        seen[ref] = fn


def attach_completions(
    entries: tuple[tuple[Callable[..., Any], ElementMark], ...],
    completions: Iterable[tuple[object, CompletionMark]],
) -> dict[int, Mapping[str, object]]:
    """The completion providers of each entry (by index): ``(provider, mark)`` pairs attached.

    A provider is stored as given: the function itself, or a reference to it.
    """
    attached: dict[int, dict[str, object]] = {}
    for provider, mark in completions:
        index = _target_index(entries, mark)
        providers = attached.setdefault(index, {})
        if mark.argument in providers:
            raise InvalidElementError(
                f"{mark.argument!r} of {entries[index][1].ref(entries[index][0])} has two "
                f"completion providers; the second is marked at {mark.where}"
            )
        providers[mark.argument] = provider
    return dict(attached)


def _target_index(
    entries: tuple[tuple[Callable[..., Any], ElementMark], ...], mark: CompletionMark
) -> int:
    completable = ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE
    found = [
        index
        for index, (fn, element_mark) in enumerate(entries)
        if element_mark.kind in completable
        and (
            _unbound(fn) is _unbound(mark.target)
            if not isinstance(mark.target, str)
            else element_mark.key(fn) == mark.target
        )
    ]
    if len(found) != 1:
        target = mark.target if isinstance(mark.target, str) else callable_name(mark.target)
        problem = (
            "matches no prompt or resource template" if not found else "matches several elements"
        )
        raise InvalidElementError(
            f"@completion({target!r}, {mark.argument!r}) at {mark.where} {problem} in this "
            "source; give the marked function, or the prompt's name or the template's uri_template"
        )
    return found[0]


def _unbound(fn: object) -> object:
    # A bound method given to a source and the function a mark names are the same element.
    return getattr(fn, "__func__", fn)
