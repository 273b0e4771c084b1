"""Sources that run while served: connections or a lifespan kept open, changes announced.

Most sources are values: ``provide()`` computes a collection and nothing stays open. A few sources
front something alive — a remote MCP server reached over a connection, an SDK server whose
lifespan must be entered — and work best while *running*: they hold their connections between
calls, notice when their backend's elements change and say so. Both abilities are optional
protocols, so a plain source stays a plain source:

- :class:`RunningSource`: ``running()`` returns an async context manager; while it is entered the
  source keeps what it needs open (and it still works, more slowly, outside of it);
- :class:`ChangingSource`: ``subscribe(listener)`` calls ``listener(kinds)`` when the elements the
  source would provide changed, so whoever serves it can provide again (:class:`ChangeListeners`
  keeps a source's listeners and tells them).

:func:`running_sources` starts every such source of a registry (wrappers' inner sources
included) for the duration of a server run and reloads the registry on their changes; ``App`` does
this for every run of its server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Protocol, final, runtime_checkable

import anyio

from mcp_core.elements import ElementKind
from mcp_core.handlers import escapes
from mcp_core.sources._diagnostics import describe_source
from mcp_core.sources._protocol import ElementSource

__all__ = ["ChangeListeners", "ChangingSource", "RunningSource", "running_sources"]

_log = logging.getLogger("mcp_core.sources")


@runtime_checkable
class RunningSource(Protocol):
    """A source that keeps something open while it is served.

    Law: a source provides the same elements whether or not it is running; running only keeps
    connections (or a lifespan) open between calls instead of opening them per call. Entering
    ``running()`` while it is already entered elsewhere is allowed and shares the first entry
    (the first one entered owns what is open and closes it when it exits).
    """

    def running(self) -> AbstractAsyncContextManager[object]:
        """An async context manager keeping the source's connections (or lifespan) open."""
        ...


@runtime_checkable
class ChangingSource(Protocol):
    """A source that can tell when the elements it would provide have changed."""

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each change; returns a function that unsubscribes."""
        ...


@final
class ChangeListeners:
    """The listeners of a :class:`ChangingSource`: a source delegates ``subscribe`` to it.

    ::

        def subscribe(self, listener):
            return self._listeners.subscribe(listener)

    :meth:`announce` calls every listener subscribed at that moment. One that raises (``SystemExit``
    too) is logged, and the others still hear of the change: a subscriber's bug must not stop the
    source that announces.
    """

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: list[Callable[[ElementKind], object]] = []

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` at each :meth:`announce`; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def announce(self, kinds: ElementKind) -> None:
        """Tell every listener that the elements of ``kinds`` changed."""
        for listener in tuple(self._listeners):
            try:
                listener(kinds)
            except BaseException as exc:
                if escapes(exc):
                    raise
                _log.exception("change listener %r raised; ignoring it", listener)


def _chain(source: ElementSource) -> Iterator[object]:
    """``source`` and the sources it wraps (every wrapper keeps its inner source as ``inner``)."""
    seen: set[int] = set()
    current: object = source
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = getattr(current, "inner", None)


@asynccontextmanager
async def running_sources(
    sources: Iterable[ElementSource], reload: Callable[[], Awaitable[object]]
) -> AsyncIterator[None]:
    """Run every :class:`RunningSource` among ``sources`` (and the sources they wrap).

    While entered, a change announced by a :class:`ChangingSource` among them calls ``reload()``
    (changes arriving during a reload are coalesced into one more reload). A failing reload is
    logged and does not stop the others.
    """
    found = [inner for source in sources for inner in _chain(source)]
    changed = anyio.Event()

    def on_change(_kinds: ElementKind) -> None:
        changed.set()

    async def reloading() -> None:
        nonlocal changed
        while True:
            await changed.wait()
            changed = anyio.Event()
            try:
                await reload()
            except Exception:  # noqa: BLE001 -- a failed reload is logged; the next change retries
                _log.exception("reloading after a source change failed")

    async with AsyncExitStack() as stack:
        for inner in found:
            if isinstance(inner, RunningSource):
                try:
                    await stack.enter_async_context(inner.running())
                except Exception:  # noqa: BLE001 -- one source failing to start costs only itself
                    _log.exception(
                        "source %s failed to start; it is served without running",
                        describe_source(inner),
                    )
            if isinstance(inner, ChangingSource):
                stack.callback(inner.subscribe(on_change))
        tasks = await stack.enter_async_context(anyio.create_task_group())
        tasks.start_soon(reloading)
        try:
            yield
        finally:
            tasks.cancel_scope.cancel()
