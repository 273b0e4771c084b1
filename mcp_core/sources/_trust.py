"""Which handler references a source can produce: what a cached copy of its output may name.

A :class:`~mcp_core.elements.HandlerRef` is code: ``"subprocess:getoutput"`` imports and runs
whatever it names. A collection read back from a store that others can write must therefore
name only handlers its source could have produced: a source says which with the optional
:class:`~mcp_core.sources.HandlerTargets` capability, answered without providing (like
``kinds()``). ``StaticSource`` answers with its collection's targets, ``DiscoverySource`` with
the marked callables of its modules; wrappers keep handlers as they are and write nothing, since
:func:`~mcp_core.sources.handler_targets_of` passes their inner source's answer through.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from mcp_core.elements import ElementCollection, ElementRef, HandlerRef

__all__ = ["collection_targets", "foreign_targets"]


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
