"""Small wrappers, one behaviour each: isolate failures, filter elements, prefix names.

Every wrapper keeps its inner source as its first field (``inner``, a
:class:`~mcp_core.sources.WrappingSource`), answers ``kinds()`` from the inner source's without
providing, answers ``lookup(ref)`` through it (see :class:`~mcp_core.sources.ElementLookup`), and
states its law in its docstring; the conformance kit checks each law. A wrapper writes only what
it changes: the capability helpers (:func:`~mcp_core.sources.diagnostics_of`,
:func:`~mcp_core.sources.handler_targets_of`, :func:`~mcp_core.sources.prefetch_kinds`,
:func:`~mcp_core.sources.source_identity`) follow ``inner`` for the rest. ``CachedSource`` and
``ValidatedSource`` live in their own modules.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final, assert_never, final

from mcp_core.elements import (
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import InvalidElementError, SourceUnavailableError
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name, describe_source
from mcp_core.sources._protocol import ElementSource, lookup_in

__all__ = ["FilteredSource", "IsolatedSource", "PrefixedSource"]

_log = logging.getLogger("mcp_core.sources")


@final
class IsolatedSource:
    """Turns a raising inner source into its last good collection plus a diagnostic.

    Law (``wrapper.transparent``): over a healthy inner source, ``provide()`` returns exactly what
    the inner source provides and records nothing; ``kinds()`` is the inner source's.

    When the inner source raises (any ``Exception``; cancellation is never swallowed),
    ``provide()`` returns the last collection it provided successfully, or an empty collection if
    it never did, records one diagnostic — ``unavailable`` for
    :class:`~mcp_core.errors.SourceUnavailableError`, ``failed`` for anything else; the message
    carries the exception's type and text — and logs a warning (with the traceback for a
    failure). The next successful ``provide()`` replaces the last good collection and clears the
    diagnostic.

    A reference ``Registry`` already isolates every source; use this wrapper to give the same
    guarantee to code that calls a source directly, or inside other wrappers (e.g. to keep a
    ``CachedSource``'s write path from ever seeing an exception).
    """

    __slots__ = ("_inner", "_diagnostics", "_last_good")  # noqa: RUF023 -- the inner source comes first

    def __init__(self, inner: ElementSource) -> None:
        self._inner = inner
        self._last_good: ElementCollection | None = None
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        return f"IsolatedSource({describe_source(self._inner)})"

    @property
    def inner(self) -> ElementSource:
        """The isolated source."""
        return self._inner

    @property
    def last_good(self) -> ElementCollection | None:
        """The last collection the inner source provided successfully, if any."""
        return self._last_good

    def kinds(self) -> ElementKind:
        """The inner source's kinds."""
        return self._inner.kinds()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The failure of the last ``provide()``, if it failed."""
        return self._diagnostics

    async def provide(self) -> ElementCollection:
        """The inner source's collection; on failure, the last good one (or empty)."""
        try:
            collection = await self._inner.provide()
        except Exception as exc:  # noqa: BLE001 -- isolating any failure is this wrapper's purpose
            unavailable = isinstance(exc, SourceUnavailableError)
            fallback = self._last_good
            served = (
                f"serving its last good collection ({len(fallback)} elements)"
                if fallback is not None
                else "serving nothing until it recovers"
            )
            diagnostic = SourceDiagnostic(
                source=describe_source(self._inner),
                kind="unavailable" if unavailable else "failed",
                message=f"{type(exc).__qualname__}: {exc}; {served}",
            )
            self._diagnostics = (diagnostic,)
            _log.warning("%s", diagnostic, exc_info=None if unavailable else exc)
            return fallback if fallback is not None else ElementCollection()
        self._last_good = collection
        self._diagnostics = ()
        return collection

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The inner source's element at ``ref``; on failure, the last good collection's (or None).

        A failing lookup records no diagnostic: the next ``provide()`` reports the source's state.
        """
        try:
            return await lookup_in(self._inner, ref)
        except Exception:  # noqa: BLE001 -- isolating any failure is this wrapper's purpose
            _log.warning("%s: lookup(%s) failed", self, ref, exc_info=True)
            return self._last_good.get(ref) if self._last_good is not None else None


@final
class FilteredSource:
    """Keeps the inner source's elements for which ``predicate(element)`` is true, in order.

    Law (declared relation, ``wrapper.transparent`` for a predicate that keeps everything):
    ``provide()`` returns ``ElementCollection(e for e in inner_collection if keep(e))`` where
    ``keep(e)`` is ``predicate(e)`` and, when ``kinds`` is declared, ``e``'s kind is in ``kinds``.

    ``kinds()`` is the inner source's kinds, narrowed to the declared ``kinds`` if given. Without
    a declaration it may over-advertise (a predicate that drops every prompt still advertises
    prompts) because the predicate cannot be asked without providing; declare ``kinds`` to
    advertise honestly, and the filter then enforces the declaration too.

    ``predicate`` is a plain synchronous callable; an exception from it propagates.
    """

    __slots__ = ("_inner", "_kinds", "_predicate")

    def __init__(
        self,
        inner: ElementSource,
        predicate: Callable[[Element], bool],
        *,
        kinds: ElementKind | None = None,
    ) -> None:
        if not callable(predicate):
            raise TypeError(
                f"FilteredSource needs a callable predicate, got {type(predicate).__name__}"
            )
        self._inner = inner
        self._predicate = predicate
        self._kinds = kinds

    def __repr__(self) -> str:
        kinds = "" if self._kinds is None else f", kinds={self._kinds.label or 'none'}"
        return f"FilteredSource({describe_source(self._inner)}, {callable_name(self._predicate)}{kinds})"

    @property
    def inner(self) -> ElementSource:
        """The filtered source."""
        return self._inner

    def kinds(self) -> ElementKind:
        """The inner source's kinds, narrowed to the declared ones if any."""
        inner = self._inner.kinds()
        return inner if self._kinds is None else inner & self._kinds

    def cache_inputs(self) -> Mapping[str, object]:
        """The predicate's qualified name and the declared kinds.

        Two different lambdas in one scope share a qualified name: give a ``CachedSource`` an
        explicit ``key`` when that matters.
        """
        return {
            "predicate": callable_name(self._predicate),
            "kinds": None if self._kinds is None else self._kinds.label,
        }

    async def provide(self) -> ElementCollection:
        """The inner source's elements that pass the predicate (and the declared kinds)."""
        collection = await self._inner.provide()
        allowed = ElementKind.ALL if self._kinds is None else self._kinds
        kept = [e for e in collection if e.kind & allowed and self._predicate(e)]
        return collection if len(kept) == len(collection) else ElementCollection(kept)

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The inner source's element at ``ref`` if it passes the filter (the inner's lookup)."""
        if self._kinds is not None and not ref.kind & self._kinds:
            return None
        element = await lookup_in(self._inner, ref)
        return element if element is not None and self._predicate(element) else None


# A prefix must be usable both as the head of a tool/prompt name and as a URI scheme: letters,
# digits, '.' and '-' (RFC 3986 scheme characters minus '+', which the URI rule uses as its
# separator), starting with a letter.
_PREFIX: Final = re.compile(r"[A-Za-z][A-Za-z0-9.\-]*")
_SEPARATOR: Final = re.compile(r"[A-Za-z0-9_.\-]+")


@final
class PrefixedSource:
    """Namespaces the inner source's elements, so several apps can be mounted side by side.

    Renaming rule (reversible, and the same for every element of a kind):

    - tools and prompts: ``name`` becomes ``prefix + separator + name`` (``"add"`` ->
      ``"math_add"``);
    - resources and resource templates: the prefix joins the URI scheme, the way ``git+https``
      does: ``uri`` becomes ``prefix + "+" + uri`` (``"file:///notes.txt"`` ->
      ``"math+file:///notes.txt"``, ``"app://items/{id}"`` -> ``"math+app://items/{id}"``). The
      result is still an absolute URI (a scheme may contain ``+``), the authority, path and every
      template expression are untouched, so a template still parses and matches the same
      variables; stripping ``prefix + "+"`` gives the original back.

    Handlers, completions, tags and every other field are unchanged. The prefix is validated
    when the source is created: it must start with a letter and use only letters, digits, ``.``
    and ``-`` (a valid URI scheme and a valid tool-name head); ``separator`` must use tool-name
    characters. An element whose renamed name is invalid (a tool name longer than the
    specification's 128 characters) costs only itself: ``provide()`` leaves it out and
    :meth:`diagnostics` says which and why.

    Law (declared relation, checked by the kit in place of ``wrapper.transparent``):
    ``provide()`` returns exactly the inner source's elements, in order, each with
    ``element.ref`` replaced by :meth:`rename` of it, except those the renaming makes invalid.
    ``kinds()`` is the inner source's.
    """

    __slots__ = ("_inner", "_prefix", "_separator", "_skipped")

    def __init__(self, inner: ElementSource, prefix: str, *, separator: str = "_") -> None:
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            raise ValueError(
                f"PrefixedSource prefix {prefix!r} must start with a letter and use only letters, "
                "digits, '.' and '-' (it heads tool names and joins URI schemes), e.g. 'math'"
            )
        if not isinstance(separator, str) or not _SEPARATOR.fullmatch(separator):
            raise ValueError(
                f"PrefixedSource separator {separator!r} must be one or more of letters, digits, "
                "'_', '.' and '-' (characters a tool name may hold)"
            )
        self._inner = inner
        self._prefix = prefix
        self._separator = separator
        self._skipped: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        separator = "" if self._separator == "_" else f", separator={self._separator!r}"
        return f"PrefixedSource({describe_source(self._inner)}, {self._prefix!r}{separator})"

    @property
    def inner(self) -> ElementSource:
        """The prefixed source."""
        return self._inner

    @property
    def prefix(self) -> str:
        """The namespace prefix."""
        return self._prefix

    def kinds(self) -> ElementKind:
        """The inner source's kinds (renaming never changes a kind)."""
        return self._inner.kinds()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The elements the last renaming left out."""
        return self._skipped

    def cache_inputs(self) -> Mapping[str, object]:
        """The prefix and the separator."""
        return {"prefix": self._prefix, "separator": self._separator}

    def rename(self, ref: ElementRef) -> ElementRef:
        """The ref an inner element at ``ref`` has once prefixed."""
        return ElementRef(ref.kind, self._renamed_key(ref.kind, ref.key))

    def unrename(self, ref: ElementRef) -> ElementRef | None:
        """The inner ref that :meth:`rename` maps to ``ref``; None when ``ref`` is not prefixed here."""
        head = self._head(ref.kind)
        inner_key = ref.key.removeprefix(head)
        return ElementRef(ref.kind, inner_key) if inner_key != ref.key and inner_key else None

    def _head(self, kind: ElementKind) -> str:
        if kind in (ElementKind.TOOL, ElementKind.PROMPT):
            return f"{self._prefix}{self._separator}"
        return f"{self._prefix}+"

    def _renamed_key(self, kind: ElementKind, key: str) -> str:
        return f"{self._head(kind)}{key}"

    async def provide(self) -> ElementCollection:
        """The inner source's elements, renamed."""
        collection = await self._inner.provide()
        kept: list[Element] = []
        skipped: list[SourceDiagnostic] = []
        for element in collection:
            try:
                kept.append(self._renamed(element))
            except InvalidElementError as exc:
                diagnostic = SourceDiagnostic(
                    source=repr(self), kind="skipped", message=str(exc), ref=element.ref
                )
                _log.warning("%s", diagnostic)
                skipped.append(diagnostic)
        self._skipped = tuple(skipped)
        return ElementCollection(kept)

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The renamed inner element at ``ref``; a ref outside this prefix never reaches the inner.

        Prefix dispatch: a call to ``math_add`` asks only the source mounted at ``math``.
        """
        inner_ref = self.unrename(ref)
        if inner_ref is None:
            return None
        element = await lookup_in(self._inner, inner_ref)
        if element is None:
            return None
        try:
            return self._renamed(element)
        except InvalidElementError:  # left out of provide(): it does not exist here either
            return None

    def _renamed(self, element: Element) -> Element:
        try:
            definition = self._renamed_definition(element.definition)
        except InvalidElementError as exc:
            raise InvalidElementError(
                f"{self!r}: prefixing {element.ref} gives an invalid element: {exc}; "
                "use a shorter prefix or rename the element",
                ref=element.ref,
                field=exc.field,
            ) from exc
        return dataclasses.replace(element, definition=definition)

    def _renamed_definition(self, definition: Definition) -> Definition:
        key = self._renamed_key(definition.ref.kind, definition.ref.key)
        match definition:
            case Tool() | Prompt():
                return dataclasses.replace(definition, name=key)
            case Resource():
                return dataclasses.replace(definition, uri=key)
            case ResourceTemplate():
                return dataclasses.replace(definition, uri_template=key)
            case _:
                assert_never(definition)
