"""The ElementSource protocol, and ElementLookup: the optional per-name capability."""

from __future__ import annotations

from typing import Protocol

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef

__all__ = ["ElementLookup", "ElementSource", "lookup_in", "prefetch_kinds"]


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


# Optional, beside the protocol: ``async def prefetch_kinds(self) -> None`` reads ahead what lets
# ``kinds()`` stay cheap (CachedSource: the kinds recorded with its entry); wrappers pass it on.


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


async def lookup_in(source: ElementSource, ref: ElementRef) -> Element | None:
    """``source``'s element at ``ref``: by its ``lookup`` when it has one, else by providing it."""
    lookup = getattr(source, "lookup", None)
    if callable(lookup):
        found: Element | None = await lookup(ref)
        return found
    return (await source.provide()).get(ref)


async def prefetch_kinds(source: ElementSource) -> None:
    """Let ``source`` read ahead what its ``kinds()`` needs, if it has ``prefetch_kinds()``.

    ``kinds()`` is synchronous and must be cheap, yet some sources can only answer it cheaply from
    something asynchronous (a cache store); a server calls this once before it advertises
    capabilities. A source without the method needs nothing.
    """
    prefetch = getattr(source, "prefetch_kinds", None)
    if callable(prefetch):
        await prefetch()
