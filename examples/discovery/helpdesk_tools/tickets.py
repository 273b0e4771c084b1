"""Tickets: open, look up and close them."""

from __future__ import annotations

from typing import Final

from mcp_core import ToolError
from mcp_core.handlers import completion, resource_template, tool

TICKETS: Final = {
    101: {"title": "Printer on fire", "status": "open"},
    102: {"title": "Password reset", "status": "closed"},
}


@tool
def open_ticket(title: str) -> int:
    """Open a ticket; returns its number.

    Args:
        title: What is wrong.
    """
    number = max(TICKETS) + 1
    TICKETS[number] = {"title": title, "status": "open"}
    return number


@tool
def close_ticket(number: int) -> str:
    """Close a ticket (the server replaces this one with its own: see helpdesk_server.py).

    Args:
        number: The ticket.
    """
    TICKETS[number]["status"] = "closed"
    return f"ticket {number} closed"


@resource_template("helpdesk://tickets/{number}", mime_type="application/json")
def ticket(number: int) -> dict[str, str]:
    """One ticket (the server replaces this view with its own; this completion stays)."""
    if number not in TICKETS:
        raise ToolError(f"there is no ticket {number}")
    return TICKETS[number]


@completion(ticket, "number")
def ticket_numbers(value: str) -> list[str]:
    """The ticket numbers starting with what was typed."""
    return [str(number) for number in TICKETS if str(number).startswith(value)]
