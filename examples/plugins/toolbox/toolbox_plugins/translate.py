"""translate: needs the ``deepl`` client library, which is not installed here.

Importing this module fails with ModuleNotFoundError; the server reports the plugin as skipped
and serves the others (``EntryPointSource``: a plugin that fails to load costs only itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import deepl  # type: ignore[import-not-found]  # deliberately absent: this plugin fails to load

from mcp_core import ClientGateway
from mcp_core.elements import Tool
from toolbox_plugins.base import ToolPlugin


class Translate(ToolPlugin):
    """Translate a text with DeepL."""

    definition = Tool(
        name="translate",
        description="Translate a text into another language.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}, "to": {"type": "string"}},
            "required": ["text", "to"],
        },
    )

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """Translate with the DeepL client."""
        translator = deepl.Translator("key")
        return str(translator.translate_text(arguments["text"], target_lang=arguments["to"]))
