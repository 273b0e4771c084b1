"""Which handler references a source can produce: what a cached copy of its output may name.

A :class:`~mcp_core.elements.HandlerRef` is code: ``"subprocess:getoutput"`` imports and runs
whatever it names. A collection read back from a store that others can write must therefore
name only handlers its source could have produced. A source says which with an optional method,
answered without providing (like ``kinds()``)::

    def handler_targets(self) -> frozenset[str] | None:
        '''Every HandlerRef target (handlers and completion providers) this source can provide,
        or None when it cannot say.'''

``StaticSource`` answers with its collection's targets, ``DiscoverySource`` with the marked
callables of its modules, and wrappers that keep handlers as they are pass their inner source's
answer through.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from mcp_core.elements import ElementCollection, ElementRef, HandlerRef

__all__ = ["collection_targets", "foreign_targets", "handler_targets_of"]


def handler_targets_of(source: object) -> frozenset[str] | None:
    """``source.handler_targets()`` when the source says which handlers it can produce, else None.

    Raises:
        TypeError: the method answered something other than a set of strings or None.
    """
    method = getattr(source, "handler_targets", None)
    if not callable(method):
        return None
    targets = method()
    if targets is None:
        return None
    if not isinstance(targets, AbstractSet) or not all(isinstance(t, str) for t in targets):
        raise TypeError(
            f"{type(source).__qualname__}.handler_targets() must return a set of HandlerRef "
            f"targets or None, got {targets!r}"
        )
    return frozenset(targets)


def collection_targets(collection: ElementCollection) -> frozenset[str]:
    """Every HandlerRef target in ``collection``: its handlers and completion providers."""
    return frozenset(
        provider.target
        for _, provider in _providers(collection)
        if isinstance(provider, HandlerRef)
    )


def foreign_targets(
    collection: ElementCollection, allowed: AbstractSet[str]
) -> list[tuple[ElementRef, str]]:
    """The ``(element, target)`` pairs of ``collection`` whose target is not in ``allowed``.

    A live handler (not a HandlerRef) is foreign too: no store can carry one honestly.
    """
    foreign = []
    for ref, provider in _providers(collection):
        if not isinstance(provider, HandlerRef):
            foreign.append((ref, f"<live {type(provider).__qualname__}>"))
        elif provider.target not in allowed:
            foreign.append((ref, provider.target))
    return foreign


def _providers(collection: ElementCollection) -> list[tuple[ElementRef, object]]:
    return [
        (element.ref, provider)
        for element in collection
        for provider in (element.handler, *(element.completions or {}).values())
    ]
