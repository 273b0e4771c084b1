"""Test-only helpers over the conformance kit's strategies.

The strategies for definitions, elements and collections are the kit's public ones: use
:mod:`mcp_conformance.strategies` (``tool_names``, ``uris``, ``uri_templates``,
``object_schemas``, ``tools``, ``resources``, ``resource_templates``, ``prompts``,
``element_kinds``, ``definitions``, ``elements``, ``collections``, ``handler_refs``). This module
adds only what the project's own tests need on top of them:

- :func:`sources`: healthy :class:`CountingSource` values, whose declared kinds cover their
  content (possibly more) and which count ``provide()`` calls.
- Fixed examples for hand-written tests: :func:`tool_element`, :func:`resource_element`,
  :func:`template_element`, :func:`prompt_element`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from hypothesis import strategies as st

from mcp_conformance.strategies import collections, element_kinds
from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import CacheStoreError

__all__ = [
    "CountingSource",
    "prompt_element",
    "resource_element",
    "sources",
    "template_element",
    "tool_element",
]


@final
class CountingSource:
    """A healthy source: provides ``collection``, advertises ``declared``, counts its calls.

    ``declared`` defaults to the collection's kinds and must cover them (a source may
    over-advertise, never under-advertise). Set ``fail_with`` to make ``provide()`` raise it,
    and ``collection`` to change what it provides (an outside change).
    """

    __slots__ = ("collection", "declared", "fail_with", "kinds_calls", "provides")

    def __init__(self, collection: ElementCollection, declared: ElementKind | None = None) -> None:
        declared = collection.kinds if declared is None else declared
        if collection.kinds & ~declared:
            raise ValueError("a CountingSource must declare every kind it provides")
        self.collection = collection
        self.declared = declared
        self.fail_with: Exception | None = None
        self.provides = 0
        self.kinds_calls = 0

    def __repr__(self) -> str:
        return f"CountingSource({self.collection!r})"

    def kinds(self) -> ElementKind:
        """The declared kinds; never provides."""
        self.kinds_calls += 1
        return self.declared

    async def provide(self) -> ElementCollection:
        """The collection (or the configured failure); counts the call."""
        self.provides += 1
        if self.fail_with is not None:
            raise self.fail_with
        return self.collection


class BrokenStore:
    """A cache store whose backend is down: every call raises CacheStoreError."""

    async def get(self, key: str) -> bytes | None:
        """Fails."""
        raise CacheStoreError("connection refused", key=key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Fails."""
        raise CacheStoreError("connection refused", key=key)

    async def delete(self, key: str) -> bool:
        """Fails."""
        raise CacheStoreError("connection refused", key=key)

    async def delete_prefix(self, prefix: str) -> int:
        """Fails."""
        raise CacheStoreError("connection refused")


@st.composite
def sources(draw: st.DrawFn, kinds: ElementKind = ElementKind.ALL) -> CountingSource:
    """Healthy :class:`CountingSource` values over :func:`collections` of ``kinds``.

    The declared kinds are the content's plus, at times, more of ``kinds``.
    """
    collection = draw(collections(kinds))
    extra = draw(element_kinds()) & kinds
    return CountingSource(collection, collection.kinds | extra)


def tool_element(
    name: str = "tool",
    *,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    tags: frozenset[str] = frozenset(),
    handler: object = None,
) -> Element:
    """A tool element with a reference handler ``tests.handlers:<name>`` unless given one."""
    return Element(
        definition=Tool(
            name=name,
            input_schema=input_schema if input_schema is not None else {"type": "object"},
            output_schema=output_schema,
        ),
        handler=handler if handler is not None else HandlerRef(f"tests.handlers:{_attr(name)}"),
        tags=tags,
    )


def resource_element(uri: str = "app://resource", *, name: str = "resource") -> Element:
    """A resource element with a reference handler."""
    return Element(
        definition=Resource(uri=uri, name=name), handler=HandlerRef("tests.handlers:resource")
    )


def template_element(uri_template: str = "app://items/{id}", *, name: str = "items") -> Element:
    """A resource template element with a reference handler."""
    return Element(
        definition=ResourceTemplate(uri_template=uri_template, name=name),
        handler=HandlerRef("tests.handlers:template"),
    )


def prompt_element(name: str = "prompt") -> Element:
    """A prompt element with a reference handler."""
    return Element(
        definition=Prompt(name=name), handler=HandlerRef(f"tests.handlers:{_attr(name)}")
    )


def _attr(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name)
    return cleaned if cleaned[:1].isalpha() else f"h_{cleaned}"
