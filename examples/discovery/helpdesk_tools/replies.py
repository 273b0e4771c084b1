"""Reply templates for agents."""

from __future__ import annotations

from mcp_core import Message
from mcp_core.handlers import prompt


@prompt
def polite_reply(issue: str) -> list[Message]:
    """Draft a polite reply about an issue.

    Args:
        issue: The customer's issue.
    """
    return [Message.user(f"Write a short, polite reply about: {issue}")]
