"""The application's services, as a framework's dependency-injection container declares them.

The symfony/mcp-bundle shape: every MCP handler is a service with an id (``mcp.stock``...),
built by the container with its dependencies the first time it is needed, never before. The
bundle's own registry and its profiler are services of the same container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dependency_injector import containers, providers

from mcp_core import ClientGateway, Message, ToolError

BUILT: Final[list[str]] = []
"""Each service's name, as the container builds it (what the profiler reports)."""


class Inventory:
    """The shop's stock levels (a database in a real shop)."""

    def __init__(self) -> None:
        BUILT.append("inventory")
        self.levels = {"A-1": 12, "B-2": 0}


class StockTool:
    """The ``stock_level`` tool: a handler service with a dependency."""

    def __init__(self, inventory: Inventory) -> None:
        BUILT.append("stock")
        self._inventory = inventory

    async def execute(self, arguments: Mapping[str, object], gateway: ClientGateway) -> str:  # noqa: ARG002 -- ToolHandler's signature
        """How many of an article are in stock."""
        sku = str(arguments["sku"])
        if sku not in self._inventory.levels:
            raise ToolError(f"there is no article {sku}")
        return f"{sku}: {self._inventory.levels[sku]} in stock"


class RestockPrompt:
    """The ``restock_note`` prompt: a handler service with a dependency."""

    def __init__(self, inventory: Inventory) -> None:
        BUILT.append("restock")
        self._inventory = inventory

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> list[Message]:  # noqa: ARG002 -- PromptHandler's signature
        """Ask for a restocking note for every article that ran out."""
        empty = sorted(sku for sku, level in self._inventory.levels.items() if level == 0)
        return [Message.user(f"Write a restocking note to {arguments['supplier']} for {empty}.")]


class OpeningHours:
    """The ``shop://opening-hours`` resource, configured with the shop's time zone."""

    def __init__(self, timezone: str) -> None:
        BUILT.append("hours")
        self._timezone = timezone

    async def read(self, uri: str, gateway: ClientGateway) -> str:  # noqa: ARG002 -- ResourceHandler's signature
        """The opening hours, in the shop's time zone."""
        return f"9:00-18:00 ({self._timezone})"


class McpServices(containers.DeclarativeContainer):
    """The bundle's handler services; mounted as ``mcp``, so their ids are ``mcp.<name>``."""

    config = providers.Configuration()
    inventory = providers.Singleton(Inventory)
    stock = providers.Singleton(StockTool, inventory=inventory)
    restock = providers.Factory(RestockPrompt, inventory=inventory)
    hours = providers.Singleton(OpeningHours, timezone=config.timezone)


class Kernel(containers.DeclarativeContainer):
    """The application's container."""

    config = providers.Configuration()
    mcp = providers.Container(McpServices, config=config)
