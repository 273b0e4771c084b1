"""The handlers a catalogue entry or a shared registration may name: this server's own code.

Entries in the catalogue file and tools registered at run time name a handler by import path
(``"greetings:Template"``); the shared registrations only accept the targets on the server's
allow-list, so whoever writes Redis chooses among this code and can make no worker import
anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from mcp_core import ClientGateway, ToolError


@final
class Template:
    """A tool whose answer is its definition's ``_meta.template``, filled with the arguments."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Fill the template of the tool being served."""
        meta = gateway.element.definition.meta or {}
        template = meta.get("template")
        if not isinstance(template, str):
            raise ToolError(f"{gateway.element.ref} has no _meta.template")
        return template.format_map({key: str(value) for key, value in arguments.items()})
