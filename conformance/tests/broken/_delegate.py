"""A registry that forwards every role to the reference Registry; broken ones override a part."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from mcp_core.elements import (
    Element,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.handlers import Invoker
from mcp_core.registry import Registry, ResolvedResource
from mcp_core.sources import ElementSource


def reference(sources: Sequence[tuple[ElementSource, int]]) -> Registry:
    """The reference Registry as the kit certifies it (validating handler kinds)."""
    return Registry(sources, validator=Invoker().validate_handler)


class Forwarding:
    """Every role of ``inner`` but the optional ``resource_candidates``, forwarded unchanged."""

    def __init__(self, inner: Registry) -> None:
        self.inner = inner

    async def tools(self) -> Sequence[Tool]:
        return await self.inner.tools()

    async def resources(self) -> Sequence[Resource]:
        return await self.inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        return await self.inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        return await self.inner.prompts()

    async def get_tool(self, name: str) -> Element | None:
        return await self.inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        return await self.inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        return await self.inner.get_resource(uri)

    async def get(self, ref: ElementRef) -> Element | None:
        return await self.inner.get(ref)

    async def register(self, element: Element) -> None:
        await self.inner.register(element)

    async def unregister(self, ref: ElementRef) -> bool:
        return await self.inner.unregister(ref)

    async def load(self) -> None:
        await self.inner.load()

    async def reload(self) -> None:
        await self.inner.reload()

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        return self.inner.subscribe(listener)


class Delegating(Forwarding):
    """Every role of ``inner``, ``resource_candidates`` included, forwarded unchanged."""

    async def resource_candidates(self, uri: str) -> Iterable[ResolvedResource]:
        return await self.inner.resource_candidates(uri)


class OwnListeners(Delegating):
    """Keeps its own change listeners, fed from ``inner``'s events, called in a plain loop."""

    def __init__(self, inner: Registry) -> None:
        super().__init__(inner)
        self.listeners: list[Callable[[ElementKind], object]] = []
        inner.subscribe(self.fan_out)

    def fan_out(self, kinds: ElementKind) -> None:
        """Call every listener (a raising one stops the loop: not isolated)."""
        for listener in tuple(self.listeners):
            listener(kinds)

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)
