"""summarize: asks the client's model for a summary (sampling), and says so in the log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_core import ClientGateway
from mcp_core.elements import Tool
from toolbox_plugins.base import ToolPlugin


class Summarize(ToolPlugin):
    """Summarize a text with the client's own model."""

    definition = Tool(
        name="summarize",
        description="Summarize a text in one sentence, with your own model.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to summarize."}},
            "required": ["text"],
            "additionalProperties": False,
        },
    )

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Sample one sentence from the client's model."""
        text: str = arguments["text"]
        await gateway.log("info", f"summarizing {len(text)} characters", logger="summarize")
        answer = await gateway.sample(
            [{"role": "user", "content": {"type": "text", "text": f"Summarize: {text}"}}],
            max_tokens=100,
            system_prompt="Answer with one sentence.",
        )
        content = answer.get("content", {})
        return f"summary: {content.get('text', '') if isinstance(content, Mapping) else ''}"
