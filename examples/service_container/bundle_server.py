"""A framework bundle's MCP server: handlers are container services, the registry is its own.

    mcp-core run examples/service_container/bundle_server.py                          # stdio
    mcp-core run examples/service_container/bundle_server.py --transport http --port 8000
    mcp-core inspect examples/service_container/bundle_server.py                      # debug:mcp

The symfony/mcp-bundle case (``docs/examples/service-container.md``):

- the element set is computed ahead, as a value (``compiled_elements()``: what a container
  compile pass produces), and every handler in it is a **container id**
  (``HandlerRef("mcp.stock")``), resolved through the application's dependency-injector
  container (``DependencyInjectorContainer``) the first time it is called: a service is built
  with its dependencies when needed, never at start-up;
- the registry is the bundle's own (``TraceableRegistry``, for its profiler and console), served
  by ``McpServer`` on the **lazy path** (``preload=False``): nothing is provided to answer
  ``initialize``, a call resolves its one element by name, only a list loads the catalogue;
- ``mcp_profile`` (itself a container service) shows what the registry was asked and which
  services were built.

Configuration: ``SHOP_TIMEZONE`` (default ``Europe/Paris``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from bundle_registry import TraceableRegistry
from dependency_injector import providers
from shop_services import BUILT, Kernel

from mcp_core import ClientGateway
from mcp_core.elements import (
    Element,
    ElementCollection,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    Tool,
)
from mcp_core.handlers import Invoker
from mcp_core.handlers.containers import DependencyInjectorContainer
from mcp_core.registry import Priority, Registry
from mcp_core.server import McpServer
from mcp_core.sources import StaticSource


def compiled_elements() -> ElementCollection:
    """The bundle's elements, as its compile pass computes them: definitions and service ids."""
    sku = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    return ElementCollection(
        [
            Element(
                definition=Tool(
                    name="stock_level", description="Stock of an article.", input_schema=sku
                ),
                handler=HandlerRef("mcp.stock"),
            ),
            Element(
                definition=Prompt(
                    name="restock_note",
                    description="A restocking note for what ran out.",
                    arguments=[PromptArgument(name="supplier", required=True)],
                ),
                handler=HandlerRef("mcp.restock"),
            ),
            Element(
                definition=Resource(
                    uri="shop://opening-hours", name="opening_hours", mime_type="text/plain"
                ),
                handler=HandlerRef("mcp.hours"),
            ),
            Element(
                definition=Tool(
                    name="mcp_profile",
                    description="What the registry was asked, and which services were built.",
                    input_schema={"type": "object"},
                ),
                handler=HandlerRef("profiler"),
            ),
        ]
    )


class Profiler:
    """The ``mcp_profile`` tool: the profiler's data collector, a service of the container too."""

    def __init__(self, registry: TraceableRegistry) -> None:
        self._registry = registry

    async def execute(
        self,
        arguments: Mapping[str, object],  # noqa: ARG002 -- ToolHandler's signature
        gateway: ClientGateway,  # noqa: ARG002 -- same
    ) -> dict[str, object]:
        """The registry's calls so far, whether it has loaded, and the services built."""
        return {
            "calls": list(self._registry.calls),
            "loaded": self._registry.loaded,
            "built": list(BUILT),
        }


def traced_registry() -> TraceableRegistry:
    """The bundle's registry over the compiled elements (nothing is provided until asked)."""
    reference = Registry()
    reference.add_source(StaticSource(compiled_elements()), Priority.MANUAL)
    return TraceableRegistry(reference)


class BundleKernel(Kernel):
    """The application's container with the bundle's own services: its registry and profiler."""

    registry = providers.Singleton(traced_registry)
    profiler = providers.Singleton(Profiler, registry=registry)


kernel: Final = BundleKernel()
kernel.config.from_dict({"timezone": os.environ.get("SHOP_TIMEZONE") or "Europe/Paris"})

server: Final = McpServer(
    kernel.registry(),
    name="shop-bundle",
    version="1.0.0",
    instructions="The shop's stock, opening hours and restocking notes.",
    invoker=Invoker(container=DependencyInjectorContainer(kernel)),
    preload=False,  # the lazy path: nothing is provided before a request needs it
)
