"""A catalogue of many distinct tools that reads like a real one, for search figures and tests.

Tool ``i`` is an action on an object in a system (``crm_create_invoice``), with a title, a
sentence of description and two parameters, all drawn deterministically from ``i``: 40 actions,
50 objects and as many systems as the size needs, so every name is distinct and a natural query
("send an email in slack") has one best answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from mcp_core.elements import Element, ElementCollection, Tool

__all__ = ["ACTIONS", "OBJECTS", "collection", "described", "element", "systems"]

ACTIONS: Final = (
    ("get", "Fetch one"),
    ("list", "List every"),
    ("create", "Create a new"),
    ("update", "Change the fields of an existing"),
    ("delete", "Permanently delete a"),
    ("archive", "Archive a"),
    ("restore", "Restore an archived"),
    ("export", "Export a"),
    ("import", "Import a"),
    ("search", "Search for a"),
    ("send", "Send a"),
    ("share", "Share a"),
    ("approve", "Approve a pending"),
    ("reject", "Reject a pending"),
    ("assign", "Assign a"),
    ("merge", "Merge two records of a"),
    ("duplicate", "Make a copy of a"),
    ("lock", "Lock a"),
    ("unlock", "Unlock a"),
    ("tag", "Add a label to a"),
    ("comment", "Comment on a"),
    ("subscribe", "Follow changes to a"),
    ("unsubscribe", "Stop following a"),
    ("count", "Count the"),
    ("summarize", "Summarize a"),
    ("translate", "Translate a"),
    ("validate", "Check the consistency of a"),
    ("schedule", "Schedule a"),
    ("cancel", "Cancel a"),
    ("print", "Print a"),
    ("sign", "Sign a"),
    ("verify", "Verify a"),
    ("rename", "Rename a"),
    ("move", "Move a"),
    ("publish", "Publish a"),
    ("preview", "Preview a"),
    ("download", "Download a"),
    ("upload", "Upload a"),
    ("notify", "Notify the owner of a"),
    ("audit", "Audit a"),
)
OBJECTS: Final = (
    "invoice",
    "email",
    "calendar_event",
    "weather_forecast",
    "customer",
    "order",
    "ticket",
    "pull_request",
    "issue",
    "document",
    "spreadsheet",
    "contract",
    "payment",
    "refund",
    "shipment",
    "product",
    "user",
    "team",
    "project",
    "task",
    "meeting",
    "report",
    "dashboard",
    "alert",
    "incident",
    "deployment",
    "build",
    "branch",
    "commit",
    "release",
    "budget",
    "expense",
    "receipt",
    "lead",
    "opportunity",
    "campaign",
    "survey",
    "form",
    "file",
    "folder",
    "photo",
    "video",
    "playlist",
    "message",
    "channel",
    "contact",
    "note",
    "reminder",
    "booking",
    "flight",
)
_SYSTEMS: Final = (
    "crm",
    "erp",
    "github",
    "gitlab",
    "jira",
    "slack",
    "teams",
    "gmail",
    "outlook",
    "drive",
    "dropbox",
    "notion",
    "confluence",
    "salesforce",
    "hubspot",
    "stripe",
    "shopify",
    "zendesk",
    "asana",
    "trello",
    "linear",
    "figma",
    "sentry",
    "datadog",
    "pagerduty",
    "okta",
    "workday",
    "netsuite",
    "quickbooks",
    "xero",
    "airtable",
    "box",
    "calendly",
    "docusign",
    "intercom",
    "mailchimp",
    "twilio",
    "zoom",
    "webex",
    "miro",
)


def systems(size: int) -> list[str]:
    """Enough system names for ``size`` tools (named ones first, then ``system_N``)."""
    needed = -(-size // (len(ACTIONS) * len(OBJECTS)))
    names = list(_SYSTEMS[:needed])
    names.extend(f"system{n}" for n in range(len(names), needed))
    return names


def described(index: int, size: int) -> Tool:
    """Tool number ``index`` of a catalogue of ``size``."""
    per_system = len(ACTIONS) * len(OBJECTS)
    system = systems(size)[index // per_system]
    action, verb = ACTIONS[index % len(ACTIONS)]
    obj = OBJECTS[(index // len(ACTIONS)) % len(OBJECTS)]
    spoken = obj.replace("_", " ")
    return Tool(
        name=f"{system}_{action}_{obj}",
        title=f"{action.capitalize()} {spoken} ({system})",
        description=f"{verb} {spoken} in {system}.",
        input_schema={
            "type": "object",
            "properties": {
                f"{obj}_id": {"type": "string", "description": f"Identifier of the {spoken}"},
                "note": {"type": "string", "description": "Free text kept with the change"},
            },
        },
    )


def _answer(**arguments: object) -> str:
    return f"done: {sorted(arguments.items())}"


def element(index: int, size: int) -> Element:
    """Tool number ``index`` as an element, its handler echoing its arguments."""
    return Element(definition=described(index, size), handler=_answer, tags=frozenset())


def _elements(size: int, start: int, stop: int) -> Iterator[Element]:
    for index in range(start, stop):
        yield element(index, size)


def collection(size: int, start: int = 0, stop: int | None = None) -> ElementCollection:
    """Tools ``start`` to ``stop`` of a catalogue of ``size`` (all of them by default)."""
    return ElementCollection(_elements(size, start, size if stop is None else stop))
