"""PrefixedSource: renames every element, so it declares the renaming as its relation."""

from __future__ import annotations

import dataclasses

from mcp_conformance import Capabilities
from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.errors import InvalidElementError
from mcp_core.sources import ElementSource, PrefixedSource

__all__ = ["MCP_CONFORMANCE", "wrap"]

PREFIX = "kit"


def wrap(inner: ElementSource) -> PrefixedSource:
    """``PrefixedSource(inner, "kit")``."""
    return PrefixedSource(inner, PREFIX)


def renamed(collection: ElementCollection) -> ElementCollection:
    """The inner elements, in order, each moved to ``rename(ref)`` and otherwise unchanged.

    An element the renaming makes invalid (a tool name past 128 characters) is left out. The
    rule is written out as ``PrefixedSource`` documents it, not asked of ``PrefixedSource.rename``:
    a relation computed by the code under test would follow that code's bugs.
    """
    kept: list[Element] = []
    for element in collection:
        head = (
            f"{PREFIX}_" if element.kind in (ElementKind.TOOL, ElementKind.PROMPT) else f"{PREFIX}+"
        )
        try:
            kept.append(_moved(element, head + element.ref.key))
        except InvalidElementError:
            continue
    return ElementCollection(kept)


def _moved(element: Element, key: str) -> Element:
    field = {
        ElementKind.TOOL: "name",
        ElementKind.PROMPT: "name",
        ElementKind.RESOURCE: "uri",
        ElementKind.RESOURCE_TEMPLATE: "uri_template",
    }[element.kind]
    definition = dataclasses.replace(element.definition, **{field: key})  # type: ignore[arg-type]  # every definition has its key field
    return dataclasses.replace(element, definition=definition)


MCP_CONFORMANCE = Capabilities(
    transparent=False,
    relation=renamed,
    reason="prefixing renames every element by design: checked against its documented rule",
)
