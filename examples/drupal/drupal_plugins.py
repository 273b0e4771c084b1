"""The site's plugins and the plugin manager that registers them all from one factory.

The drupal/mcp_server shape: tool plugins that are their own handlers (they filter their own
arguments and execute with the client's gateway), resource template providers that check access
to the concrete URI being read, all configured in the site's configuration (here a dict), and
one factory registering every plugin.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from mcp_core import ClientGateway
from mcp_core.elements import Element, ElementRef, ResourceTemplate, Tool
from mcp_core.visibility import SessionInfo

ROLES: Final[Mapping[str, frozenset[str]]] = {
    "ann": frozenset({"editor"}),
    "bob": frozenset(),
}
"""Each account's roles."""


@dataclass(frozen=True)
class Node:
    """A piece of content: its owner, title and whether anyone may read it."""

    owner: str
    title: str
    published: bool


NODES: Final[Mapping[str, Node]] = {
    "1": Node("ann", "Welcome", published=True),
    "2": Node("ann", "Ann's draft", published=False),
    "3": Node("bob", "Bob's notes", published=False),
}


def roles_of(session: SessionInfo) -> frozenset[str]:
    """The roles of the account a session acts as."""
    return ROLES.get(session.principal or "", frozenset())


class ToolPlugin:
    """The tool plugin base: configuration in, a definition and a handler out.

    ``check_access(name, session)`` is the plugin's own access rule (a required role); the server
    asks it for lists and calls alike. ``filter_arguments`` drops ``_``-prefixed system arguments.
    """

    input_schema: ClassVar[Mapping[str, Any]] = {"type": "object"}
    required_role: ClassVar[str | None] = None

    def __init__(self, configuration: Mapping[str, Any]) -> None:
        self.configuration = configuration
        # Built from configuration: an invalid configured name raises here, for this plugin only.
        self.definition = Tool(
            name=configuration["name"],
            description=configuration.get("description"),
            input_schema=self.input_schema,
            meta={"drupal": {"plugin": type(self).__name__, "config": configuration["id"]}},
        )

    def element(self) -> Element:
        """The plugin as an element: its definition, served by the plugin itself."""
        return Element(definition=self.definition, handler=self)

    def check_access(self, name: str, session: SessionInfo) -> bool:  # noqa: ARG002 -- the access check's signature
        """Whether the session's account may see and call this tool."""
        return self.required_role is None or self.required_role in roles_of(session)

    def filter_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Drop system arguments (``_``-prefixed) before validation."""
        return {key: value for key, value in arguments.items() if not key.startswith("_")}

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Run the plugin (subclasses)."""
        raise NotImplementedError


class EchoTool(ToolPlugin):
    """Echoes a message."""

    input_schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": False,
    }

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """The message back."""
        return f"echo: {arguments['message']}"


class DescribeTool(ToolPlugin):
    """Describes itself: parts of its own definition, returned as they are."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """Its own schema and metadata."""
        return {"input_schema": self.definition.input_schema, "meta": self.definition.meta}


class ContentExportTool(ToolPlugin):
    """Exports the site's content, after the user confirms; editors only."""

    required_role: ClassVar[str | None] = "editor"

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """Log, report progress, ask for confirmation, export."""
        await gateway.log("info", "preparing the export")
        await gateway.progress(1, 2)
        answer = await gateway.elicit(
            f"Export {len(NODES)} nodes?",
            {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
        )
        if answer.get("action") != "accept" or not answer.get("content", {}).get("confirm"):
            return "export cancelled"
        await gateway.progress(2, 2)
        await gateway.log("info", "export written")
        return f"exported {len(NODES)} nodes"


class NodeResource:
    """The ``node://{nid}`` resource template provider, checking access per concrete URI."""

    template = ResourceTemplate(
        uri_template="node://{nid}", name="node", mime_type="text/plain", description="A node."
    )

    def element(self) -> Element:
        """The provider as an element; node ids complete from the site's content."""
        return Element(definition=self.template, handler=self, completions={"nid": self.node_ids})

    def check_access(self, uri: str, session: SessionInfo) -> bool:
        """Published nodes for everyone; unpublished ones for their owner and editors."""
        node = NODES.get(uri.removeprefix("node://"))
        if node is None or node.published:
            return True
        return node.owner == session.principal or "editor" in roles_of(session)

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:  # noqa: ARG002 -- ResourceTemplateHandler's signature
        """The node's title."""
        node = NODES.get(variables["nid"])
        return node.title if node is not None else f"no node {variables['nid']}"

    def node_ids(self, value: str) -> list[str]:
        """Every node id starting with ``value``."""
        return [nid for nid in NODES if nid.startswith(value)]


PLUGINS: Final[Mapping[str, type[ToolPlugin]]] = {
    "echo": EchoTool,
    "describe": DescribeTool,
    "content_export": ContentExportTool,
}

CONFIGURATION: Final[tuple[Mapping[str, Any], ...]] = (
    {"id": "echo", "plugin": "echo", "name": "echo", "description": "Echo a message."},
    {"id": "describe", "plugin": "describe", "name": "describe", "description": "Describe me."},
    {"id": "export", "plugin": "content_export", "name": "content_export"},
    # A site builder's typo: a name with a space, which no client accepts. Costs only itself.
    {"id": "search", "plugin": "echo", "name": "content search"},
)
"""The enabled tool configurations (Drupal's config entities)."""


class PluginManager:
    """Creates plugin instances from configuration, once each, recording what it instantiated."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self._instances: dict[str, ToolPlugin] = {}

    def create_instance(self, configuration: Mapping[str, Any]) -> ToolPlugin:
        """The plugin a configuration names, configured (kept: one instance per configuration)."""
        plugin = self._instances.get(configuration["id"])
        if plugin is None:
            self.created.append(configuration["id"])
            plugin = PLUGINS[configuration["plugin"]](configuration)
            self._instances[configuration["id"]] = plugin
        return plugin

    def element_of(self, configuration: Mapping[str, Any]) -> Element:
        """The element of one configured plugin (raises for a broken configuration)."""
        return self.create_instance(configuration).element()

    def register_all(self) -> list[object]:
        """The one factory: a builder per enabled plugin, each built (and failing) alone."""
        builders: list[object] = [
            functools.partial(self.element_of, configuration) for configuration in CONFIGURATION
        ]
        builders.append(NodeResource().element)
        return builders

    def lookup(self, ref: ElementRef) -> Element | None:
        """One tool by name: only that plugin is instantiated (per-name resolution)."""
        for configuration in CONFIGURATION:
            if configuration["name"] == ref.key and ref.kind.label == "tool":
                return self.element_of(configuration)
        return None
