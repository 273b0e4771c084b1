"""Derivation from what is not a plain function: methods, classes, callables, lambdas, partials."""

from __future__ import annotations

import functools
import sys
from typing import Any

import pytest

from mcp_core.app import App
from mcp_core.elements import Element, HandlerRef, Tool
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import Invoker, prompt_from_function, tool, tool_from_function
from mcp_core.handlers._decorators import ElementMark, marks_of
from mcp_core.handlers.testing import RecordingGateway


class Service:
    """A service the framework's container builds."""

    def __init__(self, factor: int = 1) -> None:
        self.factor = factor

    def scale(self, x: int) -> int:
        """Scale x by the service's factor."""
        return x * self.factor

    async def ascale(self, x: int) -> int:
        """Scale x, asynchronously."""
        return x * self.factor


class Doubler:
    """Double a number."""

    def __call__(self, x: int) -> int:
        return 2 * x


class Tripler:
    """A tripler."""

    def __call__(self, x: int) -> int:
        """Triple x."""
        return 3 * x


class NotCallable:
    """A handler object with no __call__."""

    async def execute(self, arguments: Any, gateway: Any) -> str:
        return "ok"


class Container:
    """A container that knows the Service (factor 10) and the Doubler class by reference."""

    def __init__(self) -> None:
        self.services: dict[str, object] = {
            f"{__name__}:Service": Service(10),
            f"{__name__}:Doubler": Doubler(),
        }

    def has(self, id: str) -> bool:  # noqa: A002 -- the container protocol
        return id in self.services

    def get(self, id: str) -> object:  # noqa: A002 -- the container protocol
        return self.services[id]


def schema_properties(element: Element) -> set[str]:
    """The published argument names of a tool."""
    assert isinstance(element.definition, Tool)
    return set(element.definition.input_schema["properties"])


class TestMethods:
    """Unbound and bound methods."""

    async def test_unbound_method_hides_self_and_is_served_through_the_container(self) -> None:
        """Service.scale publishes x only; its handler is a reference resolved by the container."""
        element = tool_from_function(Service.scale)
        assert schema_properties(element) == {"x"}
        assert element.handler == HandlerRef(f"{__name__}:Service.scale")
        result = await Invoker(container=Container()).call_tool(
            element, {"x": 2}, RecordingGateway()
        )
        assert result["structuredContent"] == {"result": 20}

    async def test_unbound_method_without_a_container_instantiates_the_class(self) -> None:
        """Without a container the class is built without arguments."""
        element = tool_from_function(Service.ascale)
        result = await Invoker().call_tool(element, {"x": 2}, RecordingGateway())
        assert result["structuredContent"] == {"result": 2}

    def test_method_of_a_local_class_says_to_pass_a_bound_method(self) -> None:
        """A class defined in a function cannot be found again by reference."""

        class Local:
            def run(self, x: int) -> int:
                return x

        with pytest.raises(InvalidElementError, match=r"bound method \(instance\.method\)"):
            tool_from_function(Local.run)

    async def test_bound_methods_are_their_own_handlers(self) -> None:
        """A bound method is served as given, on its instance."""
        element = tool_from_function(Service(3).scale)
        assert schema_properties(element) == {"x"}
        result = await Invoker().call_tool(element, {"x": 2}, RecordingGateway())
        assert result["structuredContent"] == {"result": 6}

    async def test_app_declares_bound_methods_of_two_instances(self) -> None:
        """app.tool(instance.method) works, sync and async, once per instance."""
        app = App()
        app.tool(name="by_two")(Service(2).scale)
        marked = app.tool(Service(5).ascale)
        assert marks_of(marked)
        names = sorted(t.name for t in await app.registry.tools())
        assert names == ["ascale", "by_two"]
        by_two = await app.registry.get_tool("by_two")
        ascale = await app.registry.get_tool("ascale")
        assert by_two is not None
        assert ascale is not None
        gateway = RecordingGateway()
        assert (await app.invoker.call_tool(by_two, {"x": 4}, gateway))["structuredContent"] == {
            "result": 8
        }
        assert (await app.invoker.call_tool(ascale, {"x": 4}, gateway))["structuredContent"] == {
            "result": 20
        }

    async def test_methods_decorated_in_a_class_body_are_served_through_the_container(
        self,
    ) -> None:
        """@app.tool on a method in its class body: the container's instance serves it."""
        app = App(container=_MethodsContainer())
        app.tool(Greeter.greet)  # what @app.tool on the method in the class body receives
        element = await app.registry.get_tool("greet")
        assert element is not None
        assert element.handler == HandlerRef(f"{__name__}:Greeter.greet")
        result = await app.invoker.call_tool(element, {"who": "ann"}, RecordingGateway())
        assert result["content"] == [{"type": "text", "text": "hi ann"}]


