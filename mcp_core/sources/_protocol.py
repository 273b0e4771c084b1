"""The ElementSource protocol."""

from __future__ import annotations

from typing import Protocol

from mcp_core.elements import ElementCollection, ElementKind

__all__ = ["ElementSource"]


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
    """

    def kinds(self) -> ElementKind:
        """The kinds this source may provide, answered cheaply and without providing."""
        ...

    async def provide(self) -> ElementCollection:
        """The source's elements now; no side effects on anyone else."""
        ...
