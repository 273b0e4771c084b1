"""ValidatedSource: deep per-element checks that are too costly for construction."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Protocol, final, runtime_checkable

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.handlers import Admission, ElementLimits
from mcp_core.handlers._admission import DEFAULT_LIMITS
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name, describe_source
from mcp_core.sources._protocol import ElementSource, lookup_in

__all__ = ["ElementChecker", "ValidatedSource"]

_log = logging.getLogger("mcp_core.sources")


@runtime_checkable
class ElementChecker(Protocol):
    """Checks one element more deeply than construction can (e.g. that its handler resolves).

    ``mcp_core.handlers``' invoker is the usual implementation; an empty result means healthy.
    """

    def check(self, element: Element) -> Sequence[str]:
        """The element's problems, one readable sentence each; empty when it is fine."""
        ...


@final
class ValidatedSource:
    """Drops the inner source's individually invalid elements, with one diagnostic each.

    Law (``wrapper.transparent``): over a healthy inner source whose elements all pass, it
    provides exactly the inner source's collection (same elements, same order); in general it
    provides the inner collection minus the elements with problems, order kept. ``kinds()`` is
    the inner source's (dropping can only shrink what is provided).

    Checks, all too costly to run when a definition is constructed:

    - the admission checks a reference ``Registry`` applies when it builds its catalogue (see
      :class:`~mcp_core.handlers.Admission`): every tool's input and output schema against its
      JSON Schema meta-schema, with the validator the schema's ``$schema`` selects (Draft
      2020-12 when absent or unknown), format assertions included (so an invalid ``pattern``
      regex is caught), and nesting and size within ``limits``;
    - when ``invoker`` is given, the problems its ``check(element)`` returns; a ``check`` that
      raises counts as a problem of that element.

    Each dropped element gets a ``skipped`` diagnostic naming it (``ref``) and listing its
    problems (whoever serves the source logs it); the rest of the collection is unaffected.
    """

    __slots__ = ("_inner", "_admission", "_diagnostics", "_invoker")  # noqa: RUF023 -- the inner source comes first

    def __init__(
        self,
        inner: ElementSource,
        *,
        invoker: ElementChecker | None = None,
        limits: ElementLimits = DEFAULT_LIMITS,
    ) -> None:
        if invoker is not None and not isinstance(invoker, ElementChecker):
            raise TypeError(
                f"ValidatedSource invoker must have a check(element) method, got {type(invoker).__name__}"
            )
        self._inner = inner
        self._invoker = invoker
        self._admission = Admission(limits)
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        invoker = "" if self._invoker is None else f", invoker={type(self._invoker).__qualname__}"
        return f"ValidatedSource({describe_source(self._inner)}{invoker})"

    @property
    def inner(self) -> ElementSource:
        """The validated source."""
        return self._inner

    def kinds(self) -> ElementKind:
        """The inner source's kinds."""
        return self._inner.kinds()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The elements the last ``provide()`` dropped."""
        return self._diagnostics

    def cache_inputs(self) -> Mapping[str, object]:
        """The invoker's type and the limits (what decides what is dropped)."""
        invoker = None if self._invoker is None else callable_name(type(self._invoker))
        limits = self._admission.limits
        return {"invoker": invoker, "limits": [limits.max_depth, limits.max_bytes]}

    def problems(self, element: Element) -> list[str]:
        """Everything wrong with ``element`` (empty when it is healthy)."""
        found = self._admission.problems(element)
        if self._invoker is not None:
            try:
                found.extend(str(problem) for problem in self._invoker.check(element))
            except Exception as exc:  # noqa: BLE001 -- a crashing check is that element's problem, not everyone's
                found.append(f"the invoker's check raised {type(exc).__qualname__}: {exc}")
        return found

    async def provide(self) -> ElementCollection:
        """The inner source's collection minus its invalid elements."""
        collection = await self._inner.provide()
        kept: list[Element] = []
        notes: list[SourceDiagnostic] = []
        for element in collection:
            problems = self.problems(element)
            if not problems:
                kept.append(element)
                continue
            diagnostic = SourceDiagnostic(
                source=describe_source(self._inner),
                kind="skipped",
                message="; ".join(problems),
                ref=element.ref,
            )
            _log.debug("%s", diagnostic)
            notes.append(diagnostic)
        self._diagnostics = tuple(notes)
        return collection if not notes else ElementCollection(kept)

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The inner source's element at ``ref`` (its lookup) unless it has problems."""
        element = await lookup_in(self._inner, ref)
        return element if element is not None and not self.problems(element) else None
