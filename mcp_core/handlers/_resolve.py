"""Resolving a :class:`HandlerRef`: the container first, then the import path.

Order, for a reference ``target``:

1. ``container.has(target)`` → ``container.get(target)``: a framework's service id works even
   when it looks nothing like an import path, and a container may override an import path.
2. Otherwise ``target`` must be an import path ``"pkg.mod:attr"`` where ``attr`` may be dotted
   (``"pkg.mod:Class.method"``). Walking the attributes, a class met before an instance method is
   instantiated and the method bound to the instance; a class at the end is instantiated. A class
   is instantiated through the container when it knows the class by its reference
   (``"pkg.mod:Class"``) or its dotted name (``"pkg.mod.Class"``), else by calling it without
   arguments; one instance per class and resolver is shared by all of its methods.

Every failure raises :class:`~mcp_core.errors.HandlerResolutionError` naming the reference and the
element, chained to the cause.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, final

from mcp_core.errors import HandlerResolutionError

if TYPE_CHECKING:
    from mcp_core.elements import ElementRef, HandlerRef
    from mcp_core.handlers._protocols import Container

__all__ = ["Resolver"]


@final
class Resolver:
    """Resolves references through an optional container; successes are kept, failures retried."""

    __slots__ = ("_container", "_instances", "_resolved")

    def __init__(self, container: Container | None) -> None:
        self._container = container
        # Keyed by target text: elements sharing a reference share the resolved object. Bounded
        # by the number of distinct references, which is at most the number of elements.
        self._resolved: dict[str, object] = {}
        self._instances: dict[str, object] = {}

    def resolve(self, handler_ref: HandlerRef, ref: ElementRef | None) -> object:
        """The object ``handler_ref`` names.

        Raises:
            HandlerResolutionError: nothing can be resolved; the message says what was tried.
        """
        target = handler_ref.target
        try:
            return self._resolved[target]
        except KeyError:
            pass
        resolved = self._resolve(handler_ref, ref)
        self._resolved[target] = resolved
        return resolved

    def _fail(
        self, handler_ref: HandlerRef, ref: ElementRef | None, problem: str
    ) -> HandlerResolutionError:
        owner = f"{ref}: " if ref is not None else ""
        return HandlerResolutionError(
            f"{owner}handler {handler_ref.target!r} cannot be resolved: {problem}",
            handler_ref=handler_ref,
            ref=ref,
        )

    def _from_container(
        self, target: str, handler_ref: HandlerRef, ref: ElementRef | None
    ) -> tuple[bool, object]:
        container = self._container
        if container is None:
            return False, None
        try:
            if not container.has(target):
                return False, None
            return True, container.get(target)
        except Exception as exc:
            raise self._fail(
                handler_ref,
                ref,
                f"the container failed on {target!r} ({type(exc).__name__}: {exc})",
            ) from exc

    def _resolve(self, handler_ref: HandlerRef, ref: ElementRef | None) -> object:
        target = handler_ref.target
        found, service = self._from_container(target, handler_ref, ref)
        if found:
            return service
        if not handler_ref.is_import_path:
            where = (
                "the container does not have it"
                if self._container is not None
                else "there is no container"
            )
            raise self._fail(
                handler_ref,
                ref,
                f"{where}, and it is not an import path like 'package.module:attribute'",
            )
        module_name, _, attribute_path = target.partition(":")
        try:
            obj: object = importlib.import_module(module_name)
        except ImportError as exc:
            raise self._fail(
                handler_ref, ref, f"module {module_name!r} cannot be imported ({exc})"
            ) from exc
        except Exception as exc:
            raise self._fail(
                handler_ref, ref, f"importing {module_name!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        parts = attribute_path.split(".")
        for index, part in enumerate(parts):
            here = f"{module_name}:{'.'.join(parts[:index])}" if index else module_name
            if inspect.isclass(obj) and inspect.isfunction(inspect.getattr_static(obj, part, None)):
                # An instance method: bind it to an instance, as the reference asks for a callable.
                obj = self._instance(obj, here, handler_ref, ref)
            try:
                obj = getattr(obj, part)
            except AttributeError as exc:
                raise self._fail(handler_ref, ref, f"{here!r} has no attribute {part!r}") from exc
        if inspect.isclass(obj):
            obj = self._instance(obj, target, handler_ref, ref)
        return obj

    def _instance(
        self, cls: type, path: str, handler_ref: HandlerRef, ref: ElementRef | None
    ) -> object:
        if path in self._instances:
            return self._instances[path]
        for service_id in (path, f"{cls.__module__}.{cls.__qualname__}"):
            found, service = self._from_container(service_id, handler_ref, ref)
            if found:
                return service
        try:
            instance = cls()
        except Exception as exc:
            raise self._fail(
                handler_ref,
                ref,
                f"class {path!r} cannot be instantiated without arguments ({type(exc).__name__}: "
                f"{exc}); register it in the container as {path!r}",
            ) from exc
        self._instances[path] = instance
        return instance