class Greeter:
    """Greets, with a greeting the container configures."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def greet(self, who: str) -> str:
        """Greet someone."""
        return f"{self.greeting} {who}"


class _MethodsContainer:
    def has(self, id: str) -> bool:  # noqa: A002 -- the container protocol
        return id == f"{__name__}:Greeter"

    def get(self, id: str) -> object:  # noqa: A002 -- the container protocol
        return Greeter("hi")


class TestClasses:
    """Classes are published from __call__ and instantiated by reference."""

    async def test_a_class_with_call_is_published_from_it(self) -> None:
        """Name: the class's; description: the class's docstring when __call__ has none."""
        element = tool_from_function(Doubler)
        assert isinstance(element.definition, Tool)
        assert element.definition.name == "Doubler"
        assert element.definition.description == "Double a number."
        assert schema_properties(element) == {"x"}
        assert element.handler == HandlerRef(f"{__name__}:Doubler")
        result = await Invoker(container=Container()).call_tool(
            element, {"x": 4}, RecordingGateway()
        )
        assert result["structuredContent"] == {"result": 8}

    def test_call_docstring_wins_and_options_still_apply(self) -> None:
        """__call__'s docstring describes it; name= and description= override."""
        derived = tool_from_function(Tripler)
        assert isinstance(derived.definition, Tool)
        assert derived.definition.description == "Triple x."
        named = tool_from_function(Tripler, name="triple", description="Times three.")
        assert (named.definition.name, named.definition.description) == ("triple", "Times three.")

    async def test_app_declares_a_class(self) -> None:
        """@app.tool on a class (or app.tool(Class)) serves an instance of it."""
        app = App()
        app.tool(Tripler)
        element = await app.registry.get_tool("Tripler")
        assert element is not None
        result = await app.invoker.call_tool(element, {"x": 2}, RecordingGateway())
        assert result["structuredContent"] == {"result": 6}

    def test_a_class_without_call_says_what_to_write(self) -> None:
        """No __call__, no signature: the message points at app.add with a HandlerRef."""
        with pytest.raises(InvalidElementError, match=r"without __call__.*app\.add\(Tool"):
            tool_from_function(NotCallable)

    def test_a_local_class_says_to_define_it_at_module_level(self) -> None:
        """A class defined in a function cannot be instantiated by reference."""

        class Local:
            def __call__(self) -> str:
                return "x"

        with pytest.raises(InvalidElementError, match="define it at module level"):
            tool_from_function(Local)


class TestCallables:
    """Callable objects, lambdas and partials."""

    def test_a_callable_object_is_named_after_its_class(self) -> None:
        """An instance with __call__ is its own handler."""
        handler = Doubler()
        element = tool_from_function(handler)
        assert element.definition.name == "Doubler"
        assert element.handler is handler

    def test_a_lambda_is_named_after_where_it_is_written(self) -> None:
        """A lambda is ``<module>.lambda_<line>``, the same in every run; name= still wins."""
        line = sys._getframe().f_lineno + 1
        element = tool_from_function(lambda x: x)
        assert element.definition.name == f"{__name__}.lambda_{line}"
        line = sys._getframe().f_lineno + 1
        assert prompt_from_function(lambda: "hi").definition.name == f"{__name__}.lambda_{line}"
        assert tool_from_function(lambda x: x, name="identity").definition.name == "identity"

    def test_a_partial_is_named_after_what_it_wraps(self) -> None:
        """functools.partial takes the name of the function it wraps (through nested partials)."""
        bound = functools.partial(functools.partial(Service(2).scale))
        assert tool_from_function(bound).definition.name == "scale"
        assert tool_from_function(bound, name="scaled").definition.name == "scaled"

    def test_a_marked_lambda_has_its_name_before_and_after_derivation(self) -> None:
        """@tool on a lambda: the mark's ref and the derived element agree on the name."""
        marked = tool(lambda x: x)
        mark = marks_of(marked)[0]
        assert isinstance(mark, ElementMark)
        derived = mark.derive(marked)
        assert derived.ref == mark.ref(marked)
        assert derived.definition.name.startswith(f"{__name__}.lambda_")
