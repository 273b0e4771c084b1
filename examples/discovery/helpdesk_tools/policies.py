"""The helpdesk's policies: opening hours, contacts and articles.

Each of these replaces one of the helpdesk product's built-in elements (``helpdesk_defaults``),
but for ``contact``, which the server replaces with its own.
"""

from __future__ import annotations

from mcp_core.handlers import resource, resource_template

ARTICLES = {
    "printer": "Turn it off and on again.",
    "password": "Use the self-service portal.",
}


@resource("helpdesk://hours", mime_type="text/plain")
def hours() -> str:
    """When the helpdesk answers (replaces the product's default hours)."""
    return "Monday to Saturday, 8:00 to 20:00"


@resource("helpdesk://contact", mime_type="text/plain")
def contact() -> str:
    """Who to call (the server replaces this with its own)."""
    return "call extension 100"


@resource_template("helpdesk://articles/{topic}", mime_type="text/plain")
def article(topic: str) -> str:
    """A knowledge-base article (replaces the product's placeholder articles)."""
    return ARTICLES.get(topic, f"no article about {topic} yet")
