"""The Invoker contains what handlers do wrong: BaseExceptions, unsendable results, slowness."""

from __future__ import annotations

import logging
import math
import threading
from typing import Any

import anyio
import pytest

from mcp_core.elements import Element, Resource, Tool
from mcp_core.errors import HandlerTimeoutError
from mcp_core.handlers import (
    Invoker,
    prompt_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.handlers.testing import RecordingGateway


class Custom(BaseException):
    """A BaseException subclass, as some libraries raise."""


def exits() -> str:
    """Exit the process, as argparse does on bad input."""
    raise SystemExit(2)


def raises_custom() -> str:
    """Raise a BaseException subclass."""
    raise Custom("boom")


async def async_exits() -> str:
    """Exit from an async handler."""
    raise SystemExit(3)


def surrogate() -> str:
    """A string that UTF-8 cannot carry."""
    return "a\ud800b"


def not_a_number() -> float:
    """NaN, which JSON cannot carry."""
    return math.nan


def an_object() -> dict[str, Any]:
    """A mapping holding something with no JSON form."""
    return {"when": object()}


class TestContainment:
    """What a tool raises, SystemExit included, is its own error result; signals escape."""

    @pytest.mark.parametrize("handler", [exits, raises_custom, async_exits])
    async def test_base_exceptions_are_error_results(
        self, handler: Any, caplog: pytest.LogCaptureFixture
    ) -> None:
        """SystemExit and BaseException subclasses, sync or async, become isError results."""
        element = tool_from_function(handler)
        with caplog.at_level(logging.ERROR, logger="mcp_core.handlers"):
            result = await Invoker().call_tool(element, {}, RecordingGateway())
        assert result == {
            "content": [{"type": "text", "text": f"Error executing tool {handler.__name__}"}],
            "isError": True,
        }
        assert f"tool {handler.__name__!r} raised" in caplog.text

    async def test_reads_and_prompts_raise_for_the_server_to_answer(self) -> None:
        """A read or prompt that exits raises (the server answers -32603); it never exits."""

        def read() -> str:
            raise SystemExit(1)

        resource = Element(definition=Resource(uri="test://r", name="r"), handler=read)
        with pytest.raises(SystemExit):
            await Invoker().read_resource(resource, "test://r", {}, RecordingGateway())

    async def test_keyboard_interrupt_escapes(self) -> None:
        """Ctrl-C is not a tool failure: it propagates."""

        async def interrupted() -> str:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            await Invoker().call_tool(tool_from_function(interrupted), {}, RecordingGateway())

    async def test_cancellation_stays_cancellation(self) -> None:
        """A cancelled call is cancelled, not turned into an error result."""
        started = anyio.Event()
        results: list[object] = []

        async def waits() -> str:
            started.set()
            await anyio.sleep_forever()
            return "never"

        element = tool_from_function(waits)
        async with anyio.create_task_group() as group:

            async def call() -> None:
                results.append(await Invoker().call_tool(element, {}, RecordingGateway()))

            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()
        assert results == []


class TestUnsendableResults:
    """A result UTF-8 JSON cannot carry is a clear error, never a dead stream."""

    @pytest.mark.parametrize(
        ("handler", "where"),
        [
            (surrogate, "$.content[0].text: the string holds a lone surrogate"),
            (not_a_number, "$.structuredContent.result: nan is not a JSON number"),
        ],
    )
    async def test_tools_answer_an_error_result(self, handler: Any, where: str) -> None:
        """The result says the tool's result cannot be sent, and where the problem is."""
        result = await Invoker().call_tool(tool_from_function(handler), {}, RecordingGateway())
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text.startswith(
            f"Error executing tool {handler.__name__}: its result cannot be sent as JSON ({where}"
        )

    async def test_objects_without_json_form_are_error_results(self) -> None:
        """An unknown object inside a result fails the call, not the transport."""
        result = await Invoker().call_tool(tool_from_function(an_object), {}, RecordingGateway())
        assert result["isError"] is True

    async def test_reads_prompts_and_completions_raise_value_error(self) -> None:
        """Outside tools, an unsendable result raises ValueError naming the element and place."""
        gateway = RecordingGateway()

        def item(id: str) -> str:  # noqa: A002 -- the template variable
            return f"\ud800{id}"

        def greet(name: str) -> str:
            return f"hi {name}\udfff"

        template = resource_template_from_function(
            item, "test://items/{id}", completions={"id": lambda value: ["ok\ud800"]}
        )
        with pytest.raises(
            ValueError, match=r"resource_template 'test://items/\{id\}'.*\$\.contents\[0\]\.text"
        ):
            await Invoker().read_resource(template, "test://items/1", {"id": "1"}, gateway)
        with pytest.raises(ValueError, match=r"prompt 'greet'.*\$\.messages\[0\]"):
            await Invoker().get_prompt(prompt_from_function(greet), {"name": "a"}, gateway)
        with pytest.raises(ValueError, match=r"\$\.values\[0\]"):
            await Invoker().complete(template, "id", "o", {}, gateway)


class TestTimeouts:
    """An optional limit per handler: one number, or a function of the element."""

    async def test_a_slow_async_tool_answers_an_error_result(self) -> None:
        """Past its limit an async tool is cancelled and answers why."""

        async def slow() -> str:
            await anyio.sleep_forever()
            return "never"

        result = await Invoker(timeout=0.05).call_tool(
            tool_from_function(slow), {}, RecordingGateway()
        )
        assert result == {
            "content": [
                {
                    "type": "text",
                    "text": "Error executing tool slow: it did not finish within 0.05 s",
                }
            ],
            "isError": True,
        }

    async def test_a_sync_tool_is_abandoned_in_its_thread(self) -> None:
        """A sync handler cannot be stopped: the call answers, the thread finishes on its own."""
        release = threading.Event()

        def blocking() -> str:
            release.wait(10)
            return "late"

        try:
            result = await Invoker(timeout=0.05).call_tool(
                tool_from_function(blocking), {}, RecordingGateway()
            )
        finally:
            release.set()
        assert result["isError"] is True

    async def test_per_element_limits(self) -> None:
        """A function of the element decides each limit; None means no limit for that one."""

        async def slow() -> str:
            await anyio.sleep(0.2)
            return "done"

        limited = tool_from_function(slow, name="limited")
        free = tool_from_function(slow, name="free")
        invoker = Invoker(timeout=lambda e: 0.01 if e.definition.name == "limited" else None)
        assert (await invoker.call_tool(limited, {}, RecordingGateway()))["isError"] is True
        assert "isError" not in await invoker.call_tool(free, {}, RecordingGateway())

    async def test_reads_raise_handler_timeout_error(self) -> None:
        """A read past its limit raises HandlerTimeoutError naming the element and the limit."""

        async def slow() -> str:
            await anyio.sleep_forever()
            return "never"

        element = Element(definition=Resource(uri="test://slow", name="slow"), handler=slow)
        with pytest.raises(HandlerTimeoutError) as caught:
            await Invoker(timeout=0.01).read_resource(
                element, "test://slow", {}, RecordingGateway()
            )
        assert (str(caught.value.ref), caught.value.timeout) == ("resource 'test://slow'", 0.01)

    @pytest.mark.parametrize("timeout", [0, -1, True, "5"])
    def test_nonsense_limits_are_refused(self, timeout: object) -> None:
        """A limit must be a positive number of seconds."""
        with pytest.raises(ValueError, match="positive number of seconds"):
            Invoker(timeout=timeout)  # type: ignore[arg-type]  # the misuse under test

    async def test_no_limit_by_default(self) -> None:
        """Without a timeout, a handler takes as long as it takes."""

        async def quick() -> str:
            await anyio.sleep(0.01)
            return "ok"

        element = Element(
            definition=Tool(name="quick", input_schema={"type": "object"}), handler=quick
        )
        assert (await Invoker().call_tool(element, {}, RecordingGateway()))["content"][0][
            "text"
        ] == "ok"
