"""The "everything" server: every element the official MCP conformance suite exercises.

Run it over streamable HTTP (what the suite drives) or stdio::

    mcp-core run examples/everything.py --transport http --port 3001
    mcp-core run examples/everything.py

Behaviours follow the conformance suite's fixture server exactly (texts, MIME types, schemas).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import anyio

from mcp_core.app import App
from mcp_core.elements import Tool
from mcp_core.errors import ToolError
from mcp_core.handlers import (
    Audio,
    ClientGateway,
    EmbeddedResource,
    Image,
    Message,
    Text,
    tool_from_function,
)
from mcp_core.server import ServerGateway

# A 1x1 PNG and a minimal (silent) WAV file.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=")
WATCHED_URI = "test://watched-resource"
STEP = 0.05  # seconds between the log and progress notifications of one call

app = App("mcp-core-everything", version="1.0.0")

# -- tools ----------------------------------------------------------------------------------------


@app.tool
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@app.tool
def test_image_content() -> Image:
    """Return an image (a 1x1 PNG)."""
    return Image(PNG, "image/png")


@app.tool
def test_audio_content() -> Audio:
    """Return audio (a short WAV file)."""
    return Audio(WAV, "audio/wav")


@app.tool
def test_embedded_resource() -> EmbeddedResource:
    """Return an embedded text resource."""
    return EmbeddedResource(
        "test://embedded-resource",
        mime_type="text/plain",
        text="This is an embedded resource content.",
    )


@app.tool
def test_multiple_content_types() -> list[Text | Image | EmbeddedResource]:
    """Return text, an image and an embedded resource in one result."""
    return [
        Text("Multiple content types test:"),
        Image(PNG, "image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            mime_type="application/json",
            text=json.dumps({"test": "data", "value": 123}),
        ),
    ]


@app.tool
async def test_tool_with_logging(gateway: ClientGateway) -> str:
    """Send three log messages while running."""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await gateway.log("info", message)
        await anyio.sleep(STEP)
    return "Tool with logging executed successfully"


@app.tool
async def test_tool_with_progress(gateway: ClientGateway) -> str:
    """Report progress 0, 50 and 100 out of 100 while running."""
    for done in (0, 50, 100):
        await gateway.progress(done, 100, f"Completed step {done} of 100")
        await anyio.sleep(STEP)
    return "Tool with progress executed successfully"


@app.tool
def test_error_handling() -> str:
    """Always fail, to test error results."""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool
async def test_sampling(prompt: str, gateway: ClientGateway) -> str:
    """Ask the client's model to answer a prompt.

    Args:
        prompt: The prompt to send to the model.
        gateway: Injected: the channel back to the client.
    """
    result = await gateway.sample(
        [{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100
    )
    content = result.get("content")
    text = content.get("text") if isinstance(content, Mapping) else None
    return f"LLM response: {text if text is not None else json.dumps(content)}"


@app.tool
async def test_elicitation(message: str, gateway: ClientGateway) -> str:
    """Ask the user for a username and an email address.

    Args:
        message: The message shown to the user.
        gateway: Injected: the channel back to the client.
    """
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await gateway.elicit(message, schema)
    return (
        f"User response: action={result.get('action')}, content={json.dumps(result.get('content'))}"
    )


@app.tool
async def test_elicitation_sep1034_defaults(gateway: ClientGateway) -> str:
    """Elicit a form whose fields all have defaults (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = await gateway.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content'))}"


@app.tool
async def test_elicitation_sep1330_enums(gateway: ClientGateway) -> str:
    """Elicit a form with every enum shape (SEP-1330)."""
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose one option",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose one titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose one (legacy titles)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose several options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose several titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
        "required": [],
    }
    result = await gateway.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content'))}"


@app.tool
async def test_reconnection(gateway: ClientGateway) -> str:
    """Close the SSE stream mid-call; the client reconnects and still receives the result."""
    await gateway.log("info", "Before disconnect")
    if isinstance(gateway, ServerGateway):
        await gateway.close_sse_stream()
    await anyio.sleep(0.2)
    await gateway.log("info", "After reconnect")
    return "Reconnection test completed"


@app.tool
async def test_update_watched_resource(text: str) -> str:
    """Change the watched resource and notify its subscribers.

    Args:
        text: The resource's new content.
    """
    _watched["text"] = text
    await app.server.notify_resource_updated(WATCHED_URI)
    return f"{WATCHED_URI} updated"


@app.tool
async def test_register_tool(name: str) -> str:
    """Register a new tool at runtime; connected clients get notifications/tools/list_changed.

    Args:
        name: The new tool's name; it answers with its own name.
    """

    def runtime_tool() -> str:
        return f"I am {name}, registered at runtime"

    await app.registry.register(
        tool_from_function(runtime_tool, name=name, description="Registered at runtime.")
    )
    return f"registered {name}"


class _JsonSchema202012Tool:
    """A handler object: its tool's input schema is written by hand, JSON Schema 2020-12."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:  # noqa: ARG002 -- the protocol's signature
        return f"Received: {json.dumps(dict(arguments), sort_keys=True)}"


app.add(
    Tool(
        name="json_schema_2020_12_tool",
        description="Accept arguments described by a JSON Schema 2020-12 document ($defs, $ref).",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
    _JsonSchema202012Tool(),
)

# -- resources ------------------------------------------------------------------------------------

_watched = {"text": "Watched resource content"}


@app.resource(
    "test://static-text",
    name="static-text",
    mime_type="text/plain",
    description="A static text resource.",
)
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@app.resource(
    "test://static-binary",
    name="static-binary",
    mime_type="image/png",
    description="A static PNG image.",
)
def static_binary() -> bytes:
    """A static binary resource."""
    return PNG


@app.resource(
    WATCHED_URI,
    name="watched-resource",
    mime_type="text/plain",
    description="A resource to subscribe to.",
)
def watched_resource() -> str:
    """A resource clients subscribe to; test_update_watched_resource changes it."""
    return _watched["text"]


@app.resource_template(
    "test://template/{id}/data",
    name="template-data",
    mime_type="application/json",
    description="Data for any id.",
)
def template_data(id: str) -> str:  # noqa: A002 -- the template variable's name
    """JSON data for the given id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@app.completion(template_data, "id")
def complete_id(value: str) -> list[str]:
    """Suggest ids."""
    return [i for i in ("1", "2", "3", "123") if i.startswith(value)]


# -- prompts --------------------------------------------------------------------------------------


@app.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@app.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.completion(test_prompt_with_arguments, "arg1")
def complete_arg1(value: str) -> list[str]:
    """Suggest values for arg1."""
    return [v for v in ("test", "testValue1", "example") if v.startswith(value)]


@app.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:  # noqa: N803 -- the argument's wire name
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        Message.user(
            EmbeddedResource(
                resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
            )
        ),
        Message.user("Please process the embedded resource above."),
    ]


@app.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes an image."""
    return [Message.user(Image(PNG, "image/png")), Message.user("Please analyze the image above.")]


if __name__ == "__main__":
    app.run()
