"""The ElementSource protocol and the capabilities a source may add, each with its helper.

``ElementSource`` is what every source is: ``kinds()`` and ``provide()``. Everything else a
source may offer is a named, runtime-checkable capability Protocol below, so that its author sees
from the types what a registry, a server or a cache will ask of it, and mypy checks each use:

============================  ==================================  ===============================
capability                    method                              helper (follows ``inner``)
============================  ==================================  ===============================
:class:`ElementLookup`        ``async lookup(ref)``               :func:`lookup_in`
:class:`KindsPrefetch`        ``async prefetch_kinds()``          :func:`prefetch_kinds`
:class:`DiagnosticsReport`    ``diagnostics()``                   :func:`diagnostics_of`
:class:`HandlerTargets`       ``handler_targets()``               :func:`handler_targets_of`
:class:`CacheInputs`          ``cache_inputs()``                  :func:`source_identity`
:class:`RunningSource`        ``running()``                       :func:`source_chain`
:class:`ChangingSource`       ``subscribe(listener)``             :func:`source_chain`
:class:`Repairable`           ``async repair()``                  (the deployment's propagation)
:class:`WrappingSource`       ``inner``                           :func:`source_chain`
============================  ==================================  ===============================

A wrapper (:class:`WrappingSource`) writes only what it changes: each helper asks a source for
its own answer and, where the capability passes through a wrapper unchanged (read-ahead,
diagnostics, handler targets, identity, running, changes), goes on to the wrapped source. Only
``lookup`` is the wrapper's own business, since a wrapper changes what is found; a source
without it is answered by providing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import AbstractAsyncContextManager
from typing import Protocol, cast, runtime_checkable

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.sources._diagnostics import SourceDiagnostic

__all__ = [
    "CacheInputs",
    "ChangingSource",
    "DiagnosticsReport",
    "ElementLookup",
    "ElementSource",
    "HandlerTargets",
    "KindsPrefetch",
    "Repairable",
    "RunningSource",
    "WrappingSource",
    "diagnostics_of",
    "handler_targets_of",
    "lookup_in",
    "lookup_of",
    "prefetch_kinds",
    "source_chain",
    "source_identity",
]


@runtime_checkable
class ElementSource(Protocol):
    """Something that provides elements as an immutable value.

    A source never sees the registry: it returns an :class:`ElementCollection` and the registry
    decides what to do with it (precedence, isolation, caching). A source signals "my backend is
    down" by raising :class:`~mcp_core.errors.SourceUnavailableError`, which is distinct from
    returning an empty collection ("I have nothing").

    Laws:
        1. ``source.returns-collection``: ``provide()`` returns an ``ElementCollection`` and
           ``kinds()`` returns an ``ElementKind``.
        2. ``source.idempotent``: repeated ``provide()`` calls with no outside change return equal
           collections, however they interleave with other sources' calls (raising on some of
           them and not on others is no agreement).
        3. ``source.kinds-cover``: every provided element's kind is in ``kinds()``.
        4. ``source.kinds-without-provide``: ``kinds()`` answers without calling ``provide()``.
        5. ``source.json-roundtrip``: where the provided collection is serializable,
           ``ElementCollection.from_json(c.to_json()) == c``.
        6. ``source.lookup-agrees``: where the source also answers ``lookup(ref)``
           (:class:`ElementLookup`), the answer equals ``(await provide()).get(ref)`` for every
           ref, None included.
    """

    def kinds(self) -> ElementKind:
        """The kinds this source may provide, answered cheaply and without providing."""
        ...

    async def provide(self) -> ElementCollection:
        """The source's elements now; no side effects on anyone else."""
        ...


@runtime_checkable
class ElementLookup(Protocol):
    """Optional: a source that can answer one ref without materialising its whole collection.

    The per-name path of plugin systems and prefix dispatch: a call to one tool builds one
    plugin, or asks the database for one row, instead of providing everything. The reference
    ``Registry`` uses it to answer calls, reads and gets before (or without) a full load,
    following the same precedence as a full load. Wrappers pass it through to their inner source
    (answering by providing it when it has no ``lookup``).

    Laws:
        1. ``source.lookup-agrees``: ``await lookup(ref)`` equals
           ``(await provide()).get(ref)`` for every ref, with no outside change in between:
           the same element where ``provide()`` has one, None where it has none.
    """

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element ``provide()`` would hold at ``ref``, or None; may provide, need not."""
        ...


@runtime_checkable
class KindsPrefetch(Protocol):
    """Optional: a source (or registry) that reads ahead what keeps its ``kinds()`` cheap.

    ``kinds()`` is synchronous and must be cheap, yet some sources can answer it cheaply only
    from something asynchronous (``CachedSource``: the kinds recorded with its entry). A server
    calls :func:`prefetch_kinds` once before it advertises capabilities. It never provides.
    """

    async def prefetch_kinds(self) -> None:
        """Read ahead what ``kinds()`` needs; a failure leaves ``kinds()`` asking the slow way."""
        ...


@runtime_checkable
class DiagnosticsReport(Protocol):
    """Optional: a source (or registry) that says what it skipped, lost or served stale.

    The answer is the state of the most recent ``provide()``, not an ever-growing log. A
    wrapper reports only its own: :func:`diagnostics_of` adds the wrapped source's.
    """

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """What the last ``provide()`` could not serve as asked, and why."""
        ...


@runtime_checkable
class HandlerTargets(Protocol):
    """Optional: which handler references a source can produce, answered without providing.

    A ``HandlerRef`` is code, so a collection read back from a store that others can write may
    name only handlers its source could have produced (``CachedSource`` refuses the rest). A
    wrapper that keeps handlers as they are writes nothing: :func:`handler_targets_of` passes
    the wrapped source's answer through.

    Laws:
        1. ``source.handler-targets``: where ``handler_targets()`` is not None, it is a set of
           strings holding the target of every ``HandlerRef`` (handler and completion provider)
           that ``provide()`` returns.
    """

    def handler_targets(self) -> AbstractSet[str] | None:
        """Every HandlerRef target this source can provide, or None when it cannot say."""
        ...


@runtime_checkable
class CacheInputs(Protocol):
    """Optional: the configuration that determines a source's output, for cache keys.

    A JSON-able mapping (packages, filters, prefixes); two sources of one type with equal
    inputs are taken to provide the same collection. A wrapper gives only its own settings:
    :func:`source_identity` nests the wrapped source's identity.
    """

    def cache_inputs(self) -> Mapping[str, object]:
        """What determines this source's output, as a JSON-able mapping."""
        ...


