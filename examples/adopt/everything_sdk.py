"""The conformance suite's fixture elements written for the official SDK's ``MCPServer``.

Plain SDK code: tools taking ``ctx: Context``, resources, a template, prompts, a completion
handler and a lifespan. Nothing here knows mcp-core; ``everything_adopted.py`` serves this very
server through mcp-core with ``MCPServerSource``, and the official conformance suite runs against
that (``scripts/conformance-suite``).
"""

# The fixture's prompts are named test_* (not pytest tests), and the SDK's lifespan and completion
# signatures take arguments this fixture does not need.
# ruff: noqa: PT028, ARG001

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, Image, MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Audio
from pydantic import BaseModel, Field

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=")
STEP = 0.05  # seconds between the log and progress notifications of one call


@dataclass
class Counters:
    """The lifespan state: how many calls each tool served (shared by every request)."""

    calls: dict[str, int] = field(default_factory=dict)
    started: bool = False


@asynccontextmanager
async def lifespan(server: MCPServer[Counters]) -> AsyncIterator[Counters]:
    """Open the app's state for the server's run."""
    counters = Counters(started=True)
    yield counters
    counters.started = False


mcp: MCPServer[Counters] = MCPServer("sdk-everything", version="1.0.0", lifespan=lifespan)


def _count(ctx: Context[Counters, Any], name: str) -> None:
    counters = ctx.request_context.lifespan_context
    counters.calls[name] = counters.calls.get(name, 0) + 1


# -- tools ----------------------------------------------------------------------------------------


@mcp.tool()
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@mcp.tool()
def test_image_content() -> Image:
    """Return an image (a 1x1 PNG)."""
    return Image(data=PNG, format="png")


@mcp.tool()
def test_audio_content() -> Audio:
    """Return audio (a short WAV file)."""
    return Audio(data=WAV, format="wav")


@mcp.tool()
def test_embedded_resource() -> types.EmbeddedResource:
    """Return an embedded text resource."""
    return types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        ),
    )


@mcp.tool()
def test_multiple_content_types() -> list[types.ContentBlock]:
    """Return text, an image and an embedded resource in one result."""
    return [
        types.TextContent(type="text", text="Multiple content types test:"),
        types.ImageContent(
            type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            ),
        ),
    ]


@mcp.tool()
async def test_tool_with_logging(ctx: Context[Counters, Any]) -> str:
    """Send three log messages while running."""
    _count(ctx, "test_tool_with_logging")
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await anyio.sleep(STEP)
    return "Tool with logging executed successfully"


@mcp.tool()
async def test_tool_with_progress(ctx: Context[Counters, Any]) -> str:
    """Report progress 0, 50 and 100 out of 100 while running."""
    _count(ctx, "test_tool_with_progress")
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"Completed step {done} of 100")
        await anyio.sleep(STEP)
    return "Tool with progress executed successfully"


@mcp.tool()
def test_error_handling() -> str:
    """Always fail, to test error results."""
    raise ToolError("This tool intentionally returns an error for testing")


@mcp.tool()
async def test_sampling(prompt: str, ctx: Context[Counters, Any]) -> str:
    """Ask the client's model to answer a prompt."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=100,
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"LLM response: {text}"


class UserInfo(BaseModel):
    """The form test_elicitation asks for."""

    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


@mcp.tool()
async def test_elicitation(message: str, ctx: Context[Counters, Any]) -> str:
    """Ask the user for a username and an email address."""
    result = await ctx.elicit(message, UserInfo)
    content = result.data.model_dump() if result.action == "accept" else None
    return f"User response: action={result.action}, content={json.dumps(content)}"


class Defaults(BaseModel):
    """A form whose fields all have defaults (SEP-1034)."""

    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field(
        default="active", description="User status"
    )
    verified: bool = Field(default=True, description="Verification status")


@mcp.tool()
async def test_elicitation_sep1034_defaults(ctx: Context[Counters, Any]) -> str:
    """Elicit a form whose fields all have defaults (SEP-1034)."""
    result = await ctx.elicit("Please review and update the form fields with defaults", Defaults)
    content = result.data.model_dump() if result.action == "accept" else None
    return f"Elicitation completed: action={result.action}, content={json.dumps(content)}"


ENUM_FORM: dict[str, Any] = {
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


@mcp.tool()
async def test_elicitation_sep1330_enums(ctx: Context[Counters, Any]) -> str:
    """Elicit a form with every enum shape (SEP-1330), written as a raw schema."""
    result = await ctx.session.elicit_form(
        "Please select options from the enum fields",
        ENUM_FORM,  # type: ignore[arg-type]  # a raw JSON schema, as the spec writes it
        related_request_id=ctx.request_id,
    )
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@mcp.tool()
async def test_reconnection(ctx: Context[Counters, Any]) -> str:
    """Close the SSE stream mid-call; the client reconnects and still receives the result."""
    await ctx.info("Before disconnect")
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


@mcp.tool()
def calls_served(ctx: Context[Counters, Any]) -> dict[str, int]:
    """How many calls the counting tools served since the server started (the lifespan state)."""
    return dict(ctx.request_context.lifespan_context.calls)


# -- resources ------------------------------------------------------------------------------------


@mcp.resource(
    "test://static-text",
    name="static-text",
    mime_type="text/plain",
    description="A static text resource.",
)
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@mcp.resource(
    "test://static-binary",
    name="static-binary",
    mime_type="image/png",
    description="A static PNG image.",
)
def static_binary() -> bytes:
    """A static binary resource."""
    return PNG


@mcp.resource(
    "test://watched-resource",
    name="watched-resource",
    mime_type="text/plain",
    description="A resource to subscribe to.",
)
def watched_resource() -> str:
    """A resource clients subscribe to."""
    return "Watched resource content"


@mcp.resource(
    "test://template/{id}/data",
    name="template-data",
    mime_type="application/json",
    description="Data for any id.",
)
def template_data(id: str) -> str:  # noqa: A002 -- the template variable's name
    """JSON data for the given id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts --------------------------------------------------------------------------------------


@mcp.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@mcp.prompt()
def test_prompt_with_arguments(
    arg1: str = Field(description="First test argument"),
    arg2: str = Field(description="Second test argument"),
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: str = Field(description="URI of the resource to embed"),  # noqa: N803 -- the wire name
) -> list[UserMessage]:
    """A prompt that embeds a resource."""
    return [
        UserMessage(
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri=resourceUri,
                    mime_type="text/plain",
                    text="Embedded resource content for testing.",
                ),
            )
        ),
        UserMessage("Please process the embedded resource above."),
    ]


@mcp.prompt()
def test_prompt_with_image() -> list[UserMessage]:
    """A prompt that includes an image."""
    return [
        UserMessage(Image(data=PNG, format="png")),
        UserMessage("Please analyze the image above."),
    ]


@mcp.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    """Suggest values for the prompt's arg1 and the template's id."""
    candidates = {"arg1": ("test", "testValue1", "example"), "id": ("1", "2", "3", "123")}
    values = [v for v in candidates.get(argument.name, ()) if v.startswith(argument.value)]
    return types.Completion(values=values, total=len(values), has_more=False)


if __name__ == "__main__":
    mcp.run()
