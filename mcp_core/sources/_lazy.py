"""LazySource: imperative registration deferred until the elements are first needed."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TypeAlias, final

import anyio

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import SourceError
from mcp_core.sources._diagnostics import SourceDiagnostic, callable_name
from mcp_core.sources._items import admit_items, is_item_iterable

__all__ = ["LazyFactory", "LazyLookup", "LazySource"]

LazyResult: TypeAlias = ElementCollection | Iterable[object]
LazyFactory: TypeAlias = Callable[[], LazyResult | Awaitable[LazyResult]]
"""A sync or async callable returning an ElementCollection, or an iterable of Elements and of
builders (callables returning an Element), each admitted alone."""
LazyLookup: TypeAlias = Callable[[ElementRef], Element | Awaitable[Element | None] | None]
"""A sync or async callable answering one ref: the element the factory would return there, or None."""


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
      iterable of items; a sync factory runs on the event loop (plugin registration is rarely
      thread-safe), so make a slow one async.
    - Each item is admitted alone: an :class:`Element`, or a *builder* (a callable taking no
      arguments, e.g. a plugin's bound ``element`` method) that is called on its own. An item that
      cannot be built (its builder raises: an invalid name, a constructor that fails), repeats an
      earlier item's ref, lies outside the declared ``kinds`` or is not an element at all is
      skipped with one ``skipped`` diagnostic (:meth:`diagnostics`); the others are served. A
      generator that raises keeps what it yielded before (and says the rest was lost): yield
      builders, not elements built in the generator's body, so one plugin's failure stays its own.
    - Single flight: concurrent first ``provide()`` calls share one factory call and its outcome.
    - A raising factory is not cached: the error reaches every caller that shared the call, and
      the next ``provide()`` calls the factory again. A cancelled call is retried the same way.
    - ``kinds()`` answers the declared ``kinds`` and never calls the factory. The default,
      ``ElementKind.ALL``, over-advertises unless you declare what the factory registers; an
      element outside the declared kinds is skipped with a diagnostic, never silently trimmed.
    - ``lookup(ref)`` (per-name resolution, see :class:`~mcp_core.sources.ElementLookup`): with a
      ``lookup`` callable, one ref is answered by it without calling the factory (the plugin
      manager instantiates one plugin); it must agree with what the factory returns (law
      ``source.lookup-agrees``). Without one, or once the factory has run, the factory's result
      answers.
    """

    __slots__ = ("_collection", "_diagnostics", "_factory", "_flight", "_kinds", "_lookup")

    def __init__(
        self,
        factory: LazyFactory,
        *,
        kinds: ElementKind = ElementKind.ALL,
        lookup: LazyLookup | None = None,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"LazySource needs a callable factory, got {type(factory).__name__}")
        if lookup is not None and not callable(lookup):
            raise TypeError(
                f"LazySource lookup must be a callable taking an ElementRef, got {type(lookup).__name__}"
            )
        self._factory = factory
        self._lookup = lookup
        self._kinds = kinds
        self._collection: ElementCollection | None = None
        self._flight: _Flight | None = None
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

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
            collection = self._collection = await self._checked(result)
        except Exception as exc:
            flight.error = exc
            raise
        finally:
            self._flight = None
            flight.done.set()
        return collection

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element at ``ref``: from the ``lookup`` callable until the factory has run, then from its result.

        Raises:
            SourceError: the ``lookup`` callable answered something other than None or an
                element at ``ref`` of a declared kind.
        """
        if self._collection is not None or self._lookup is None:
            return (await self.provide()).get(ref)
        found = self._lookup(ref)
        if inspect.isawaitable(found):
            found = await found
        if found is None:
            return None
        if not isinstance(found, Element) or found.ref != ref or not found.kind & self._kinds:
            what = f"the element {found.ref}" if isinstance(found, Element) else repr(found)
            raise SourceError(
                f"{self!r}: lookup({ref}) answered {what}; it must answer None or the element at "
                f"exactly that ref, of a declared kind ({self._kinds.label or 'none'})",
                source=self,
            )
        return found

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """One ``skipped`` diagnostic per item of the factory's result that was left out."""
        return self._diagnostics

    async def _checked(self, result: object) -> ElementCollection:
        if not isinstance(result, ElementCollection) and not is_item_iterable(result):
            raise TypeError(
                f"{self!r}: the factory must return an ElementCollection or an iterable of Elements "
                f"(or of builders returning one), got {type(result).__name__}; "
                "build one with ElementCollection(elements)"
            )
        if isinstance(result, ElementCollection) and not result.kinds & ~self._kinds:
            self._diagnostics = ()
            return result  # already one element per ref, all of declared kinds
        admitted = await admit_items(
            result, source=repr(self), owner="the factory", kinds=self._kinds
        )
        self._diagnostics = tuple(admitted.diagnostics)
        if isinstance(result, ElementCollection) and not admitted.diagnostics:
            return result
        return admitted.collection

    def cache_inputs(self) -> Mapping[str, object]:
        """What the output depends on, as far as it is known: the factory and the kinds.

        Two LazySources over different closures of one function look alike here; give a
        ``CachedSource`` an explicit ``key`` to tell them apart.
        """
        return {"factory": callable_name(self._factory), "kinds": self._kinds.label}
