"""Reply templates for agents.

``polite_reply`` is replaced by the server's own; ``escalation_note`` replaces the product's.
"""

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


@prompt
def escalation_note(issue: str) -> list[Message]:
    """Ask the second line to take over (replaces the product's built-in escalation_note).

    Args:
        issue: The customer's issue.
    """
    return [Message.user(f"Escalate to the second line, with the steps tried so far: {issue}")]
