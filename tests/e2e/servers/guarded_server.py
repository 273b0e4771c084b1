"""An SDK ``MCPServer`` with behaviour of its own that adoption must keep.

- ``MCPServer(middleware=[...])``: a policy middleware denies the tool ``secret``, the prompt
  ``hidden`` and the resource ``guarded://private`` (a JSON-RPC error, code -32001); an audit
  middleware records every request that reaches the server (the tool ``audit`` returns them);
- a tool asking the client in the 2026-07-28 way by returning ``InputRequiredResult`` itself
  (``greet``), answered on the retry through ``ctx.input_responses``; a prompt doing the same;
- a tool raising ``UrlElicitationRequiredError`` (-32042 with the URL to open), and one asking
  for a URL-mode elicitation (``ctx.elicit_url``);
- serverInfo with a title, a description, a website URL and icons.

``mcp-core run tests/e2e/servers/guarded_server.py`` serves it adopted; ``python
tests/e2e/servers/guarded_server.py`` serves it natively (stdio), for comparison.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

DENIED = -32001
AUDIT: list[str] = []


async def audit(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Record each request's method (and the element it names) before it runs."""
    params = ctx.params or {}
    if ctx.request_id is not None:
        AUDIT.append(f"{ctx.method} {params.get('name') or params.get('uri') or ''}".strip())
    return await call_next(ctx)


async def policy(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Deny what the policy forbids, before the handler runs."""
    params = ctx.params or {}
    forbidden = {
        "tools/call": ("name", "secret"),
        "prompts/get": ("name", "hidden"),
        "resources/read": ("uri", "guarded://private"),
    }.get(ctx.method)
    if forbidden is not None and params.get(forbidden[0]) == forbidden[1]:
        raise MCPError(DENIED, f"denied by policy: {forbidden[1]}", {"policy": "no-secrets"})
    return await call_next(ctx)


mcp = MCPServer(
    "guarded",
    title="Guarded",
    description="A server whose middleware is its security.",
    version="1.2.3",
    website_url="https://example.org/guarded",
    icons=[types.Icon(src="https://example.org/guarded.png", mime_type="image/png")],
    middleware=[audit, policy],
)


@mcp.tool()
def secret() -> str:
    """What the policy keeps to itself."""
    return "the secret"


@mcp.tool()
def public() -> str:
    """What anyone may have."""
    return "public"


@mcp.tool()
def audited() -> list[str]:
    """The requests that reached the server so far."""
    return list(AUDIT)


_QUESTION = types.ElicitRequest(
    params=types.ElicitRequestFormParams(
        message="What is your name?",
        requested_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    )
)


def _answered_name(ctx: Context[Any, Any]) -> str | None:
    answer = (ctx.input_responses or {}).get("name")
    if answer is None or ctx.request_state != "asked-for-name":
        return None
    content = getattr(answer, "content", None) or {}
    name = content.get("name")
    return name if isinstance(name, str) else None


@mcp.tool()
async def greet(ctx: Context[Any, Any]) -> Any:
    """Ask the user's name (2026-07-28 multi-round input), then greet them."""
    name = _answered_name(ctx)
    if name is None:
        return types.InputRequiredResult(
            input_requests={"name": _QUESTION}, request_state="asked-for-name"
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"Hello, {name}!")])


@mcp.prompt()
async def introduce(ctx: Context[Any, Any]) -> Any:
    """A prompt that asks the user's name first."""
    name = _answered_name(ctx)
    if name is None:
        return types.InputRequiredResult(
            input_requests={"name": _QUESTION}, request_state="asked-for-name"
        )
    return f"Introduce {name}."


@mcp.tool()
def login() -> str:
    """Needs the user to sign in at a URL first."""
    raise UrlElicitationRequiredError(
        [
            types.ElicitRequestURLParams(
                message="Sign in to continue",
                url="https://example.org/login",
                elicitation_id="login-1",
            )
        ]
    )


@mcp.tool()
async def connect(ctx: Context[Any, Any]) -> str:
    """Send the user to a URL (URL-mode elicitation) and say what they did."""
    result = await ctx.elicit_url("Connect your account", "https://example.org/connect", "c-1")
    return result.action


@mcp.resource("guarded://private")
def private() -> str:
    """Denied by the policy."""
    return "private"


@mcp.resource("guarded://public")
def open_resource() -> str:
    """Readable by anyone."""
    return "open"


@mcp.prompt()
def hidden() -> str:
    """Denied by the policy."""
    return "hidden"


if __name__ == "__main__":
    mcp.run()
