"""Crash containment: which exceptions escape, which are on purpose, how crashes are logged."""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable
from typing import Any

import anyio
import fastmcp.exceptions as fastmcp
import mcp.server.mcpserver.exceptions as sdk
import pytest
from mcp.server.mcpserver import MCPServer

from mcp_core.errors import PromptError, ResourceError, ResourceNotFoundError, ToolError
from mcp_core.handlers import Failure, Invoker, escapes, tool_from_function
from mcp_core.handlers._containment import from_user_frame, on_purpose
from mcp_core.handlers.testing import RecordingGateway


class Custom(BaseException):
    """A BaseException subclass of the kind a library may raise."""


class TestEscapes:
    """Cancellation, KeyboardInterrupt and GeneratorExit escape; everything else is contained."""

    @pytest.mark.parametrize(
        "exc",
        [ValueError("x"), SystemExit(2), Custom("x"), BaseExceptionGroup("g", [SystemExit(1)])],
    )
    def test_failures_are_contained(self, exc: BaseException) -> None:
        """Exceptions, SystemExit, custom BaseExceptions and groups of them fail only the call."""
        assert not escapes(exc)

    @pytest.mark.parametrize(
        "exc",
        [
            asyncio.CancelledError(),
            KeyboardInterrupt(),
            GeneratorExit(),
            BaseExceptionGroup("g", [ValueError("x"), KeyboardInterrupt()]),
        ],
    )
    def test_signals_escape(self, exc: BaseException) -> None:
        """Cancellation, Ctrl-C, a closing generator (alone or in a group) propagate."""
        assert escapes(exc)

    async def test_the_running_librarys_cancellation_escapes(self) -> None:
        """Inside an event loop, the async library's own cancellation class escapes."""
        assert escapes(anyio.get_cancelled_exc_class()())


class TestOnPurpose:
    """mcp-core's, the SDK's and fastmcp's errors raised on purpose; anything else is a crash."""

    @pytest.mark.parametrize(
        ("exc", "failure"),
        [
            (ToolError("x"), Failure.MESSAGE),
            (ResourceError("x"), Failure.MESSAGE),
            (PromptError("x"), Failure.MESSAGE),
            (ResourceNotFoundError("x"), Failure.NOT_FOUND),
            (sdk.ToolError("x"), Failure.MESSAGE),
            (sdk.ResourceError("x"), Failure.MESSAGE),
            (sdk.ResourceNotFoundError("x"), Failure.NOT_FOUND),
            (fastmcp.ToolError("x"), Failure.MESSAGE),
            (fastmcp.ResourceError("x"), Failure.MESSAGE),
            (fastmcp.PromptError("x"), Failure.MESSAGE),
            (fastmcp.NotFoundError("x"), Failure.NOT_FOUND),
            (fastmcp.ResourceSecurityError("x"), Failure.NOT_FOUND),
        ],
    )
    def test_errors_raised_on_purpose(self, exc: Exception, failure: Failure) -> None:
        """Each family's tool, resource and prompt errors, and their not-found errors."""
        assert on_purpose(exc) is failure

    @pytest.mark.parametrize(
        "exc",
        [
            KeyError("x"),
            ValueError("x"),
            SystemExit(1),
            sdk.UnexpectedResourceError("x"),  # the SDK's wrapper around a crash
            sdk.UnexpectedToolError("x"),
            fastmcp.ValidationError("x"),
        ],
    )
    def test_anything_else_is_a_crash(self, exc: BaseException) -> None:
        """Builtins, the SDK's wrappers around a crash, errors of no handler kind."""
        assert on_purpose(exc) is None


def _lookup(key: str) -> str:
    """A user's helper two frames below the handler: the crash happens here."""
    return {"a": "b"}[key]


_WRAPPER = """
def wrap():
    try:
        _lookup("x")
    except KeyError as exc:
        raise ValueError("wrapped") from exc
"""


def _wrapping_read() -> str:
    """A user's read that wraps its own crash in the SDK's ResourceError."""
    try:
        return _lookup("x")
    except KeyError as exc:
        raise sdk.ResourceError("wrapped by the user") from exc


def sync_tool(key: str) -> str:
    """A sync tool (run in a worker thread) that crashes in a helper."""
    return _lookup(key)


async def async_tool(key: str) -> str:
    """An async tool that crashes in a helper."""
    return _lookup(key)


