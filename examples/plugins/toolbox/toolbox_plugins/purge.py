"""purge_cache: administrators only, and only after the user confirms (elicitation)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_core import ClientGateway
from mcp_core.elements import Tool
from toolbox_plugins.base import ToolPlugin

CONFIRM: Final = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Purge every cached report?"}},
    "required": ["confirm"],
}


class PurgeCache(ToolPlugin):
    """Purge the report cache, after asking the user."""

    required_scope = "admin"
    definition = Tool(
        name="purge_cache",
        description="Purge every cached report (asks for confirmation; administrators only).",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    )

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """Ask first; purge only on an explicit yes."""
        answer = await gateway.elicit("Purge every cached report?", CONFIRM)
        content = answer.get("content") or {}
        if answer.get("action") == "accept" and content.get("confirm") is True:
            await gateway.log("warning", "report cache purged", logger="purge")
            return "purged"
        return "kept: nothing was purged"
