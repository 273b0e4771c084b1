"""Targets: resolving ``pkg.mod:factory``, checking the factory's shape, reading its Capabilities."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final

from mcp_conformance._capabilities import Capabilities
from mcp_conformance._laws import TargetKind

__all__ = ["SIGNATURES", "Target", "TargetError", "load_target"]

SIGNATURES: Final[dict[TargetKind, str]] = {
    "registry": "make_registry(sources: Sequence[tuple[ElementSource, int]]) -> object",
    "source": "make_source() -> ElementSource",
    "wrapper": "wrap(inner: ElementSource) -> ElementSource",
    "server": "make_server(sources: Sequence[tuple[ElementSource, int]], *, "
    "visibility: ElementVisibility, page_size: int) -> object with .lowlevel and .registry",
    "visibility": "make_visibility(parts: Sequence[ElementVisibility]) -> ElementVisibility",
    "event-store": "make_event_store(*, max_events: int, max_bytes: int, max_age: float, "
    "clock: Callable[[], float]) -> SessionEventStore",
    "cache-store": "make_cache_store(*, clock: Callable[[], float]) -> CacheStore",
    "change-bus": "make_change_bus() -> ChangeBus",
}
# How the kit calls each kind of factory: positional arguments, keyword arguments.
_CALL: Final[dict[TargetKind, tuple[int, tuple[str, ...]]]] = {
    "registry": (1, ()),
    "source": (0, ()),
    "wrapper": (1, ()),
    "server": (1, ("visibility", "page_size")),
    "visibility": (1, ()),
    "event-store": (0, ("max_events", "max_bytes", "max_age", "clock")),
    "cache-store": (0, ("clock",)),
    "change-bus": (0, ()),
}


class TargetError(ValueError):
    """A target cannot be used: malformed, not importable, or not a factory of the right shape."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What a run certifies: the factory, where it was named, and what it claims."""

    kind: TargetKind
    spec: str
    origin: str
    factory: Callable[..., object]
    capabilities: Capabilities

    def describe(self) -> str:
        """E.g. ``registry mcp_core.registry:Registry (from --mcp-registry)``."""
        return f"{self.kind} {self.spec} (from {self.origin})"


def load_target(kind: TargetKind, spec: str, *, origin: str, search: Path | None = None) -> Target:
    """Import the factory named by ``spec`` and check it can be called as the ``kind`` contract.

    ``search`` (the directory pytest was invoked from) is appended to ``sys.path`` when the module
    is not importable otherwise, the way ``python -m`` would find it.

    Raises:
        TargetError: with the target, the cause, and what to do about it.
    """
    module_name, _, attribute = spec.partition(":")
    if (
        not module_name
        or not attribute
        or not all(part.isidentifier() for part in (*module_name.split("."), *attribute.split(".")))
    ):
        raise TargetError(
            f"{origin}={spec!r} is not of the form 'package.module:factory'; "
            f"name a factory with the signature {SIGNATURES[kind]}"
        )
    module = _import(module_name, spec=spec, origin=origin, search=search)
    factory: object = module
    for part in attribute.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise TargetError(
                f"{origin}={spec}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not callable(factory):
        raise TargetError(
            f"{origin}={spec} is a {type(factory).__name__}, not a callable; "
            f"name a factory with the signature {SIGNATURES[kind]}"
        )
    _check_arity(kind, factory, spec=spec, origin=origin)
    # One on the factory (declare()) wins over the module's, which covers all its factories.
    capabilities = getattr(factory, "MCP_CONFORMANCE", None)
    if capabilities is None:
        capabilities = getattr(module, "MCP_CONFORMANCE", Capabilities())
    if not isinstance(capabilities, Capabilities):
        raise TargetError(
            f"{origin}={spec}: {module_name}.MCP_CONFORMANCE must be a "
            f"mcp_conformance.Capabilities, got {type(capabilities).__name__}"
        )
    return Target(kind=kind, spec=spec, origin=origin, factory=factory, capabilities=capabilities)


def _import(module_name: str, *, spec: str, origin: str, search: Path | None) -> object:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only the target itself (or its package) missing: not a dependency it failed to import.
        missing_self = exc.name is not None and (
            module_name == exc.name or module_name.startswith(f"{exc.name}.")
        )
        if missing_self and search is not None and str(search) not in sys.path:
            sys.path.append(str(search))
            return _import(module_name, spec=spec, origin=origin, search=None)
        raise TargetError(
            f"{origin}={spec}: cannot import {module_name!r}: {type(exc).__name__}: {exc}; "
            "install the package under test (or set pytest's `pythonpath`)"
        ) from exc
    except Exception as exc:
        raise TargetError(
            f"{origin}={spec}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc


def _check_arity(
    kind: TargetKind, factory: Callable[..., object], *, spec: str, origin: str
) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin or C callable: its call will tell
    positional, keywords = _CALL[kind]
    try:
        signature.bind(*([None] * positional), **dict.fromkeys(keywords))
    except TypeError as exc:
        raise TargetError(
            f"{origin}={spec}{signature} cannot be called as {SIGNATURES[kind]}: {exc}"
        ) from None
