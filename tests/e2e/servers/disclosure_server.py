"""A disclosing server of 4,000 generated tools: each session lists ping, search_tools, call_tool.

Tool ``{system}_{action}_{object}`` (``slack_send_email``) does ``action`` on ``object`` in
``system``; its handler answers with its own name and arguments. Tools of the ``vault`` system
are hidden from every session.
"""

from __future__ import annotations

import itertools
from typing import Any

from mcp_core.app import App
from mcp_core.elements import ElementRef, Tool
from mcp_core.search import Disclosure
from mcp_core.visibility import SessionInfo, predicate

SYSTEMS = ("crm", "slack", "gmail", "jira", "vault")
ACTIONS = (
    "get",
    "list",
    "create",
    "update",
    "delete",
    "send",
    "archive",
    "export",
    "share",
    "sign",
)
OBJECTS = tuple(
    f"{thing}{suffix}"
    for thing, suffix in itertools.product(
        ("email", "invoice", "ticket", "forecast", "contract", "report", "order", "file"),
        ("", "_draft", "_copy", "_batch", "_note", "_log", "_tag", "_link", "_alert", "_view"),
    )
)

app = App("disclosure", version="1", disclosure=Disclosure(pinned=["ping"], limit=5))


@app.tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def _handler(name: str) -> Any:
    def run(**arguments: Any) -> str:
        return f"{name} {sorted(arguments.items())}"

    return run


for system, action, thing in itertools.product(SYSTEMS, ACTIONS, OBJECTS):
    name = f"{system}_{action}_{thing}"
    spoken = thing.replace("_", " ")
    app.add(
        Tool(
            name=name,
            description=f"{action.capitalize()} a {spoken} in {system}.",
            input_schema={
                "type": "object",
                "properties": {"note": {"type": "string", "description": "Free text"}},
            },
        ),
        _handler(name),
    )


def _not_vault(ref: ElementRef, session: SessionInfo) -> bool:
    return not ref.key.startswith("vault_")


app.visibility = predicate(_not_vault)


if __name__ == "__main__":
    app.run()
