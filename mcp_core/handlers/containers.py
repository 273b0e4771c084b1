"""Adapters from dependency-injection libraries to the :class:`~mcp_core.handlers.Container` seam.

:class:`DependencyInjectorContainer` serves the providers of a `dependency-injector`_ container
as handler services: a handler given as ``HandlerRef("api.operations")`` is the object the
container's ``api.operations`` provider makes, built with its dependencies when first called.
Install the extra: ``pip install 'mcp-core-server[di]'``.

.. _dependency-injector: https://python-dependency-injector.ets-labs.org/
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from typing import Any, final

from dependency_injector import containers, providers

from mcp_core.errors import HandlerResolutionError

__all__ = ["DependencyInjectorContainer"]


@final
class DependencyInjectorContainer:
    """A dependency-injector container seen through mcp-core's ``Container`` protocol.

    Service ids are provider paths: ``"operations"`` is the container's ``operations`` provider,
    ``"api.operations"`` the ``operations`` provider of the container mounted as ``api``
    (``providers.Container`` or ``providers.DependenciesContainer``). A class is also found by
    its import path, the way mcp-core asks for classes named by a ``HandlerRef`` such as
    ``"shop.api:Operations"``: ``has("shop.api:Operations")`` and ``has("shop.api.Operations")``
    are true when exactly one provider makes that class, so such handlers get their constructor
    arguments from the container instead of being called without any.

    ``get(id)`` calls the provider: a ``Singleton`` gives its one instance, a ``Factory`` a new
    object (the invoker resolves each handler once and keeps it, so a factory behind a handler
    is built once per server). Providers that produce an awaitable (async ``Resource``,
    ``Coroutine``) cannot serve a synchronous lookup and are refused with
    :class:`~mcp_core.errors.HandlerResolutionError`; initialise them before serving (``await
    container.init_resources()``) and inject the result into a synchronous provider.

    The provider tree is read when the adapter is made; overriding a provider later
    (``container.operations.override(...)``) is honoured, adding one is not: make the adapter
    after the container is configured.
    """

    __slots__ = ("_by_class", "_by_path", "_container")

    def __init__(self, container: containers.Container) -> None:
        if isinstance(container, type) or not isinstance(
            getattr(container, "providers", None), Mapping
        ):
            raise TypeError(
                "DependencyInjectorContainer takes a dependency-injector container instance "
                f"(e.g. Services()), got {type(container).__name__}"
            )
        self._container = container
        self._by_path: dict[str, providers.Provider[Any]] = dict(_walk(container.providers, ""))
        self._by_class = _classes(self._by_path)

    def __repr__(self) -> str:
        return f"DependencyInjectorContainer({type(self._container).__qualname__})"

    def has(self, id: str) -> bool:  # noqa: A002 -- the Container protocol's vocabulary
        """Whether ``id`` names a provider (by path) or the one provider of a class."""
        return id in self._by_path or self._by_class.get(id) is not None

    def get(self, id: str) -> object:  # noqa: A002 -- the Container protocol's vocabulary
        """What the provider named ``id`` makes.

        Raises:
            HandlerResolutionError: nothing provides ``id``, or its provider made an awaitable.
        """
        provider = self._by_path.get(id) or self._by_class.get(id)
        if provider is None:
            known = ", ".join(sorted(self._by_path)) or "none"
            raise HandlerResolutionError(
                f"{self!r} has no provider {id!r}; known providers: {known}", handler_ref=id
            )
        service = provider()
        if inspect.isawaitable(service):
            if inspect.iscoroutine(service):
                service.close()  # never awaited: close it rather than leak a warning
            raise HandlerResolutionError(
                f"{self!r}: provider {id!r} made an awaitable ({type(service).__name__}); a "
                "handler service must be built synchronously: initialise async resources before "
                "serving and inject them into a Singleton or Factory",
                handler_ref=id,
            )
        return service


def _walk(
    found: Mapping[str, providers.Provider[Any]], prefix: str
) -> Iterator[tuple[str, providers.Provider[Any]]]:
    """Every provider under ``found``, by dotted path; mounted containers are walked into."""
    for name, provider in found.items():
        path = f"{prefix}{name}"
        nested = getattr(provider, "providers", None)
        if isinstance(provider, providers.Container | providers.DependenciesContainer) and (
            isinstance(nested, Mapping)
        ):
            yield from _walk(nested, f"{path}.")
            continue
        yield path, provider


def _classes(
    by_path: Mapping[str, providers.Provider[Any]],
) -> dict[str, providers.Provider[Any] | None]:
    """Providers by the import paths of the class each makes; None where two make one class."""
    found: dict[str, providers.Provider[Any] | None] = {}
    for provider in by_path.values():
        made = getattr(provider, "provides", None)
        if not inspect.isclass(made):
            continue
        for key in (
            f"{made.__module__}:{made.__qualname__}",
            f"{made.__module__}.{made.__qualname__}",
        ):
            found[key] = None if key in found and found[key] is not provider else provider
    return found
