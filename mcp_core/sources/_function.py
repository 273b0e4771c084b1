"""FunctionSource: elements from functions given by the application, derived when first provided."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, final

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.handlers import CompletionMark, ElementMark, marks_of
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name
from mcp_core.sources._marked import Marked, Provider, build_elements

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

    Construction reads the marks only, so ``kinds()`` answers from them. Schemas are derived on
    the first ``provide()`` and the collection is kept, so ``provide()`` is idempotent.

    A broken declaration costs only itself: a function marked twice, a second function with the
    same ref (the first is kept), a completion provider without its target, or a function that
    cannot be published as marked (an invalid name, a malformed URI template, an annotation that
    does not resolve...) is left out, with one ``skipped`` diagnostic each from
    :meth:`diagnostics` naming the element, where it was declared, and the fix.
    """

    __slots__ = ("_collection", "_diagnostics", "_kinds", "_marked", "_providers")

    def __init__(self, *functions: Callable[..., Any]) -> None:
        marked: list[Marked] = []
        providers: list[Provider] = []
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"FunctionSource takes functions, got {type(fn).__name__} {fn!r}")
            marks = marks_of(fn)
            element_marks = tuple(m for m in marks if isinstance(m, ElementMark))
            providers.extend(
                Provider(provider=fn, mark=m, origin=callable_name(fn))
                for m in marks
                if isinstance(m, CompletionMark)
            )
            if element_marks or not marks:
                marked.append(
                    Marked(
                        function=fn, marks=element_marks or (_UNMARKED,), origin=callable_name(fn)
                    )
                )
        self._marked = tuple(marked)
        self._providers = tuple(providers)
        self._kinds = ElementKind.NONE
        for entry in self._marked:
            self._kinds |= entry.marks[0].kind
        self._collection: ElementCollection | None = None
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        names = ", ".join(entry.origin for entry in self._marked[:3])
        more = f", ... {len(self._marked)} functions" if len(self._marked) > 3 else ""  # noqa: PLR2004 -- a short repr
        return f"FunctionSource({names}{more})"

    def kinds(self) -> ElementKind:
        """The kinds of the marked functions; derives nothing."""
        return self._kinds

    async def provide(self) -> ElementCollection:
        """The derived elements, in the order the functions were given (derived once, then kept).

        Declarations that cannot be published are left out; see :meth:`diagnostics`.
        """
        if self._collection is None:
            self._collection, self._diagnostics = build_elements(
                self._marked, self._providers, source=repr(self)
            )
        return self._collection

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """One ``skipped`` diagnostic per declaration left out (after the first ``provide()``)."""
        return self._diagnostics
