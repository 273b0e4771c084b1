"""The source under test: the target source itself, or the target wrapper over a healthy source."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Final, final

from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation
from mcp_conformance._handlers import HANDLER_PATHS
from mcp_conformance._kit import Kit
from mcp_conformance._universe import ALL_SLOTS, element
from mcp_conformance.faults import MutableSource
from mcp_conformance.strategies import element_kinds, elements
from mcp_core.elements import Element, ElementCollection, ElementKind, HandlerRef

__all__ = ["Subject", "for_each_subject", "kinds_of", "provide"]


@final
@dataclass(frozen=True, slots=True)
class Subject:
    """A source to check; for a wrapper target, ``inner`` is the healthy source it wraps."""

    source: object
    inner: MutableSource | None = None


def for_each_subject(kit: Kit, body: Callable[[Subject], Awaitable[None]], *, name: str) -> None:
    """Run ``body`` on the target source once, or on the target wrapper over generated sources.

    A wrapped source declares its content's kinds and, at times, more (honest sources may
    over-advertise), so a wrapper is checked against both.
    """
    if kit.target.kind == "source":

        async def once() -> None:
            await body(Subject(kit.target.factory()))

        kit.run(once)
        return

    async def wrapped(example: tuple[ElementCollection, ElementKind]) -> None:
        content, extra = example
        inner = MutableSource(content, kinds=content.kinds | extra)
        await body(Subject(kit.target.factory(inner), inner))

    kit.given(_inner_contents, wrapped, name=name)


@st.composite
def _elements(draw: st.DrawFn) -> Element:
    """Mostly plain elements (cheap to draw), at times a fully featured one.

    A wrapper passes elements through whatever their fields, so refs, handlers and tags vary on
    every element while the rich definitions of :mod:`mcp_conformance.strategies` (which cost
    ten times as much to draw) come one time in four.
    """
    if draw(st.integers(min_value=0, max_value=3)) == 0:
        return draw(elements())
    kind, key = draw(st.sampled_from(ALL_SLOTS))
    plain = element(kind, key, draw(st.sampled_from(("first", "second"))))
    handler = HandlerRef(draw(st.sampled_from(HANDLER_PATHS[kind])))
    return dataclasses.replace(plain, handler=handler, tags=draw(_tags))


_tags: Final = st.frozensets(st.sampled_from(("public", "internal")), max_size=2)
# Small collections: a wrapper treats every element alike, and drawing is most of the cost.
_inner_contents: Final = st.tuples(
    st.lists(_elements(), max_size=5, unique_by=lambda e: e.ref).map(ElementCollection),
    element_kinds(),
)


async def provide(source: object) -> object:
    """Await the source's provide method; one that is not async is a violation of its own."""
    result = source.provide()  # type: ignore[attr-defined]  # the target is duck-typed
    if not inspect.isawaitable(result):
        raise LawViolation(
            f"provide() returned {type(result).__name__}, not an awaitable: it must be async"
        )
    return await result


def kinds_of(provided: object) -> ElementKind | None:
    """The kinds of whatever ``provide()`` returned, if it is a collection or elements at all."""
    if isinstance(provided, ElementCollection):
        return provided.kinds
    if isinstance(provided, Iterable) and not isinstance(provided, str | bytes):
        items = list(provided)
        if all(isinstance(item, Element) for item in items):
            kinds = ElementKind.NONE
            for item in items:
                kinds |= item.kind
            return kinds
    return None