class TestFromUserFrame:
    """A crash is logged from the user's first frame: the invoker's and anyio's are left out."""

    @pytest.mark.parametrize("handler", [sync_tool, async_tool])
    async def test_the_first_frame_logged_is_the_handlers(
        self,
        handler: Callable[[str], object],
        invoker: Invoker,
        gateway: RecordingGateway,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A tool's crash: the logged traceback opens at the tool, then its helper."""
        with caplog.at_level(logging.ERROR, logger="mcp_core.handlers"):
            result = await invoker.call_tool(tool_from_function(handler), {"key": "x"}, gateway)
        assert result["isError"]
        (record,) = caplog.records
        assert record.exc_info is not None
        frames = traceback.extract_tb(record.exc_info[2])
        assert [frame.name for frame in frames] == [handler.__name__, "_lookup"]
        assert isinstance(record.exc_info[1], KeyError)

    def test_a_traceback_without_user_frames_is_kept_whole(self) -> None:
        """A failure inside mcp-core (no frame of the user's) keeps every frame."""
        with pytest.raises(ValueError, match="cache_size") as raised:
            Invoker(cache_size=0)
        caught = raised.value
        assert caught.__traceback__ is not None
        caught.with_traceback(caught.__traceback__.tb_next)  # from Invoker.__init__ down only
        _, value, tb = from_user_frame(caught)
        assert value is caught
        assert tb is caught.__traceback__
        assert traceback.extract_tb(tb)[-1].name == "__init__"

    @pytest.mark.parametrize("kind", ["prompt", "read"])
    async def test_the_sdks_wrappers_are_looked_through(self, kind: str) -> None:
        """An adopted server's crash is logged as itself, from the user's frame.

        The SDK wraps a prompt's crash in two ``ValueError``s and a read's in an
        ``UnexpectedResourceError``, each raised ``from`` it in the SDK's own code, and calls the
        function through pydantic's call validation in a worker thread.
        """
        server = MCPServer("adopted")

        @server.prompt()
        def crashing_prompt(topic: str) -> str:
            return _lookup(topic)

        @server.resource("crash://read")
        def crashing_read() -> str:
            return _lookup("read")

        failing = (
            server.get_prompt("crashing_prompt", {"topic": "t"})
            if kind == "prompt"
            else server.read_resource("crash://read")
        )
        with pytest.raises(Exception) as raised:  # noqa: PT011 -- the SDK's wrappers vary
            await failing
        caught = raised.value
        assert caught.__traceback__ is not None
        assert not isinstance(caught, KeyError)
        caught.with_traceback(caught.__traceback__.tb_next)  # from the SDK down, as served
        _, value, tb = from_user_frame(caught)
        assert isinstance(value, KeyError)
        frames = [frame.name for frame in traceback.extract_tb(tb)]
        assert frames == [f"crashing_{kind}", "_lookup"]

    @pytest.mark.parametrize(("module", "looked_through"), [("mcp.x", True), ("mcp_core.x", False)])
    def test_only_the_sdks_wrappers_are_looked_through(
        self, module: str, looked_through: bool
    ) -> None:
        """A wrapper raised in the SDK's code is looked through; one raised in mcp-core's is not.

        mcp-core's own errors raised ``from`` a user's (a handler reference that fails to
        resolve, say) say what mcp-core could not do: they are logged as raised, whole.
        """
        namespace: dict[str, Any] = {"__name__": module, "_lookup": _lookup}
        exec(_WRAPPER, namespace)  # noqa: S102 -- a fixed function, defined in another module
        with pytest.raises(ValueError, match="wrapped") as raised:
            namespace["wrap"]()
        caught = raised.value
        assert caught.__traceback__ is not None
        caught.with_traceback(caught.__traceback__.tb_next)  # from the wrapper down, as served
        _, value, tb = from_user_frame(caught)
        frames = [frame.name for frame in traceback.extract_tb(tb)]
        if looked_through:
            assert (type(value), frames) == (KeyError, ["_lookup"])
        else:
            assert (value, frames) == (caught, ["wrap"])

    def test_an_sdk_error_from_the_users_code_is_not_looked_through(self) -> None:
        """Only the SDK's own wrappers are: an error the user raised ``from`` another is logged."""
        with pytest.raises(sdk.ResourceError) as raised:
            _wrapping_read()
        _, value, tb = from_user_frame(raised.value)
        assert value is raised.value
        frames = [frame.name for frame in traceback.extract_tb(tb)]
        assert frames[-1] == "_wrapping_read"
