"""A small application, as marked functions: what the function and discovery sources publish."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcp_core.handlers import completion, prompt, resource, resource_template, tool

__all__ = ["add", "complete_style", "item", "notes", "review"]


@tool
def add(a: float, b: Annotated[float, Field(description="The second term.")]) -> float:
    """Add two numbers."""
    return a + b


@resource("file:///notes.txt", mime_type="text/plain")
def notes() -> str:
    """The notes."""
    return "remember the milk"


@resource_template("app://items/{id}")
def item(id: str) -> str:  # noqa: A002 -- the template variable's name
    """One item, by id."""
    return f"item {id}"


@prompt
def review(diff: str, style: str = "kind") -> str:
    """Review a change."""
    return f"Review this {style}ly:\n{diff}"


@completion(review, "style")
def complete_style(value: str) -> list[str]:
    """Tones that start with ``value``."""
    return [tone for tone in ("kind", "terse", "thorough") if tone.startswith(value)]
