"""StaticSource: a collection that is already at hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import final

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.sources._trust import collection_targets

__all__ = ["StaticSource", "as_collection"]


def as_collection(value: object, *, owner: str, iterables: bool = False) -> ElementCollection:
    """``value`` as an ElementCollection, or a TypeError saying what ``owner`` expected.

    With ``iterables``, an iterable of elements is accepted and collected (a duplicate ref then
    raises :class:`~mcp_core.errors.DuplicateElementError`).
    """
    if isinstance(value, ElementCollection):
        return value
    if iterables and isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        return ElementCollection(value)
    expected = (
        "an ElementCollection or an iterable of Elements" if iterables else "an ElementCollection"
    )
    raise TypeError(
        f"{owner} expected {expected}, got {type(value).__name__}; "
        "build one with ElementCollection(elements)"
    )


@final
class StaticSource:
    """Provides one fixed collection: the precomputed case (a build step, a test, an app's own).

    ``kinds()`` is exactly the collection's kinds, and ``provide()`` returns the same value every
    time, so every source law holds by construction.
    """

    __slots__ = ("_collection",)

    def __init__(self, collection: ElementCollection) -> None:
        self._collection = as_collection(collection, owner="StaticSource")

    def __repr__(self) -> str:
        return f"StaticSource({self._collection!r})"

    @property
    def collection(self) -> ElementCollection:
        """The collection this source provides."""
        return self._collection

    def kinds(self) -> ElementKind:
        """The kinds present in the collection."""
        return self._collection.kinds

    async def provide(self) -> ElementCollection:
        """The collection."""
        return self._collection

    def handler_targets(self) -> frozenset[str]:
        """The HandlerRef targets of the collection: all this source can ever provide."""
        return collection_targets(self._collection)

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The collection's element at ``ref``, or None."""
        return self._collection.get(ref)

    def cache_inputs(self) -> Mapping[str, object]:
        """What the output depends on, for ``CachedSource`` keys: the collection's content hash."""
        return {"fingerprint": self._collection.fingerprint}
