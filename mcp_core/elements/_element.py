"""Elements: a definition paired with what serves it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import final

from mcp_core._refs import ElementKind, ElementRef
from mcp_core.elements._definitions import Definition, Prompt, ResourceTemplate
from mcp_core.errors import InvalidElementError

__all__ = ["Element", "HandlerRef", "take_vouch", "vouch_for"]

_IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@final
@dataclass(frozen=True, slots=True)
class HandlerRef:
    """A handler named rather than held: a container id or an import path ``"pkg.mod:attr"``.

    Resolution (in :mod:`mcp_core.handlers`) consults the configured container first, so a
    framework's service id works even when it looks nothing like an import path; only when the
    container does not know the target is it imported. Because it is a name, an element whose
    handler is a ``HandlerRef`` can be serialized, cached and dumped.
    """

    target: str

    def __post_init__(self) -> None:
        if (
            not isinstance(self.target, str)
            or not self.target
            or self.target != self.target.strip()
        ):
            raise InvalidElementError(
                f"HandlerRef target must be a non-empty string without surrounding spaces, got {self.target!r}"
            )

    @property
    def is_import_path(self) -> bool:
        """Whether the target has the shape ``"pkg.mod:attr"`` (it may still be a container id)."""
        return _IMPORT_PATH.fullmatch(self.target) is not None

    def __str__(self) -> str:
        return self.target


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Element:
    """A definition plus its handler, completion providers and tags.

    ``handler`` is a handler object, a callable, or a :class:`HandlerRef`; it is checked against the
    definition's kind when an element is registered or invoked (see :mod:`mcp_core.handlers`).
    ``completions`` maps a prompt argument or template variable name to a completion provider
    (a callable, an object, or a :class:`HandlerRef`). ``tags`` are free labels that visibility
    rules may use.
    """

    definition: Definition
    handler: object
    completions: Mapping[str, object] | None = None
    tags: frozenset[str] = frozenset()
    # Set by the derivation that built this very object (see vouch_for).
    _vouched: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        definition = self.definition
        if not isinstance(definition, Definition):
            raise InvalidElementError(
                f"Element.definition must be a Tool, Resource, ResourceTemplate or Prompt, "
                f"got {type(definition).__name__}"
            )
        if self.handler is None:
            raise InvalidElementError(
                f"{definition.ref}: an element needs a handler (a function, a handler object or a "
                "HandlerRef)",
                ref=definition.ref,
                field="handler",
            )
        tags = self.tags
        if tags or type(tags) is not frozenset:  # most elements have no tags: nothing to check
            if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
                raise InvalidElementError(
                    f"{definition.ref}: tags must be a set of strings, got {tags!r}",
                    ref=definition.ref,
                    field="tags",
                )
            object.__setattr__(self, "tags", frozenset(tags))
        if self.completions is not None:
            object.__setattr__(self, "completions", self._checked_completions(self.completions))

    def _checked_completions(self, completions: Mapping[str, object]) -> Mapping[str, object]:
        definition = self.definition
        if isinstance(definition, Prompt):
            names = {arg.name for arg in definition.arguments or ()}
            what = "prompt arguments"
        elif isinstance(definition, ResourceTemplate):
            names = set(definition.template.variables)
            what = "template variables"
        else:
            raise InvalidElementError(
                f"{definition.ref}: only prompts and resource templates take completion providers",
                ref=definition.ref,
                field="completions",
            )
        unknown = sorted(set(completions) - names)
        if unknown:
            raise InvalidElementError(
                f"{definition.ref}: completion providers for {unknown}, which are not among its "
                f"{what} {sorted(names)}",
                ref=definition.ref,
                field="completions",
            )
        return MappingProxyType(dict(completions))

    @property
    def ref(self) -> ElementRef:
        """The element's identity, derived from its definition."""
        return self.definition.ref

    @property
    def kind(self) -> ElementKind:
        """The element's kind."""
        return self.definition.ref.kind

    @property
    def is_serializable(self) -> bool:
        """Whether the handler and every completion provider are :class:`HandlerRef` names."""
        return isinstance(self.handler, HandlerRef) and all(
            isinstance(p, HandlerRef) for p in (self.completions or {}).values()
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Element):
            return NotImplemented
        return (
            self.definition == other.definition
            and _same_handler(self.handler, other.handler)
            and self.tags == other.tags
            and _same_completions(self.completions, other.completions)
        )

    def __hash__(self) -> int:
        # Handlers may be unhashable objects; the definition identifies an element well enough.
        return hash((self.definition, self.tags))


def _same_handler(a: object, b: object) -> bool:
    # Handler objects rarely define value equality; identity is what "the same handler" means
    # for them, while references and functions compare by value.
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 -- a user object's __eq__ may do anything; treat as different
        return False


def _same_completions(a: Mapping[str, object] | None, b: Mapping[str, object] | None) -> bool:
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(_same_handler(a[k], b[k]) for k in a)


def vouch_for(element: Element) -> None:
    """Record on ``element`` that its handler was checked against its kind as it was built.

    The derivation that builds an element from the function serving it has just checked that
    pairing, so the first admission need not analyse the function again
    (``mcp_core.handlers``). The record is on the object itself: a copy made with another
    field (``dataclasses.replace``) starts without it, and no table beside the elements holds
    them alive.
    """
    object.__setattr__(element, "_vouched", True)


def take_vouch(element: Element) -> bool:
    """Whether ``element`` was vouched for (:func:`vouch_for`), forgetting it: a vouch serves once."""
    if not element._vouched:  # noqa: SLF001 -- the element's own record
        return False
    object.__setattr__(element, "_vouched", False)
    return True
