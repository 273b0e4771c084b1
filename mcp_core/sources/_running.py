"""Sources that run while served: connections or a lifespan kept open, changes announced.

Most sources are values: ``provide()`` computes a collection and nothing stays open. A few sources
front something alive — a remote MCP server reached over a connection, an SDK server whose
lifespan must be entered — and work best while *running*: they hold their connections between
calls, notice when their backend's elements change and say so. Both abilities are optional
capabilities (declared with the others in :mod:`mcp_core.sources`), so a plain source stays a
plain source:

- :class:`RunningSource`: ``running()`` returns an async context manager; while it is entered the
  source keeps what it needs open (and it still works, more slowly, outside of it);
- :class:`ChangingSource`: ``subscribe(listener)`` calls ``listener(kinds)`` when the elements the
  source would provide changed, so whoever serves it can provide again (:class:`ChangeListeners`
  keeps a source's listeners and tells them).

:func:`running_sources` starts every such source of a registry (wrappers' inner sources
included) for the duration of a server run and reloads the sources that announce changes; ``App``
does this for every run of its server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, final

import anyio

from mcp_core.elements import ElementKind
from mcp_core.handlers import escapes
from mcp_core.sources._diagnostics import describe_source
from mcp_core.sources._protocol import ChangingSource, ElementSource, RunningSource, source_chain

__all__ = ["Applied", "ChangeListeners", "running_sources"]

_log = logging.getLogger("mcp_core.sources")


@final
class Applied:
    """What :func:`running_sources`' listeners return: awaiting it waits for the reload it asked for.

    Not a coroutine, so a source that ignores it leaves no "never awaited" warning behind.
    """

    __slots__ = ("_done",)

    def __init__(self, done: anyio.Event) -> None:
        self._done = done

    def __await__(self) -> Generator[Any, Any, None]:
        return self._done.wait().__await__()


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

    def announce(self, kinds: ElementKind) -> list[object]:
        """Tell every listener that the elements of ``kinds`` changed; return what they returned.

        A source whose writer waits for the change to be served awaits the awaitables among
        them (:func:`running_sources`' listeners return an :class:`Applied`).
        """
        answers: list[object] = []
        for listener in tuple(self._listeners):
            try:
                answers.append(listener(kinds))
            except BaseException as exc:
                if escapes(exc):
                    raise
                _log.exception("change listener %r raised; ignoring it", listener)
        return answers


@asynccontextmanager
async def running_sources(
    sources: Iterable[ElementSource], reload: Callable[..., Awaitable[object]]
) -> AsyncIterator[None]:
    """Run every :class:`RunningSource` among ``sources`` (and the sources they wrap).

    While entered, a change announced by a :class:`ChangingSource` among them (or wrapped by
    one of them) calls ``reload(*changed)`` with the sources of ``sources`` that announced it
    (``Registry.reload`` provides just those); changes arriving during a reload are coalesced
    into one more. The listener returns an :class:`Applied` that completes after that reload. A
    failing reload is logged and does not stop the others.
    """
    found = [(source, inner) for source in sources for inner in source_chain(source)]
    changed = anyio.Event()
    applied = anyio.Event()
    pending: list[ElementSource] = []

    def listener(source: ElementSource) -> Callable[[ElementKind], Applied]:
        def on_change(_kinds: ElementKind) -> Applied:
            if all(s is not source for s in pending):
                pending.append(source)
            changed.set()
            return Applied(applied)

        return on_change

    async def reloading() -> None:
        nonlocal changed, applied
        while True:
            await changed.wait()
            changed = anyio.Event()
            covering, applied = applied, anyio.Event()
            reloaded = tuple(pending)
            pending.clear()
            try:
                await reload(*reloaded)
            except Exception:  # noqa: BLE001 -- a failed reload is logged; the next change retries
                _log.exception("reloading after a source change failed")
            finally:
                covering.set()

    async with AsyncExitStack() as stack:
        await _start(stack, found, listener)
        tasks = await stack.enter_async_context(anyio.create_task_group())
        tasks.start_soon(reloading)
        try:
            yield
        finally:
            tasks.cancel_scope.cancel()


async def _start(
    stack: AsyncExitStack,
    found: list[tuple[ElementSource, object]],
    listener: Callable[[ElementSource], Callable[[ElementKind], object]],
) -> None:
    """Enter each running source and subscribe to each changing one, on ``stack``."""
    for source, inner in found:
        if isinstance(inner, RunningSource):
            try:
                await stack.enter_async_context(inner.running())
            except Exception:  # noqa: BLE001 -- one source failing to start costs only itself
                _log.exception(
                    "source %s failed to start; it is served without running",
                    describe_source(inner),
                )
        if isinstance(inner, ChangingSource):
            stack.callback(inner.subscribe(listener(source)))
