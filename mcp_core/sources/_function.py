"""FunctionSource: elements from functions given by the application, derived when first needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, final

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.handlers._decorators import CompletionMark, ElementMark, marks_of
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name
from mcp_core.sources._marked import Declarations, Marked, Provider, derive_all

__all__ = ["FunctionSource", "declared_kind"]

_UNMARKED = ElementMark(ElementKind.TOOL, {}, None, "FunctionSource(...)")


def declared_kind(fn: object) -> ElementKind:
    """The kind of element ``fn`` declares for a FunctionSource, from its marks alone.

    Its element mark's kind (the first one's, if it carries several), a tool when it carries no
    mark, nothing when it only completes another element.
    """
    marks = marks_of(fn)
    for mark in marks:
        if isinstance(mark, ElementMark):
            return mark.kind
    return ElementKind.TOOL if not marks else ElementKind.NONE


@final
class FunctionSource:
    """Provides one element per function, as its marks say; an unmarked function is a tool.

    Functions marked with :func:`~mcp_core.handlers.tool`, :func:`~mcp_core.handlers.prompt`,
    :func:`~mcp_core.handlers.resource` or :func:`~mcp_core.handlers.resource_template` become
    that element; functions marked with :func:`~mcp_core.handlers.completion` become the
    completion provider of their target (a function given here, or the key of an element given
    here). Handlers are the functions themselves, so the collection is not serializable (use
    :class:`DiscoverySource` for references).

    Nothing is derived before it is needed: ``kinds()`` answers from the marks;
    ``lookup(ref)`` (per-name resolution, see :class:`~mcp_core.sources.ElementLookup`) derives
    the one function a ref names, so a call before any list costs one derivation, not the
    catalogue's; ``provide()`` derives the rest, in stretches that let other requests through,
    and keeps the collection, so it is idempotent. Each function is derived once.

    A broken declaration costs only itself: a function marked twice, a second function with the
    same ref (the first is kept), a completion provider without its target, or a function that
    cannot be published as marked (an invalid name, a malformed URI template, an annotation that
    does not resolve...) is left out, with one ``skipped`` diagnostic each from
    :meth:`diagnostics` naming the element, where it was declared, and the fix.
    """

    __slots__ = ("_declarations", "_diagnostics", "_functions", "_kinds")

    def __init__(self, *functions: Callable[..., Any]) -> None:
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"FunctionSource takes functions, got {type(fn).__name__} {fn!r}")
        self._functions = functions
        self._kinds: ElementKind | None = None
        self._declarations: Declarations | None = None
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        names = ", ".join(callable_name(fn) for fn in self._functions[:3])
        more = f", ... {len(self._functions)} functions" if len(self._functions) > 3 else ""  # noqa: PLR2004 -- a short repr
        return f"FunctionSource({names}{more})"

    def kinds(self) -> ElementKind:
        """The kinds of the marked functions; derives nothing."""
        if self._kinds is None:
            kinds = ElementKind.NONE
            for fn in self._functions:
                kinds |= declared_kind(fn)
            self._kinds = kinds
        return self._kinds

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element ``provide()`` holds at ``ref``, deriving only that function (or None)."""
        return self._declared().lookup(ref)

    async def provide(self) -> ElementCollection:
        """The derived elements, in the order the functions were given (derived once, then kept).

        Declarations that cannot be published are left out; see :meth:`diagnostics`.
        """
        collection, self._diagnostics = await derive_all(self._declared())
        return collection

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """One ``skipped`` diagnostic per declaration left out (after the first ``provide()``)."""
        return self._diagnostics

    def _declared(self) -> Declarations:
        if self._declarations is None:
            # Read as they are indexed (in stretches, by the first provide()): marks are looked
            # up then, so building this costs nothing before the first request.
            providers: list[Provider] = []
            self._declarations = Declarations(self._marked(providers), providers, source=repr(self))
        return self._declarations

    def _marked(self, providers: list[Provider]) -> Iterator[Marked]:
        """Each function as a :class:`Marked` record; its completion marks go to ``providers``."""
        for fn in self._functions:
            marks = marks_of(fn)
            if not marks:
                yield Marked(fn, (_UNMARKED,))
                continue
            if len(marks) == 1 and isinstance(marks[0], ElementMark):
                yield Marked(fn, marks)  # type: ignore[arg-type]  # checked just above
                continue
            element_marks = tuple(m for m in marks if isinstance(m, ElementMark))
            if len(element_marks) != len(marks):
                providers.extend(
                    Provider(provider=fn, mark=m, origin=callable_name(fn))
                    for m in marks
                    if isinstance(m, CompletionMark)
                )
            if element_marks:
                yield Marked(fn, element_marks)
