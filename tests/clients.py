"""The official client's side of the end-to-end tests, written once for all of them.

Every end-to-end test drives a server with the official ``mcp`` client; what that client does for
a test is the same in each, and lives here, while each test keeps its own assertions:

- :class:`Inbox`: the client's model and user, who answer the server's sampling and elicitation
  requests, and what the server sent besides responses (logs, notifications, what it asked);
- where a server is reached: :func:`stdio` (``mcp-core run`` as a subprocess) and :func:`bearer`
  (streamable HTTP with a bearer token);
- reading what comes back: :func:`text`, :func:`ok_text`, :func:`pages`, :func:`tool_names`,
  :func:`send_call` and :func:`call`;
- hearing of changes: :func:`listening` (a client and the :class:`Changes` it hears, in either
  era), and :func:`until` for state that lives in another process.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
MCP_CORE = Path(sys.executable).with_name("mcp-core")
WAIT = 90  # seconds: a bound for a loaded machine, never a measured time
SDK_HTTP_TIMEOUT = httpx2.Timeout(30, read=300)  # what the official client uses by default

ANN = {"username": "ann", "email": "ann@example.org"}
"""What the client's user fills a form in with, unless told otherwise."""


def forty_two(prompt: str) -> str:
    """The client model's answer to any prompt."""
    return "forty-two"


@dataclass(eq=False)
class Inbox:
    """What a server sent the client besides responses, and the client's answers to its questions.

    The client's model answers each prompt with ``reply(prompt)``; its user accepts each form with
    ``form`` or, if ``defaults``, with the form's own defaults when it has any. :meth:`client`
    makes an official client with these callbacks.
    """

    reply: Callable[[str], str] = forty_two
    form: Mapping[str, Any] = field(default_factory=lambda: ANN)
    defaults: bool = False
    roots: Sequence[str] = ()
    """The client's roots (their URIs); with none, it declares no roots capability."""
    logged: list[types.LoggingMessageNotificationParams] = field(default_factory=list)
    """Each log message, in order."""
    messages: list[Any] = field(default_factory=list)
    """Each notification (or other message) the server sent outside responses, in order."""
    sampled: list[str] = field(default_factory=list)
    """The text of each sampling request's first message."""
    asked: list[str] = field(default_factory=list)
    """The message of each elicitation request."""
    opened: list[str] = field(default_factory=list)
    """The URL of each URL-mode elicitation request (the user opens it and accepts)."""
    _arrived: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def logs(self) -> list[Any]:
        """The data of each log message, in order."""
        return [params.data for params in self.logged]

    @property
    def methods(self) -> list[str]:
        """The method of each message (its type's name for one without)."""
        return [getattr(message, "method", type(message).__name__) for message in self.messages]

    def client(self, target: Any, **options: Any) -> Client:
        """The official client of ``target`` answering and recording here (``options`` as for Client)."""
        if self.roots:
            options.setdefault("list_roots_callback", self.list_roots)
        return Client(
            target,
            sampling_callback=self.sampling,
            elicitation_callback=self.elicitation,
            logging_callback=self.on_log,
            message_handler=self.on_message,
            **options,
        )

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Record a log message."""
        self.logged.append(params)

    async def on_message(self, message: IncomingMessage) -> None:
        """Record a message sent outside responses."""
        self.messages.append(message)
        self._arrived.set()

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        """The client's model: ``reply`` to the first message's text."""
        content = params.messages[0].content
        prompt = content.text if isinstance(content, types.TextContent) else ""
        self.sampled.append(prompt)
        answer = types.TextContent(type="text", text=self.reply(prompt))
        return types.CreateMessageResult(role="assistant", content=answer, model="m")

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        """The client's user: open a URL, or accept with ``form`` (or its defaults, if ``defaults``)."""
        self.asked.append(params.message)
        if isinstance(params, types.ElicitRequestURLParams):
            self.opened.append(params.url)
            return types.ElicitResult(action="accept")
        content = dict(self.form)
        if self.defaults and isinstance(params, types.ElicitRequestFormParams):
            properties = params.requested_schema["properties"]
            found = {
                name: spec["default"] for name, spec in properties.items() if "default" in spec
            }
            content = found or content
        return types.ElicitResult(action="accept", content=content)

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        """The client's ``roots``."""
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": uri}) for uri in self.roots]
        )

    async def wait_for(self, method: str) -> Any:
        """The first message with ``method`` not waited for yet, once it has arrived."""
        with anyio.fail_after(WAIT):
            while True:
                for message in self.messages:
                    if getattr(message, "method", None) == method:
                        self.messages.remove(message)
                        return message
                self._arrived = anyio.Event()
                await self._arrived.wait()


