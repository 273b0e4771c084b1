"""Breaks source.lookup-agrees: a prefixing wrapper whose lookup raises at a name it left out.

It provides what ``PrefixedSource`` provides (a tool whose prefixed name is past 128 characters
is left out), but its ``lookup`` renames whatever the inner source holds without catching the
renaming's ``InvalidElementError``: asked for ``kit_`` + a 128-character name, it raises instead
of answering None, and a server turns a call to a name nobody lists into an internal error.
"""

from __future__ import annotations

import dataclasses

from mcp_conformance.reference.prefixed import MCP_CONFORMANCE, PREFIX
from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.sources import ElementSource, PrefixedSource

__all__ = ["MCP_CONFORMANCE", "wrap"]

_FIELD = {
    ElementKind.TOOL: "name",
    ElementKind.PROMPT: "name",
    ElementKind.RESOURCE: "uri",
    ElementKind.RESOURCE_TEMPLATE: "uri_template",
}


class _LookupRaises:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner
        self._prefixed = PrefixedSource(inner, PREFIX)

    def kinds(self) -> ElementKind:
        return self._prefixed.kinds()

    async def provide(self) -> ElementCollection:
        return await self._prefixed.provide()

    async def lookup(self, ref: ElementRef) -> Element | None:
        inner_ref = self._prefixed.unrename(ref)
        if inner_ref is None:
            return None
        element = (await self.inner.provide()).get(inner_ref)
        if element is None:
            return None
        # The bug: an over-long renamed name raises InvalidElementError here.
        definition = dataclasses.replace(element.definition, **{_FIELD[element.kind]: ref.key})  # type: ignore[arg-type]  # every definition has its key field
        return dataclasses.replace(element, definition=definition)


def wrap(inner: ElementSource) -> _LookupRaises:
    """``inner`` prefixed with ``kit``, with a lookup that raises at names left out."""
    return _LookupRaises(inner)