@runtime_checkable
class RunningSource(Protocol):
    """Optional: a source that keeps something open while it is served.

    A source provides the same elements whether or not it is running; running only keeps
    connections (or a lifespan) open between calls instead of opening them per call. Entering
    ``running()`` while it is already entered elsewhere is allowed and shares the first entry
    (the first one entered owns what is open and closes it when it exits).
    """

    def running(self) -> AbstractAsyncContextManager[object]:
        """An async context manager keeping the source's connections (or lifespan) open."""
        ...


@runtime_checkable
class ChangingSource(Protocol):
    """Optional: a source that can tell when the elements it would provide have changed.

    A listener may return an awaitable that completes once the change has been taken in (the
    source provided again); a source that wants its writer to read its own writes awaits it
    (``SharedSource`` does), any other ignores it.
    """

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each change; returns a function that unsubscribes."""
        ...


@runtime_checkable
class Repairable(Protocol):
    """Optional: a source (or change bus) that writes back what a shared store lost.

    A deployment's change propagation calls ``repair()`` when a shared backend comes back; a
    truthy answer means something was written back (and is announced to the other workers).
    """

    async def repair(self) -> object:
        """Write back what the shared store lost; truthy when something was written."""
        ...


@runtime_checkable
class WrappingSource(Protocol):
    """A wrapper: a source holding the source it wraps as ``inner``.

    The capability helpers follow ``inner``, so a wrapper writes only what it changes.
    """

    @property
    def inner(self) -> ElementSource:
        """The wrapped source."""
        ...


def source_chain(source: object) -> Iterator[object]:
    """``source`` and the sources it wraps, outermost first (a cycle is walked once)."""
    seen: set[int] = set()
    current: object = source
    while id(current) not in seen:
        seen.add(id(current))
        yield current
        if not isinstance(current, WrappingSource):
            return
        current = current.inner


def lookup_of(source: object) -> Callable[[ElementRef], Awaitable[Element | None]] | None:
    """``source``'s ``lookup`` if its class offers :class:`ElementLookup`, else None.

    Decided by the class, as a handler object's kind is (ADR 0113): ``issubclass`` is cached per
    class, where ``isinstance`` against the protocol walks its members at every call on Python
    3.11 (about 4 µs, twice per call before or without a full load). A ``lookup`` set only on an
    instance does not count: the source is asked by providing it, which the protocol's law makes
    the same answer.
    """
    if issubclass(type(source), ElementLookup):
        return cast("ElementLookup", source).lookup
    return None


async def lookup_in(source: ElementSource, ref: ElementRef) -> Element | None:
    """``source``'s element at ``ref``: by its ``lookup`` when it has one, else by providing it."""
    lookup = lookup_of(source)
    if lookup is not None:
        return await lookup(ref)
    return (await source.provide()).get(ref)


async def prefetch_kinds(source: object) -> None:
    """Let ``source`` read ahead what its ``kinds()`` needs: its own, else its inner source's."""
    for found in source_chain(source):
        if isinstance(found, KindsPrefetch):
            await found.prefetch_kinds()
            return


def diagnostics_of(source: object) -> tuple[SourceDiagnostic, ...]:
    """The diagnostics of ``source`` and of every source it wraps, outermost first.

    A wrapper that also repeats its inner source's diagnostics is not counted twice.
    """
    found: dict[SourceDiagnostic, None] = {}
    for each in source_chain(source):
        if isinstance(each, DiagnosticsReport):
            own = each.diagnostics()
            if isinstance(own, Sequence):
                found.update((d, None) for d in own if isinstance(d, SourceDiagnostic))
    return tuple(found)


def handler_targets_of(source: object) -> frozenset[str] | None:
    """The handlers ``source`` can produce: its own answer, else its inner source's, else None.

    Raises:
        TypeError: the method answered something other than a set of strings or None.
    """
    for each in source_chain(source):
        if not isinstance(each, HandlerTargets):
            continue
        targets = each.handler_targets()
        if targets is None:
            return None
        if not isinstance(targets, AbstractSet) or not all(isinstance(t, str) for t in targets):
            raise TypeError(
                f"{type(each).__qualname__}.handler_targets() must return a set of HandlerRef "
                f"targets or None, got {targets!r}"
            )
        return frozenset(targets)
    return None


def source_identity(source: object) -> dict[str, object]:
    """What determines ``source``'s output, as far as it says: its type and ``cache_inputs()``.

    For a wrapper, the identity of its inner source too (under ``"inner"``), so a
    ``CachedSource`` over a chain of wrappers keys on the whole chain's configuration.
    """
    cls = type(source)
    inputs = source.cache_inputs() if isinstance(source, CacheInputs) else None
    identity: dict[str, object] = {"type": f"{cls.__module__}.{cls.__qualname__}", "inputs": inputs}
    if isinstance(source, WrappingSource):
        identity["inner"] = source_identity(source.inner)
    return identity