def stdio(
    script: Path, *options: str, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """``mcp-core run SCRIPT OPTIONS`` over stdio, from the repository root, as a client's target.

    ``env`` is added to this process's environment (an empty value reads as unset).
    """
    return StdioServerParameters(
        command=str(MCP_CORE),
        args=["run", str(script), *options],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


@asynccontextmanager
async def bearer(
    url: str, token: str, inbox: Inbox | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The official client of the streamable HTTP server at ``url``, with ``token`` as bearer.

    With an ``inbox``, its model and user answer and it records (see :meth:`Inbox.client`).
    """
    # The SDK's own client timeouts: a quiet SSE stream is read for up to 300 s. (httpx's 5 s
    # default times the session's GET stream out twice in 11 quiet seconds, and the official
    # client then stops reading it for good: no notification after that.)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=SDK_HTTP_TIMEOUT) as http:
        transport = streamable_http_client(url, http_client=http)
        client = inbox.client(transport, **options) if inbox else Client(transport, **options)
        async with client:
            yield client


def text(result: types.CallToolResult | types.GetPromptResult | types.ReadResourceResult) -> str:
    """The first text of a tool result (failed or not), a prompt or a resource read."""
    if isinstance(result, types.GetPromptResult):
        content: object = result.messages[0].content
    elif isinstance(result, types.ReadResourceResult):
        content = result.contents[0]
    else:
        content = result.content[0]
    assert isinstance(content, types.TextContent | types.TextResourceContents), content
    return content.text


def ok_text(result: types.CallToolResult) -> str:
    """The first text of a tool result that must have succeeded."""
    assert not result.is_error, result
    return text(result)


async def pages(fetch: Callable[[str | None], Awaitable[Any]], key: str) -> list[Any]:
    """Every item of a paginated list (``fetch(cursor)`` gets a page), following nextCursor."""
    items: list[Any] = []
    cursor = None
    while True:
        page = await fetch(cursor)
        items.extend(getattr(page, key))
        cursor = page.next_cursor
        if cursor is None:
            return items


async def tool_names(client: Client) -> set[str]:
    """The name of every tool listed now: every page, never from the client's cache."""
    tools = await pages(
        lambda cursor: client.list_tools(cursor=cursor, cache_mode="bypass"), "tools"
    )
    return {tool.name for tool in tools}


async def send_call(
    client: Client, name: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    """``tools/call`` sent as is (no ``tools/list`` first, unlike ``client.call_tool``).

    The official client lists every tool after a call to check structured content against output
    schemas, which loads every source; this shows what the call alone costs.
    """
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments)
    )
    return await client.session.send_request(request, types.CallToolResult)


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """:func:`send_call`, for a call that succeeds: its text, JSON-decoded."""
    return json.loads(ok_text(await send_call(client, name, arguments)))


async def until(check: Callable[[], Awaitable[bool]], *, wait: float = WAIT) -> None:
    """Poll ``check`` until it holds (bounded by ``wait``)."""
    with anyio.fail_after(wait):
        while not await check():  # noqa: ASYNC110 -- the state polled lives in another process
            await anyio.sleep(0.05)


class Changes:
    """``tools/list_changed`` as a client hears it: a notification (2025-11-25) or a listen event."""

    def __init__(self) -> None:
        self.seen = 0
        self._arrived = anyio.Event()

    def saw(self) -> None:
        """Count one announcement."""
        self.seen += 1
        self._arrived.set()

    async def on_message(self, message: IncomingMessage) -> None:
        """The official client's message handler."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.saw()

    async def after(self, count: int) -> None:
        """Wait until more than ``count`` announcements were heard."""
        with anyio.fail_after(WAIT):
            while self.seen <= count:
                self._arrived = anyio.Event()
                await self._arrived.wait()

    async def announce(self, client: Client, expected: set[str], after: int) -> None:
        """Wait until a change announced after the ``after``-th shows ``expected`` when listed."""
        with anyio.fail_after(WAIT):
            while True:
                await self.after(after)
                after = self.seen
                if await tool_names(client) == expected:
                    return


@asynccontextmanager
async def listening(
    url: str | StdioServerParameters, mode: str
) -> AsyncIterator[tuple[Client, Changes]]:
    """The official client at ``url`` (or of a stdio server) in ``mode``, and the changes it hears.

    In the 2026-07-28 era (any ``mode`` but ``"legacy"``) it holds a ``subscriptions/listen``
    stream open for them; in 2025-11-25 they come as notifications.
    """
    changes = Changes()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(url, mode=mode, message_handler=changes.on_message)
        )
        if mode != "legacy":
            subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            tasks = await stack.enter_async_context(anyio.create_task_group())

            async def follow() -> None:
                async for _ in subscription:
                    changes.saw()

            tasks.start_soon(follow)
            stack.callback(tasks.cancel_scope.cancel)
        yield client, changes
