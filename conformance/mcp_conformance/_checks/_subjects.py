"""The source under test: the target source itself, or the target wrapper over a healthy source."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Final, final

from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation
from mcp_conformance._kit import Kit
from mcp_conformance._universe import (
    ALL_SLOTS,
    Vocabulary,
    features,
    make_element,
    vocabularies,
)
from mcp_conformance.faults import MutableSource
from mcp_conformance.strategies import element_kinds
from mcp_core.elements import Element, ElementCollection, ElementKind

__all__ = [
    "Subject",
    "for_each_group",
    "for_each_subject",
    "inner_contents",
    "kinds_of",
    "provide",
    "wrapper_vocabularies",
]

NAME_LIMIT: Final = 128
"""The longest tool or prompt name the MCP specification allows."""


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

    async def first(group: list[Subject]) -> None:
        await body(group[0])

    for_each_group(kit, first, name=name, size=1)


def for_each_group(
    kit: Kit, body: Callable[[list[Subject]], Awaitable[None]], *, name: str, size: int
) -> None:
    """Like :func:`for_each_subject`, with ``size`` independent subjects at once.

    For a source target, ``size`` objects from its factory; for a wrapper target, ``size``
    wrappers, each over its own generated source.
    """
    if kit.target.kind == "source":

        async def once() -> None:
            await body([Subject(kit.target.factory()) for _ in range(size)])

        kit.run(once)
        return

    async def wrapped(examples: list[tuple[ElementCollection, ElementKind]]) -> None:
        group = []
        for content, extra in examples:
            inner = MutableSource(content, kinds=content.kinds | extra)
            group.append(Subject(kit.target.factory(inner), inner))
        await body(group)

    kit.given(st.lists(inner_contents(), min_size=size, max_size=size), wrapped, name=name)


@st.composite
def inner_contents(draw: st.DrawFn) -> tuple[ElementCollection, ElementKind]:
    """Small collections of varied elements, and extra kinds the inner source also declares.

    A wrapper must pass elements through whatever their fields, so names, URIs, tags, ``_meta``
    and the rest vary as in the registry checks; handlers are references, so that the inner
    source is serializable (what a caching wrapper needs of a healthy source). Half the time the
    first tool and prompt names are at or just under the specification's 128-character limit,
    where a wrapper that lengthens names (a prefix) pushes them over it.
    """
    words = draw(wrapper_vocabularies())
    chosen = draw(st.lists(st.sampled_from(ALL_SLOTS), max_size=5, unique=True))
    elements = []
    for slot in chosen:
        looks = draw(features(slot[0]))
        if looks.handler in {"live", "other-live"}:
            looks = dataclasses.replace(looks, handler="ref")
        elements.append(make_element(words, slot, "source 0 v0", looks))
    return ElementCollection(elements), draw(element_kinds())


@st.composite
def wrapper_vocabularies(draw: st.DrawFn) -> Vocabulary:
    """The run's keys; half the time the first tool and prompt names are at the length limit."""
    words = draw(vocabularies())
    if draw(st.booleans()):
        words = dataclasses.replace(
            words,
            tools=(draw(_long_name(words.tools[0])), words.tools[1], words.tools[2]),
            prompts=(draw(_long_name(words.prompts[0])), words.prompts[1], words.prompts[2]),
        )
    return words


def _long_name(name: str) -> st.SearchStrategy[str]:
    """``name`` padded to a length from the limit minus 8 to the limit itself."""
    return st.integers(min_value=NAME_LIMIT - 8, max_value=NAME_LIMIT).map(
        lambda length: (name + "x" * length)[:length]
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
