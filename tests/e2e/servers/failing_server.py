"""Handlers that fail, on purpose and not: one of each way, for tests/e2e/test_handler_failures.py.

Notes are the only data: ``note://{id}`` reads one (``ResourceNotFoundError`` for an unknown id,
``ResourceError`` for a locked one), ``notes://locked`` always refuses with a ``ResourceError``,
``notes://archived`` says it no longer exists (``ResourceNotFoundError``), ``summary`` is a prompt
that refuses an empty topic with a ``PromptError``; their completions refuse too. The official
SDK's and fastmcp's errors are raised the same way. Failing by accident (a ``KeyError`` whose key
is the client's ``secret``): ``crash://...`` and ``broken://static`` (reads), ``crashing`` (a
prompt), ``crashing_tool`` and ``crashing_async_tool``, and the completion of ``crashing``'s
``topic``.
"""

from __future__ import annotations

from fastmcp.exceptions import NotFoundError as FastmcpNotFoundError
from fastmcp.exceptions import PromptError as FastmcpPromptError
from fastmcp.exceptions import ResourceError as FastmcpResourceError
from mcp.server.mcpserver.exceptions import ResourceError as SdkResourceError
from mcp.server.mcpserver.exceptions import ResourceNotFoundError as SdkResourceNotFoundError

from mcp_core import App, PromptError, ResourceError, ResourceNotFoundError, ToolError

NOTES = {"1": "buy milk", "3": "the safe's code"}
LOCKED = {"3"}

app = App("failing", version="1")


@app.resource_template("note://{id}", mime_type="text/plain")
def note(id: str) -> str:  # noqa: A002 -- the template variable
    """One note by id."""
    if id not in NOTES:
        raise ResourceNotFoundError(f"there is no note {id}")
    if id in LOCKED:
        raise ResourceError(f"note {id} is locked; unlock it first")
    return NOTES[id]


@app.completion(note, "id")
def note_ids(value: str) -> list[str]:
    """Completes a note's id: with the SDK's not-found error, which a completion answers as a refusal."""
    raise SdkResourceNotFoundError(f"no note id starts with {value!r}")


@app.resource("notes://archived", mime_type="text/plain")
def archived() -> str:
    """A resource listed but gone: its handler says so."""
    raise ResourceNotFoundError("the archive was deleted; read note://1 instead")


@app.resource("broken://static", mime_type="text/plain")
def broken() -> str:
    """A static resource that fails by accident."""
    return {"a": "b"}["secret"]


@app.resource("notes://locked", mime_type="text/plain")
def locked() -> str:
    """A resource that is never readable."""
    raise ResourceError("the notes are locked; unlock them first")


@app.resource_template("sdk://{what}", mime_type="text/plain")
def sdk(what: str) -> str:
    """Fails with the official SDK's errors: ``missing`` (not found) or anything (an error)."""
    if what == "missing":
        raise SdkResourceNotFoundError(f"sdk: no {what}")
    raise SdkResourceError(f"sdk: {what} is refused")


@app.resource_template("fastmcp://{what}", mime_type="text/plain")
def fastmcp(what: str) -> str:
    """Fails with fastmcp's errors: ``missing`` (not found) or anything (an error)."""
    if what == "missing":
        raise FastmcpNotFoundError(f"fastmcp: no {what}")
    raise FastmcpResourceError(f"fastmcp: {what} is refused")


@app.resource_template("crash://{key}", mime_type="text/plain")
def crash(key: str) -> str:
    """Fails by accident: a KeyError whose text must not reach the client."""
    return {"a": "b"}[key]


@app.resource_template("tool-error://{what}", mime_type="text/plain")
def tool_error(what: str) -> str:
    """A read that raises a ToolError: its message still reaches the client."""
    raise ToolError(f"{what}: no such thing")


@app.prompt
def summary(topic: str) -> str:
    """Summarise the notes on a topic; an empty topic is refused."""
    if not topic.strip():
        raise PromptError("give a topic to summarise, e.g. 'groceries'")
    return f"Summarise the notes about {topic}."


@app.completion(summary, "topic")
def summary_topics(value: str) -> list[str]:
    """Completes the topic: refused on purpose, the message for the client."""
    raise PromptError(f"topics are not completed; type one ({value!r} so far)")


@app.prompt
def fastmcp_summary(topic: str) -> str:
    """Refuses every topic with fastmcp's PromptError."""
    raise FastmcpPromptError(f"fastmcp: no summary of {topic}")


@app.prompt
async def crashing(topic: str) -> str:
    """Fails by accident: a KeyError whose text must not reach the client."""
    return {"a": "b"}[topic]


@app.completion(crashing, "topic")
def crashing_topics(value: str) -> list[str]:
    """Completes ``crashing``'s topic, and fails by accident."""
    return [{"a": "b"}[value]]


@app.tool
def crashing_tool(key: str) -> str:
    """A sync tool (run in a worker thread) that fails by accident."""
    return {"a": "b"}[key]


@app.tool
async def crashing_async_tool(key: str) -> str:
    """An async tool that fails by accident."""
    return {"a": "b"}[key]


@app.tool
def take(id: str) -> str:  # noqa: A002 -- the note's id
    """Take a note out; a read's ResourceNotFoundError in a tool is the tool's error result."""
    if id not in NOTES:
        raise ResourceNotFoundError(f"there is no note {id}")
    return NOTES[id]
