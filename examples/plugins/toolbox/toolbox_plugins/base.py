"""What every toolbox plugin is: a tool definition, an access rule, arguments filtered, executed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from mcp_core import ClientGateway
from mcp_core.elements import Element, Tool
from mcp_core.visibility import SessionInfo


class ToolPlugin(ABC):
    """A plugin that is its own tool: ``ToolHandler`` (``execute``) and ``ArgumentFilter``.

    Subclasses set ``definition`` and, for a restricted plugin, ``required_scope``; the entry
    point names the class's :meth:`element`, which the server's ``EntryPointSource`` calls.
    """

    definition: ClassVar[Tool]
    required_scope: ClassVar[str | None] = None

    @classmethod
    def element(cls) -> Element:
        """The plugin as an element: its definition served by an instance of the plugin."""
        return Element(
            definition=cls.definition,
            handler=cls(),
            tags=frozenset({f"plugin:{cls.definition.name}"}),
        )

    def allows(self, session: SessionInfo) -> bool:
        """Whether ``session``'s user may see and call this plugin (its required scope)."""
        return self.required_scope is None or self.required_scope in session.scopes

    def filter_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Drop internal arguments (``_``-prefixed, e.g. a client's ``_trace``) before validation."""
        return {key: value for key, value in arguments.items() if not key.startswith("_")}

    @abstractmethod
    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Run the plugin with validated ``arguments``."""
