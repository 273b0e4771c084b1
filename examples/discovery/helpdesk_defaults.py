"""The helpdesk product's built-in elements: what a site gets before it customises anything.

The server serves them below what discovery finds (``BUILT_IN`` < ``Priority.DISCOVERY``), so
the site's package replaces any of them by declaring the same name, URI or URI template.
"""

from __future__ import annotations

from typing import Final

from mcp_core import Message
from mcp_core.handlers import prompt, resource, resource_template
from mcp_core.registry import Priority

BUILT_IN: Final = Priority.DISCOVERY - 100
"""The priority of the product's defaults: below anything discovered or declared."""


@resource("helpdesk://hours", mime_type="text/plain")
def default_hours() -> str:
    """When the helpdesk answers."""
    return "Monday to Friday, 9:00 to 17:00"


@resource("helpdesk://privacy", mime_type="text/plain")
def privacy() -> str:
    """The privacy notice (no site replaces it)."""
    return "Tickets are kept for one year."


@resource_template("helpdesk://articles/{topic}", mime_type="text/plain")
def placeholder_article(topic: str) -> str:
    """A knowledge-base article."""
    return f"the product has no article about {topic}"


@prompt
def escalation_note(issue: str) -> list[Message]:
    """Ask the second line to take over.

    Args:
        issue: The customer's issue.
    """
    return [Message.user(f"Escalate: {issue}")]


DEFAULTS: Final = (default_hours, privacy, placeholder_article, escalation_note)
