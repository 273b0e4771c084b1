"""The injection hook: parameters of registered types or markers are filled in, never published."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from mcp_core.elements import Tool
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import Invoker, prompt_from_function, register_injection, tool_from_function
from mcp_core.handlers._injection import Injection
from mcp_core.handlers.testing import RecordingGateway


class Clock:
    """A framework type handlers ask for by annotation."""

    def __init__(self, now: str) -> None:
        self.now = now


@dataclass(frozen=True)
class Setting:
    """A marker: ``Annotated[str, Setting("key")]``."""

    key: str


calls: list[Injection] = []


def clock(injection: Injection) -> Clock:
    """Build one clock per call, shared by every parameter that wants one."""
    calls.append(injection)
    shared = injection.shared.setdefault("clock", Clock("noon"))
    assert isinstance(shared, Clock)
    return shared


async def setting(injection: Injection) -> str:
    """An async injector reading the marker from the annotation."""
    marker = injection.annotation.__metadata__[0]
    return f"{marker.key}={injection.arguments.get('x')}"


@pytest.fixture(autouse=True)
def rules() -> Iterator[None]:
    """Register the two rules for the test, and remove them afterwards."""
    calls.clear()
    undo = [register_injection(Clock, clock), register_injection(Setting, setting)]
    yield
    for remove in undo:
        remove()


def schema_of(fn: Any) -> Any:
    """The input schema published for ``fn``."""
    definition = tool_from_function(fn).definition
    assert isinstance(definition, Tool)
    return definition.input_schema


class TestInjection:
    """Derivation leaves injected parameters out; calls fill them in."""

    def test_not_published(self) -> None:
        """A Clock parameter, an optional one, and a marked one are not arguments."""

        def f(x: int, a: Clock, b: Clock | None, c: Annotated[str, Setting("k")]) -> str:
            return ""

        assert set(schema_of(f)["properties"]) == {"x"}
        assert {a.name for a in prompt_from_function(f).definition.arguments or ()} == {"x"}  # type: ignore[union-attr]  # a prompt definition

    async def test_filled_per_call(self) -> None:
        """Injectors get the gateway, the handler and the bound arguments; ``shared`` is per call."""

        def f(x: int, a: Clock, b: Clock, c: Annotated[str, Setting("k")]) -> str:
            return f"{x} {a.now} {a is b} {c}"

        gateway = RecordingGateway()
        invoker = Invoker()
        element = tool_from_function(f)
        first = await invoker.call_tool(element, {"x": 1}, gateway)
        await invoker.call_tool(element, {"x": 2}, gateway)
        assert first["content"][0]["text"] == "1 noon True k=1"
        assert [c.parameter for c in calls] == ["a", "b", "a", "b"]
        assert calls[0].gateway is gateway
        assert calls[0].handler is f
        assert calls[0].arguments == {"x": 1}
        assert set(calls[0].injected) == {"a", "b", "c"}
        assert calls[0].shared is calls[1].shared
        assert calls[1].shared is not calls[2].shared

    async def test_injector_failure_is_the_calls_failure(self) -> None:
        """An injector that raises makes the tool call an error result, like the body would."""

        def broken(injection: Injection) -> Clock:
            raise RuntimeError("no clock today")

        def f(a: Clock) -> str:
            return a.now

        remove = register_injection(Clock, broken)
        try:
            result = await Invoker().call_tool(tool_from_function(f), {}, RecordingGateway())
        finally:
            remove()
        assert result == {
            "content": [{"type": "text", "text": "Error executing tool f"}],
            "isError": True,
        }

    def test_positional_only_refused(self) -> None:
        """An injected parameter must be nameable."""

        def f(a: Clock, /) -> str:
            return ""

        with pytest.raises(InvalidElementError, match="'a' must be nameable"):
            tool_from_function(f)

    def test_bad_registrations(self) -> None:
        """Only classes, and only callable injectors."""
        with pytest.raises(TypeError, match="needs a class"):
            register_injection("Clock", clock)  # type: ignore[arg-type]  # what is being refused
        with pytest.raises(TypeError, match="callable injector"):
            register_injection(Clock, "clock")  # type: ignore[arg-type]  # same
