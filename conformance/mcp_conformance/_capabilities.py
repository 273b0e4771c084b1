"""Capabilities: what a target declares it does not claim, and why."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, TypeVar, final

if TYPE_CHECKING:
    from mcp_core.elements import ElementCollection

__all__ = ["Capabilities", "declare"]

F = TypeVar("F", bound=Callable[..., object])

# Fields whose ``False`` withdraws a claim (and so needs a reason); ``relation`` and ``reason``
# are not claims.
_CLAIMS = (
    "catalog",
    "resolver",
    "writer",
    "deferred",
    "change_events",
    "composes_sources",
    "validates_elements",
    "serializable",
    "transparent",
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What a target claims, exported by its factory's module as ``MCP_CONFORMANCE``.

    Every law applies unless the target says otherwise, so a module exports this only to withdraw
    a claim, and a withdrawn claim needs a ``reason``: it is printed in the report next to each
    law it makes N/A. ::

        MCP_CONFORMANCE = Capabilities(
            composes_sources=False,
            reason="filled only through register(); sources are compiled in at build time",
        )

    The role flags are three-valued, one per protocol of :mod:`mcp_core.registry`: ``catalog``
    (``ElementCatalog``), ``resolver`` (``ElementResolver``), ``writer`` (``ElementWriter``),
    ``deferred`` (``DeferredRegistry``: ``load``, ``reload``, ``loaded``, ``kinds``) and
    ``change_events`` (``ChangeNotifier``: ``subscribe``). ``None`` (the default) probes the object
    for the role's methods and reports N/A when they are absent (which is not a certificate);
    ``True`` claims the role, so its absence is a FAIL rather than an N/A (a typo in a method name
    cannot pass); ``False`` withdraws the claim, with a ``reason``, even where the methods exist.
    For a server target, ``change_events=False`` says it sends no ``list_changed`` notifications.

    Registries:
        composes_sources: built over ``(source, priority)`` pairs. ``False`` for a registry filled
            only through its writer: the kit then passes it no sources, and the laws about
            sources (lazy, single-flight, load-idempotent, precedence, source isolation) are N/A.
        validates_elements: rejects an element whose handler is of the wrong kind for its
            definition (``registry.element-isolation``).

    Sources and wrappers:
        serializable: what ``provide()`` returns is serializable (``source.json-roundtrip``).
            ``None``: the law applies where it is; ``True``: a collection holding live handlers is
            a FAIL; ``False``: N/A.
        transparent: a wrapper provides exactly what its inner source provides.
        relation: for a wrapper that changes content by design (``transparent=False``), what it
            provides given what its inner source provides; ``wrapper.transparent`` then checks
            this relation instead of equality (e.g. the renaming a prefixing wrapper does).
        isolates: a wrapper that turns its inner source's failures into its last good collection
            (empty before the first success) plus one diagnostic, as ``IsolatedSource`` does;
            ``wrapper.isolates`` checks it over inner sources raising every class of exception.
            ``False`` (the default): the law is N/A (declared).

    Visibility rules composing others:
        decides: the boolean function of its parts' list decisions (in the order the parts are
            given) that the rule's own list decision is, e.g. ``all`` for ``all_of``;
            ``visibility.parts`` checks it on every combination of decisions. ``None``: the rule
            declares none, and the law is N/A (declared).
    """

    catalog: bool | None = None
    resolver: bool | None = None
    writer: bool | None = None
    deferred: bool | None = None
    change_events: bool | None = None
    composes_sources: bool = True
    validates_elements: bool = True
    serializable: bool | None = None
    transparent: bool = True
    relation: Callable[[ElementCollection], ElementCollection] | None = None
    isolates: bool = False
    decides: Callable[[Sequence[bool]], bool] | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        for name in _CLAIMS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"Capabilities.{name} must be True, False or None, got {value!r}")
        if not isinstance(self.isolates, bool):
            raise TypeError(f"Capabilities.isolates must be True or False, got {self.isolates!r}")
        if not isinstance(self.reason, str):
            raise TypeError(
                f"Capabilities.reason must be a string, got {type(self.reason).__name__}"
            )
        if self.relation is not None:
            if not callable(self.relation):
                raise TypeError("Capabilities.relation must be a callable collection -> collection")
            if self.transparent:
                raise ValueError(
                    "Capabilities.relation replaces transparency: set transparent=False too, so "
                    "the report says the wrapper is checked against its declared relation"
                )
        if self.decides is not None and not callable(self.decides):
            raise TypeError("Capabilities.decides must be a callable: parts' decisions -> bool")
        if self.withdrawn and not self.reason.strip():
            raise ValueError(
                f"Capabilities withdraws {', '.join(self.withdrawn)} without a reason; say why in "
                "reason=... (the report prints it next to every law that becomes N/A)"
            )

    @property
    def withdrawn(self) -> tuple[str, ...]:
        """The claims set to ``False``, e.g. ``("composes_sources",)``."""
        return tuple(name for name in _CLAIMS if getattr(self, name) is False)

    def describe(self) -> str:
        """A one-line summary for the report header: every field that differs from the default."""
        default = Capabilities()
        shown = [
            f"{field.name}={getattr(self, field.name)!r}"
            for field in fields(self)
            if field.name not in {"reason", "relation", "decides"}
            and getattr(self, field.name) != getattr(default, field.name)
        ]
        for name in ("relation", "decides"):
            value = getattr(self, name)
            if value is not None:
                shown.append(f"{name}={getattr(value, '__qualname__', repr(value))}")
        if not shown:
            return "claims every law"
        return ", ".join(shown) + (f" ({self.reason})" if self.reason else "")


def declare(capabilities: Capabilities) -> Callable[[F], F]:
    """Attach ``capabilities`` to one factory, for modules exporting several.

    ``MCP_CONFORMANCE`` on the module applies to every factory in it; one attached to the
    factory wins::

        @declare(Capabilities(decides=all))
        def all_of(parts): ...
    """
    if not isinstance(capabilities, Capabilities):
        raise TypeError(f"declare() takes a Capabilities, got {type(capabilities).__name__}")

    def attach(factory: F) -> F:
        factory.__dict__["MCP_CONFORMANCE"] = capabilities
        return factory

    return attach
