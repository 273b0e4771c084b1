"""Searching the knowledge base."""

from __future__ import annotations

from typing import Final

from mcp_core.handlers import tool

ARTICLES: Final = {
    "printer": "Turn it off and on again.",
    "password": "Use the self-service portal.",
}


@tool
def search_articles(query: str) -> list[str]:
    """The knowledge-base articles about a topic.

    Args:
        query: A word of the topic.
    """
    return [text for topic, text in ARTICLES.items() if query.lower() in topic]
