"""The bundle's own registry: the reference Registry, traced for a profiler, on the lazy path.

A framework keeps a registry of its own to show what MCP did in a request (its profiler) and to
list the elements from its console (``mcp-core inspect``). Here it is a decorator over the
reference :class:`~mcp_core.registry.Registry` that records every catalogue and resolver call. It
plays every role of the reference one (the catalogue, the resolver with ``resource_candidates``,
runtime registration, the lifecycle, change events) and passes on what a server and the console
use when a registry has it (background work, health, diagnostics, origins), so serving it is as
lazy as serving the reference registry: nothing is provided to answer ``initialize``, a call
resolves its one element by name, and only a list loads the catalogue. The conformance kit
certifies it (``make_registry`` below is its factory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import final

from mcp_core.elements import (
    Element,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.registry import ChangeListener, Registry, RegistryHealth, ResolvedResource
from mcp_core.sources import ElementSource, SourceDiagnostic


@final
class TraceableRegistry:
    """``inner``, with each catalogue and resolver call recorded in :attr:`calls`."""

    def __init__(self, inner: Registry) -> None:
        self._inner = inner
        self.calls: list[str] = []
        """``"tools"``, ``"get_tool stock_level"``, ``"load"``...: what the server asked, in order."""

    def __repr__(self) -> str:
        return f"TraceableRegistry({self._inner!r})"

    # -- the catalogue ---------------------------------------------------------------------------

    async def tools(self) -> Sequence[Tool]:
        """The inner registry's tools (loads it)."""
        self.calls.append("tools")
        return await self._inner.tools()

    async def resources(self) -> Sequence[Resource]:
        """The inner registry's resources (loads it)."""
        self.calls.append("resources")
        return await self._inner.resources()

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        """The inner registry's resource templates (loads it)."""
        self.calls.append("resource_templates")
        return await self._inner.resource_templates()

    async def prompts(self) -> Sequence[Prompt]:
        """The inner registry's prompts (loads it)."""
        self.calls.append("prompts")
        return await self._inner.prompts()

    # -- the resolver ----------------------------------------------------------------------------

    async def get_tool(self, name: str) -> Element | None:
        """One tool by name (per-name before the first load)."""
        self.calls.append(f"get_tool {name}")
        return await self._inner.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        """One prompt by name (per-name before the first load)."""
        self.calls.append(f"get_prompt {name}")
        return await self._inner.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """The resource at ``uri`` (per-name before the first load)."""
        self.calls.append(f"get_resource {uri}")
        return await self._inner.get_resource(uri)

    async def resource_candidates(self, uri: str) -> Iterable[ResolvedResource]:
        """Every element that could answer ``uri``, best first (what a hidden winner makes way for)."""
        self.calls.append(f"resource_candidates {uri}")
        return await self._inner.resource_candidates(uri)

    # -- runtime registration --------------------------------------------------------------------

    async def register(self, element: Element) -> None:
        """Add or replace a runtime registration (it beats every source)."""
        self.calls.append(f"register {element.ref}")
        await self._inner.register(element)

    async def unregister(self, ref: ElementRef) -> bool:
        """Remove a runtime registration; whether there was one."""
        self.calls.append(f"unregister {ref}")
        return await self._inner.unregister(ref)

    # -- the lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        """Load the inner registry."""
        self.calls.append("load")
        await self._inner.load()

    async def reload(self) -> None:
        """Reload the inner registry."""
        self.calls.append("reload")
        await self._inner.reload()

    @property
    def loaded(self) -> bool:
        """Whether the inner registry has loaded."""
        return self._inner.loaded

    def kinds(self) -> ElementKind:
        """The inner registry's kinds, answered without loading (the server's capabilities)."""
        return self._inner.kinds()

    # -- what a server and ``mcp-core inspect`` use when a registry has it -----------------------

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Change events, so that clients hear of changes."""
        return self._inner.subscribe(listener)

    def background(self) -> AbstractAsyncContextManager[None]:
        """The inner registry's background work (retries, running sources) while serving."""
        return self._inner.background()

    async def prefetch_kinds(self) -> None:
        """Let the sources answer ``kinds()`` from what they recorded, before ``initialize``."""
        await self._inner.prefetch_kinds()

    def health(self) -> RegistryHealth:
        """The inner registry's health (served at the HTTP health endpoint; never loads)."""
        return self._inner.health()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """What the inner registry skipped, shadowed or could not reach."""
        return self._inner.diagnostics()

    def origin(self, ref: ElementRef) -> str | None:
        """Which source the element at ``ref`` comes from."""
        return self._inner.origin(ref)

    @property
    def sources(self) -> tuple[tuple[ElementSource, int], ...]:
        """The inner registry's sources and their priorities."""
        return self._inner.sources


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> TraceableRegistry:
    """The conformance kit's factory: ``pytest --mcp-conformance --mcp-registry=bundle_registry:make_registry``."""
    reference = Registry()
    for source, priority in sources:
        reference.add_source(source, priority)
    return TraceableRegistry(reference)
