"""One call plan per element (ADR 0113): decided once by the handler's class, then only run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_core.elements import Element, Resource, ResourceTemplate, Tool
from mcp_core.handlers import ClientGateway, Invoker, tool_from_function
from mcp_core.handlers import _invoker as invoker_module
from mcp_core.handlers import _plan as plan_module
from mcp_core.handlers.testing import RecordingGateway

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


class Doubler:
    """A ToolHandler: its class defines ``execute``."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        return str(arguments["a"] * 2)


class Reader:
    """A resource handler whose ``read`` takes the template's variables too."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        return f"{uri} {dict(variables)}"


def tool(handler: object) -> Element:
    """A tool ``double`` served by ``handler``."""
    return Element(definition=Tool(name="double", input_schema=SCHEMA), handler=handler)


def text(result: Mapping[str, Any]) -> str:
    """The text of a one-item result."""
    items = result.get("content") or result.get("contents")
    assert isinstance(items, list)
    value = items[0]["text"]
    assert isinstance(value, str)
    return value


class TestThePlanIsBuiltOnce:
    """Every later call only runs the plan: nothing about the handler is decided again."""

    async def test_adapted_once_for_many_calls(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Three calls of one element: the handler is adapted to its kind once."""
        adapted: list[Element] = []
        real = plan_module.adapt

        def counting(element: Element, handler: object) -> plan_module.CallPlan:
            adapted.append(element)
            return real(element, handler)

        monkeypatch.setattr(invoker_module, "adapt", counting)
        invoker, gateway = Invoker(), RecordingGateway()
        element = tool(Doubler())
        for a in (1, 2, 3):
            assert text(await invoker.call_tool(element, {"a": a}, gateway)) == str(2 * a)
        assert adapted == [element]

    async def test_a_function_and_an_object_bind_their_own_way(self) -> None:
        """A derived function binds by parameter name; a ToolHandler gets the fixed positions."""

        def double(a: int) -> str:
            """Doubles."""
            return str(a * 2)

        invoker, gateway = Invoker(), RecordingGateway()
        derived = tool_from_function(double)
        assert text(await invoker.call_tool(derived, {"a": 4}, gateway)) == "8"
        assert text(await invoker.call_tool(tool(Doubler()), {"a": 4}, gateway)) == "8"


class TestTheClassDecidesTheKind:
    """A handler object serves a kind when its class offers that kind's Protocol."""

    async def test_a_template_handler_gets_the_variables(self) -> None:
        """``read(uri, variables, gateway)`` on the class: served as a template's handler."""
        element = Element(
            definition=ResourceTemplate(uri_template="x://{id}", name="x"), handler=Reader()
        )
        result = await Invoker().read_resource(element, "x://7", {"id": "7"}, RecordingGateway())
        assert text(result) == "x://7 {'id': '7'}"

    def test_a_resource_handler_of_the_wrong_arity_is_named(self) -> None:
        """A fixed resource served by a template-shaped ``read``: refused, saying what it looks like."""
        element = Element(definition=Resource(uri="x://a", name="a"), handler=Reader())
        problems = Invoker().check(element)
        assert problems
        assert "looks like a ResourceTemplateHandler" in problems[0]
