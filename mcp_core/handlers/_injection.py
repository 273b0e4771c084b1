"""The injection hook: parameters that are filled in by mcp-core rather than published.

A function handler's parameters are published as arguments (tools) or prompt arguments, except
the ones mcp-core injects: a :class:`~mcp_core.handlers.ClientGateway`, a
:data:`~mcp_core.handlers.RequestedUri`, and any parameter matched by a rule registered here.
Layers that know other frameworks register rules for those frameworks' types (the server layer
registers the official SDK's ``Context`` and its ``Resolve(...)`` markers) without this layer
importing them.

A rule matches a parameter whose annotation is the registered class or a subclass of it (also
inside ``Optional[...]`` or ``Annotated[...]``), or whose ``Annotated[...]`` metadata holds an
instance of it (a marker, as in ``Annotated[Db, Resolve(get_db)]``). Its injector is called once
per call for that parameter, with an :class:`Injection` describing the call.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Annotated, Any, Final, TypeAlias, final, get_args, get_origin

from mcp_core.handlers._protocols import ClientGateway

__all__ = [
    "Injection",
    "Injector",
    "injection_generation",
    "injector_for",
    "register_injection",
    "register_injection_loader",
]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Injection:
    """What an injector knows about the parameter it fills and the call it is for.

    ``handler`` is the function being called; ``arguments`` are the call's bound arguments by
    parameter name (validated and coerced for tools; strings for prompts and templates);
    ``injected`` maps every injected parameter of the function to its annotation; ``shared`` is
    one dict per call, shared by every injector of that call (for example, to build one framework
    context per call, or to resolve several markers together).
    """

    gateway: ClientGateway
    handler: Callable[..., Any]
    parameter: str
    annotation: Any
    arguments: Mapping[str, Any]
    injected: Mapping[str, Any]
    shared: dict[object, Any]


Injector: TypeAlias = Callable[[Injection], Any]
"""Returns the parameter's value, or an awaitable of it."""

_RULES: Final[dict[type, Injector]] = {}
# Top-level package name -> what registers the rules for that package's types, run (once) when
# a parameter first meets a type of that package.
_LOADERS: Final[dict[str, Callable[[], object]]] = {}
# Bumped on every change of the rules: analyses made under other rules are not reused.
_GENERATION: list[int] = [0]


def injection_generation() -> int:
    """A number that changes whenever an injection rule is registered or removed."""
    return _GENERATION[0]


def register_injection(match: type, injector: Injector) -> Callable[[], None]:
    """Inject parameters matched by ``match`` with ``injector`` (see the module docstring).

    Registering a class again replaces its injector. Rules are consulted when a function's shape
    is first analysed, so register before functions are derived (importing the registering
    module is enough). Returns a function that removes the rule.

    Raises:
        TypeError: ``match`` is not a class or ``injector`` is not callable.
    """
    if not isinstance(match, type):
        raise TypeError(f"register_injection needs a class to match, got {match!r}")
    if not callable(injector):
        raise TypeError(f"register_injection needs a callable injector, got {injector!r}")
    _RULES[match] = injector
    _GENERATION[0] += 1

    def unregister() -> None:
        if _RULES.get(match) is injector:
            del _RULES[match]
            _GENERATION[0] += 1

    return unregister


def register_injection_loader(package: str, load: Callable[[], object]) -> None:
    """Have ``load`` register the rules for ``package``'s types when one is first met.

    A layer that knows a framework registers its rules without importing that framework up
    front (the server layer does so for the official SDK, whose import a stdio start defers,
    ADR 0115): the first parameter annotated with a class of ``package`` (a top-level package
    name, e.g. ``"mcp"``), or carrying an instance of one as ``Annotated`` metadata, runs ``load``
    once, before any rule is consulted for it.
    """
    _LOADERS[package] = load


def _load_rules_for(annotation: object) -> None:
    """Run the loader of every package ``annotation`` names a type of (each once)."""
    module = getattr(annotation, "__module__", None)
    if isinstance(module, str):
        load = _LOADERS.pop(module.partition(".")[0], None)
        if load is not None:
            load()
    origin = get_origin(annotation)
    if origin is None:
        return
    _load_rules_for(origin)
    args = get_args(annotation)
    if origin is Annotated:
        _load_rules_for(args[0])
        for meta in args[1:]:
            _load_rules_for(type(meta))
        return
    for arg in args:
        _load_rules_for(arg)


def injector_for(annotation: object) -> Injector | None:
    """The injector of the first rule matching ``annotation``, or None."""
    if _LOADERS:
        _load_rules_for(annotation)
    return _matching(annotation)


def _matching(annotation: object) -> Injector | None:
    if not _RULES:
        return None
    origin = get_origin(annotation)
    if origin is Annotated:
        args = get_args(annotation)
        for meta in args[1:]:
            for match, injector in _RULES.items():
                if isinstance(meta, match):
                    return injector
        return _matching(args[0])
    if origin is typing.Union or origin is UnionType:
        members = [arg for arg in get_args(annotation) if arg is not NoneType]
        return _matching(members[0]) if len(members) == 1 else None
    # A generic alias (``Context[Any, Any]``) is matched by its origin class.
    candidate = origin if isinstance(origin, type) else annotation
    if isinstance(candidate, type):
        for match, injector in _RULES.items():
            if issubclass(candidate, match):
                return injector
    return None
