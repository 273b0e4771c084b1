"""Tool plugins that each provide several tools under their own name prefix (``content_*``...)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from mcp_core.elements import Element, ElementRef, Tool

QUERY: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}
NOTHING: Final[Mapping[str, Any]] = {"type": "object"}


class Plugin:
    """A plugin: a set of operations, published as tools named ``<plugin id>_<operation>``.

    The prefix is added by the server's ``PrefixedSource``; the plugin names its operations only.
    ``role`` is the role an account needs to see and call them (None: everyone).
    """

    id: ClassVar[str]
    role: ClassVar[str | None] = None

    def operations(self) -> Mapping[str, tuple[str, Mapping[str, Any], Callable[..., Any]]]:
        """Each operation: its description, input schema and function (subclasses)."""
        raise NotImplementedError

    def tools(self) -> list[Element]:
        """Every operation of the plugin as a tool (unprefixed)."""
        return [self._element(name) for name in self.operations()]

    def tool(self, ref: ElementRef) -> Element | None:
        """One operation as a tool, by its unprefixed name (or None)."""
        return self._element(ref.key) if ref.key in self.operations() else None

    def _element(self, name: str) -> Element:
        description, schema, function = self.operations()[name]
        tags = frozenset({f"scope:{self.role}"} if self.role else ())
        definition = Tool(name=name, description=description, input_schema=schema)
        return Element(definition=definition, handler=function, tags=tags)


class ContentPlugin(Plugin):
    """The site's content: search and count."""

    id: ClassVar[str] = "content"

    def operations(self) -> Mapping[str, tuple[str, Mapping[str, Any], Callable[..., Any]]]:
        """search, count."""
        return {
            "search": ("Search the content.", QUERY, self.search),
            "count": ("Count the content.", NOTHING, self.count),
        }

    def search(self, query: str) -> list[str]:
        """Titles containing the query."""
        return [title for title in ("Welcome", "Pricing") if query.lower() in title.lower()]

    def count(self) -> int:
        """How many nodes there are."""
        return 2


class UsersPlugin(Plugin):
    """The site's accounts: administrators only."""

    id: ClassVar[str] = "users"
    role: ClassVar[str | None] = "administrator"

    def operations(self) -> Mapping[str, tuple[str, Mapping[str, Any], Callable[..., Any]]]:
        """List."""
        return {"list": ("List the accounts.", NOTHING, self.list_accounts)}

    def list_accounts(self) -> list[str]:
        """Every account name."""
        return ["admin", "editor"]


PLUGIN_CLASSES: Final[tuple[type[Plugin], ...]] = (ContentPlugin, UsersPlugin)


class PluginManager:
    """Instantiates a plugin the first time one of its tools is needed, and records it."""

    def __init__(self) -> None:
        self.instantiated: list[str] = []
        self._instances: dict[str, Plugin] = {}

    def instance(self, plugin_class: type[Plugin]) -> Plugin:
        """The plugin's one instance."""
        plugin = self._instances.get(plugin_class.id)
        if plugin is None:
            self.instantiated.append(plugin_class.id)
            plugin = self._instances[plugin_class.id] = plugin_class()
        return plugin
