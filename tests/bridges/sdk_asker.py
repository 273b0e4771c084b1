"""An SDK MCPServer whose tools ask the client (sampling, form and URL elicitation) the SDK way.

Plain SDK code, served on stdin/stdout: RemoteSource's tests reach it over stdio.
"""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from pydantic import BaseModel

mcp = MCPServer("asker")


class Name(BaseModel):
    """What the form asks for."""

    name: str


@mcp.tool()
async def sample(ctx: Context) -> str:
    """Ask the client's model through the session."""
    question = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="?"))
    answer = await ctx.session.create_message([question], max_tokens=5)
    assert isinstance(answer.content, types.TextContent)
    return answer.content.text


@mcp.tool()
async def elicit(ctx: Context) -> str:
    """Ask the user to fill a form."""
    answer = await ctx.elicit("name?", Name)
    return f"{answer.action} {answer.data.name if answer.action == 'accept' else ''}"


@mcp.tool()
async def elicit_url(ctx: Context) -> str:
    """Send the user to a page."""
    answer = await ctx.elicit_url("sign in", "https://example.com/sign-in", "sign-in-1")
    return answer.action


@mcp.tool()
def sign_in() -> str:
    """Needs the user to sign in at a URL first (-32042 with the URL)."""
    raise UrlElicitationRequiredError(
        [
            types.ElicitRequestURLParams(
                message="Sign in to continue",
                url="https://example.org/login",
                elicitation_id="login-1",
            )
        ]
    )


if __name__ == "__main__":
    mcp.run()
