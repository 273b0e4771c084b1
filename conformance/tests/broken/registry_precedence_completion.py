"""Breaks registry.precedence: at equal priority, the source that finished providing first wins.

Each source is provided concurrently and handed to the merge in the order it finished, so
"added first" becomes "answered first". With sources that answer in the order they were added
(no delays) it is right; with slower early sources it is not.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.handlers import escapes
from mcp_core.registry import ResolvedResource
from mcp_core.sources import ElementSource

from ._delegate import Delegating, reference


class _Answered:
    """A source's last answer, replayed: what the merge sees, in completion order."""

    def __init__(self, source: ElementSource) -> None:
        self.source = source
        self.collection: ElementCollection | None = None
        self.error: BaseException | None = None

    def kinds(self) -> ElementKind:
        return self.source.kinds()

    async def provide(self) -> ElementCollection:
        if self.error is not None:
            raise self.error
        return self.collection or ElementCollection()


class _CompletionOrder(Delegating):
    def __init__(self, sources: Sequence[tuple[ElementSource, int]]) -> None:
        self.sources = list(sources)
        self.answered = [_Answered(source) for source, _ in sources]
        self.order: list[int] = list(range(len(self.sources)))
        super().__init__(reference(self._pairs()))
        self.started = False
        self.lock = anyio.Lock()
        self.runtime: dict[ElementRef, Element] = {}

    async def register(self, element: Element) -> None:
        await self.inner.register(element)
        self.runtime[element.ref] = element

    async def unregister(self, ref: ElementRef) -> bool:
        self.runtime.pop(ref, None)
        return await self.inner.unregister(ref)

    def _pairs(self) -> list[tuple[ElementSource, int]]:
        return [(self.answered[i], self.sources[i][1]) for i in self.order]

    async def _provide_all(self) -> None:
        finished: list[int] = []

        async def one(index: int) -> None:
            answered = self.answered[index]
            try:
                answered.collection, answered.error = await answered.source.provide(), None
            except BaseException as exc:  # replayed to the merge, which isolates it
                if escapes(exc):
                    raise
                answered.error = exc
            finished.append(index)

        async with anyio.create_task_group() as group:
            for index in range(len(self.sources)):
                group.start_soon(one, index)
        if finished != self.order:
            self.order = finished
            runtime = self.runtime
            self.inner = reference(self._pairs())
            for element in runtime.values():
                await self.inner.register(element)

    async def load(self) -> None:
        async with self.lock:  # concurrent first readers share one load, as they must
            if not self.started:
                self.started = True
                await self._provide_all()
        await self.inner.load()

    async def reload(self) -> None:
        async with self.lock:
            self.started = True
            await self._provide_all()
            await self.inner.reload()

    async def tools(self) -> Sequence[Tool]:
        await self.load()
        return await self.inner.tools()

    async def resources(self) -> Sequence[Resource]:
        await self.load()
        return await self.inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        await self.load()
        return await self.inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        await self.load()
        return await self.inner.prompts()

    async def get_tool(self, name: str) -> Element | None:
        await self.load()
        return await self.inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        await self.load()
        return await self.inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        await self.load()
        return await self.inner.get_resource(uri)


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> _CompletionOrder:
    """The reference registry merging sources in the order they finished providing."""
    return _CompletionOrder(sources)
