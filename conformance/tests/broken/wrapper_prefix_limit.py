"""Breaks wrapper.transparent (its declared relation): it truncates over-long prefixed names.

It renames as ``PrefixedSource`` does and declares the same relation, but where the prefix
pushes a tool or prompt name past the specification's 128 characters it cuts the name to 128
instead of leaving the element out: ``kit_`` + a 128-character name loses its last 4 characters,
and a client calls a tool whose name no one wrote.
"""

from __future__ import annotations

import dataclasses

from mcp_conformance.reference.prefixed import MCP_CONFORMANCE, PREFIX
from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import ElementSource

__all__ = ["MCP_CONFORMANCE", "wrap"]

_LIMIT = 128
_FIELD = {
    ElementKind.TOOL: "name",
    ElementKind.PROMPT: "name",
    ElementKind.RESOURCE: "uri",
    ElementKind.RESOURCE_TEMPLATE: "uri_template",
}


class _Truncates:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    async def provide(self) -> ElementCollection:
        collection = await self.inner.provide()
        return ElementCollection(self._renamed(element) for element in collection)

    def _renamed(self, element: Element) -> Element:
        if element.kind in (ElementKind.TOOL, ElementKind.PROMPT):
            key = f"{PREFIX}_{element.ref.key}"[:_LIMIT]  # the bug: cut, not left out
        else:
            key = f"{PREFIX}+{element.ref.key}"
        definition = dataclasses.replace(element.definition, **{_FIELD[element.kind]: key})  # type: ignore[arg-type]  # every definition has its key field
        return dataclasses.replace(element, definition=definition)


def wrap(inner: ElementSource) -> _Truncates:
    """``inner`` prefixed with ``kit``, over-long names truncated."""
    return _Truncates(inner)
