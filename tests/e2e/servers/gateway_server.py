"""A server whose handler objects ask the client, and one container service behind many tools.

Served by ``mcp-core run`` in the end-to-end tests (stdio and streamable HTTP), so every question
travels the real transports in both protocol eras.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_core.app import App
from mcp_core.elements import HandlerRef, Prompt, PromptArgument, ResourceTemplate, Tool
from mcp_core.handlers import ClientGateway

RUNS = {"assistant": 0}


class Assistant:
    """A ToolHandler that samples, elicits (form and URL) and lists roots, in one code path."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        """Ask the client four things and report every answer."""
        RUNS["assistant"] += 1
        question = {"role": "user", "content": {"type": "text", "text": arguments["question"]}}
        sampled = await gateway.sample([question], max_tokens=20)
        form = await gateway.elicit(
            "Who are you?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        )
        url = await gateway.elicit_url("Sign in, please", "https://example.com/login")
        roots = await gateway.list_roots()
        return json.dumps(
            {
                "sampled": sampled["content"]["text"],
                "form": form,
                "url": url["action"],
                "roots": [root["uri"] for root in roots],
                "protocol": gateway.session.attributes.get("protocol_version"),
                "tool": gateway.element.ref.key,
            }
        )


class Interview:
    """A PromptHandler that elicits before it renders."""

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> str:
        """The interview prompt, for the name the user gives."""
        answer = await gateway.elicit(
            f"Interviewing about {arguments['topic']}: your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}},
        )
        return f"Interview {answer['content']['name']} about {arguments['topic']}."


class Summary:
    """A ResourceTemplateHandler that samples the client's model for the content."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        """A summary of the topic, written by the client's model."""
        question = {"role": "user", "content": {"type": "text", "text": variables["topic"]}}
        sampled = await gateway.sample([question], max_tokens=20)
        return f"{uri}: {sampled['content']['text']}"


class Operations:
    """One container service behind every book operation: it learns which one was called."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        """Run the operation named by the called element."""
        element = gateway.element
        return json.dumps(
            {
                "operation": element.ref.key,
                "description": element.definition.description,
                "arguments": dict(arguments),
                "service": id(self),
            }
        )


class ShopContainer:
    """The framework's container: knows the operations service by its id."""

    def __init__(self) -> None:
        self.service = Operations()
        self.gets = 0

    def has(self, id: str) -> bool:  # noqa: A002 -- the container protocol
        return id == "shop.operations"

    def get(self, id: str) -> object:  # noqa: A002 -- the container protocol
        self.gets += 1
        return self.service


container = ShopContainer()
app = App("seam-gateway", container=container)


@app.tool
def runs() -> dict[str, int]:
    """How many times each asking handler ran, and how often the container was asked."""
    return {**RUNS, "container_gets": container.gets}


app.add(
    Tool(
        name="assistant",
        description="Ask the client's model, user and roots.",
        input_schema={
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
    ),
    Assistant(),
)
app.add(
    Prompt(
        name="interview",
        description="An interview.",
        arguments=[PromptArgument(name="topic", required=True)],
    ),
    Interview(),
)
app.add(ResourceTemplate(uri_template="seam://summary/{topic}", name="summary"), Summary())
for name, description in (("list_books", "List the books."), ("get_book", "Get one book.")):
    app.add(
        Tool(
            name=name,
            description=description,
            input_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
        ),
        HandlerRef("shop.operations"),
    )
