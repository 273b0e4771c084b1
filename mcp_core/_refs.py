"""Element kinds and references: the names elements are looked up by.

The bottom floor of the package: errors name their culprit by ``ElementRef``, and every layer
above looks elements up by it. Imports nothing but the standard library; users import these
names from ``mcp_core`` or ``mcp_core.elements``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import final

__all__ = ["ElementKind", "ElementRef"]


class ElementKind(enum.Flag):
    """The four kinds of element an MCP server publishes; combine with ``|``."""

    NONE = 0
    TOOL = enum.auto()
    RESOURCE = enum.auto()
    RESOURCE_TEMPLATE = enum.auto()
    PROMPT = enum.auto()
    ALL = TOOL | RESOURCE | RESOURCE_TEMPLATE | PROMPT

    # Each value has one member object (composites are cached too), and members compare by
    # identity, so identity is a valid hash; Enum's own hashes the name in Python, which shows
    # when every element lookup keys a dict by kind.
    __hash__ = object.__hash__

    @property
    def label(self) -> str:
        """The kind's wire-style name (``tool``, ``resource``, ``resource_template``, ``prompt``)."""
        return _LABELS.get(self) or "|".join(_LABELS[k] for k in SINGLE_KINDS if k in self)

    @classmethod
    def from_label(cls, label: str) -> ElementKind:
        """The single kind named ``label``; raises ValueError naming the accepted labels."""
        for kind, name in _LABELS.items():
            if name == label:
                return kind
        raise ValueError(
            f"unknown element kind {label!r}; expected one of {sorted(_LABELS.values())}"
        )


SINGLE_KINDS: tuple[ElementKind, ...] = (
    ElementKind.TOOL,
    ElementKind.RESOURCE,
    ElementKind.RESOURCE_TEMPLATE,
    ElementKind.PROMPT,
)

_LABELS: dict[ElementKind, str] = {
    ElementKind.TOOL: "tool",
    ElementKind.RESOURCE: "resource",
    ElementKind.RESOURCE_TEMPLATE: "resource_template",
    ElementKind.PROMPT: "prompt",
}


@final
@dataclass(frozen=True, slots=True)
class ElementRef:
    """The identity of an element: its single kind plus its key.

    The key is the tool name, the resource URI, the template's ``uri_template`` or the prompt
    name. Kinds are independent namespaces: ``ElementRef.tool("x") != ElementRef.prompt("x")``.
    """

    kind: ElementKind
    key: str

    def __post_init__(self) -> None:
        kind = self.kind
        if not (
            kind is ElementKind.TOOL
            or kind is ElementKind.RESOURCE
            or kind is ElementKind.RESOURCE_TEMPLATE
            or kind is ElementKind.PROMPT
        ):
            raise ValueError(
                f"an ElementRef names exactly one kind, got {self.kind!r}; "
                "use ElementKind.TOOL, RESOURCE, RESOURCE_TEMPLATE or PROMPT"
            )
        if not isinstance(self.key, str) or not self.key:
            raise ValueError(f"an ElementRef key must be a non-empty string, got {self.key!r}")

    @classmethod
    def tool(cls, name: str) -> ElementRef:
        """The ref of the tool named ``name``."""
        return cls(ElementKind.TOOL, name)

    @classmethod
    def resource(cls, uri: str) -> ElementRef:
        """The ref of the resource at ``uri``."""
        return cls(ElementKind.RESOURCE, uri)

    @classmethod
    def resource_template(cls, uri_template: str) -> ElementRef:
        """The ref of the resource template ``uri_template``."""
        return cls(ElementKind.RESOURCE_TEMPLATE, uri_template)

    @classmethod
    def prompt(cls, name: str) -> ElementRef:
        """The ref of the prompt named ``name``."""
        return cls(ElementKind.PROMPT, name)

    def __str__(self) -> str:
        return f"{self.kind.label} {self.key!r}"
