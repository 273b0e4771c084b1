"""LazySource: imperative registration deferred until the elements are first needed."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TypeAlias, final

import anyio

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.errors import SourceError
from mcp_core.sources._diagnostics import callable_name
from mcp_core.sources._static import as_collection

__all__ = ["LazyFactory", "LazySource"]

LazyResult: TypeAlias = ElementCollection | Iterable[Element]
LazyFactory: TypeAlias = Callable[[], LazyResult | Awaitable[LazyResult]]
"""A sync or async callable returning an ElementCollection or an iterable of Elements."""


@final
class _Flight:
    """One factory call in progress, shared by every ``provide()`` that arrives meanwhile."""

    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.error: Exception | None = None


@final
class LazySource:
    """Calls ``factory`` once, on the first ``provide()``, and provides its result from then on.

    The plugin-manager case: the elements come from imperative registration (loading plugins,
    scanning a container) that is too costly or too early to run at import or construction time.

    - ``factory`` is a sync or async callable returning an :class:`ElementCollection` or an
      iterable of :class:`Element`; a sync factory runs on the event loop (plugin registration is
      rarely thread-safe), so make a slow one async.
    - Single flight: concurrent first ``provide()`` calls share one factory call and its outcome.
    - A raising factory is not cached: the error reaches every caller that shared the call, and
      the next ``provide()`` calls the factory again. A cancelled call is retried the same way.
    - ``kinds()`` answers the declared ``kinds`` and never calls the factory. The default,
      ``ElementKind.ALL``, over-advertises unless you declare what the factory registers; a
      factory that returns an element outside the declared kinds is a configuration error
      (:class:`~mcp_core.errors.SourceError`), never silently trimmed.
    """

    __slots__ = ("_collection", "_factory", "_flight", "_kinds")

    def __init__(self, factory: LazyFactory, *, kinds: ElementKind = ElementKind.ALL) -> None:
        if not callable(factory):
            raise TypeError(f"LazySource needs a callable factory, got {type(factory).__name__}")
        self._factory = factory
        self._kinds = kinds
        self._collection: ElementCollection | None = None
        self._flight: _Flight | None = None

    def __repr__(self) -> str:
        kinds = "" if self._kinds == ElementKind.ALL else f", kinds={self._kinds.label or 'none'}"
        return f"LazySource({callable_name(self._factory)}{kinds})"

    @property
    def called(self) -> bool:
        """Whether the factory has returned successfully (the collection is now fixed)."""
        return self._collection is not None

    def kinds(self) -> ElementKind:
        """The declared kinds; never calls the factory."""
        return self._kinds

    async def provide(self) -> ElementCollection:
        """The factory's result, calling the factory first if no call has succeeded yet."""
        while True:
            if self._collection is not None:
                return self._collection
            flight = self._flight
            if flight is None:
                return await self._fly()
            await flight.done.wait()
            if flight.error is not None:
                raise flight.error
            # Success leaves self._collection set; a cancelled flight leaves nothing: go again.

    async def _fly(self) -> ElementCollection:
        flight = self._flight = _Flight()
        try:
            result = self._factory()
            if inspect.isawaitable(result):
                result = await result
            collection = self._collection = self._checked(result)
        except Exception as exc:
            flight.error = exc
            raise
        finally:
            self._flight = None
            flight.done.set()
        return collection

    def _checked(self, result: object) -> ElementCollection:
        collection = as_collection(result, owner=f"{self!r}: the factory", iterables=True)
        extra = collection.kinds & ~self._kinds
        if extra:
            raise SourceError(
                f"{self!r}: the factory returned {extra.label} elements, outside the declared "
                f"kinds={self._kinds.label or 'none'}; declare every kind it registers",
                source=self,
            )
        return collection

    def cache_inputs(self) -> Mapping[str, object]:
        """What the output depends on, as far as it is known: the factory and the kinds.

        Two LazySources over different closures of one function look alike here; give a
        ``CachedSource`` an explicit ``key`` to tell them apart.
        """
        return {"factory": callable_name(self._factory), "kinds": self._kinds.label}
