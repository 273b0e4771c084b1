"""The Invoker: every handler shape, validation, results, errors, completion, checks and caching."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_core.elements import (
    Element,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import (
    ArgumentValidationError,
    HandlerKindError,
    HandlerResolutionError,
    ToolError,
)
from mcp_core.handlers import (
    ClientGateway,
    EmbeddedResource,
    Image,
    Invoker,
    Message,
    RequestedUri,
    Text,
    ToolResult,
    _plan,
    prompt_from_function,
    resource_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.handlers.testing import LogCall, RecordingGateway

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def add_tool(
    handler: object, *, name: str = "add", schema: Mapping[str, Any] = ADD_SCHEMA
) -> Element:
    """A hand-written tool definition served by ``handler``."""
    return Element(
        definition=Tool(name=name, input_schema=schema, description="Add."), handler=handler
    )


class DictContainer:
    """A dict-backed Container, as a framework's service container would be."""

    def __init__(self, services: Mapping[str, object]) -> None:
        self.services = dict(services)
        self.gets: list[str] = []

    def has(self, id: str) -> bool:  # noqa: A002 -- the Container protocol's vocabulary
        """Whether ``id`` is registered."""
        return id in self.services

    def get(self, id: str) -> object:  # noqa: A002 -- same
        """The service ``id``."""
        self.gets.append(id)
        return self.services[id]


class Calculator:
    """A service object whose bound methods are handlers."""

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset

    def add(self, a: int, b: int) -> int:
        """Add with an offset."""
        return a + b + self.offset


class CallableAdder:
    """A class instance with ``__call__``."""

    def __call__(self, a: int, b: int) -> int:
        """Add."""
        return a + b


class PluginTool:
    """A plugin object: a ToolHandler that also filters its own arguments (drops ``_private``)."""

    def __init__(self) -> None:
        self.seen: list[Mapping[str, Any]] = []

    def filter_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Strip keys starting with an underscore."""
        return {k: v for k, v in arguments.items() if not k.startswith("_")}

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Log, then add."""
        self.seen.append(arguments)
        await gateway.log("info", "plugin running")
        return Text(str(arguments["a"] + arguments["b"]))


class StaticPrompt:
    """A PromptHandler object."""

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> object:
        """One user message naming the topic."""
        return [Message.user(f"topic: {arguments['topic']}"), Message.assistant("noted")]


class FileResource:
    """A ResourceHandler object."""

    async def read(self, uri: str, gateway: ClientGateway) -> object:
        """Bytes of the file."""
        return b"\x00\x01"


class ItemTemplate:
    """A ResourceTemplateHandler object."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> object:
        """The item id and the URI."""
        return f"{variables['id']} at {uri}"


class TestInvokerHandlerShapes:
    """Every accepted handler shape serves a tool call."""

    async def test_sync_function_runs_off_the_event_loop_thread(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A sync function runs in a worker thread, so it cannot block the loop."""
        threads: list[int] = []

        def add(a: int, b: int) -> int:
            threads.append(threading.get_ident())
            return a + b

        result = await invoker.call_tool(tool_from_function(add), {"a": 1, "b": 2}, gateway)
        assert result["structuredContent"] == {"result": 3}
        assert threads
        assert threads[0] != threading.get_ident()

    async def test_async_function_runs_on_the_event_loop(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """An async function is awaited on the loop's thread, with the gateway injected."""
        loop_thread = threading.get_ident()
        threads: list[int] = []

        async def add(a: int, b: int, gateway: ClientGateway) -> int:
            threads.append(threading.get_ident())
            await gateway.log("debug", {"a": a})
            return a + b

        result = await invoker.call_tool(tool_from_function(add), {"a": 1, "b": 2}, gateway)
        assert result == {
            "content": [{"type": "text", "text": "3"}],
            "structuredContent": {"result": 3},
        }
        assert threads == [loop_thread]
        assert gateway.logs == [LogCall("debug", {"a": 1}, None)]

    async def test_bound_method(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """A bound method is called on its instance."""
        element = tool_from_function(Calculator(offset=10).add)
        result = await invoker.call_tool(element, {"a": 1, "b": 2}, gateway)
        assert result["structuredContent"] == {"result": 13}
        assert isinstance(element.definition, Tool)
        assert "self" not in element.definition.input_schema["properties"]

    async def test_callable_instance(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """A class instance with ``__call__`` is bound by parameter name like a function."""
        result = await invoker.call_tool(add_tool(CallableAdder()), {"a": 2, "b": 2}, gateway)
        assert result["content"] == [{"type": "text", "text": "4"}]

    async def test_plugin_object_with_argument_filter(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A ToolHandler + ArgumentFilter plugin: private keys are stripped before validation."""
        plugin = PluginTool()
        arguments = {"a": 1, "b": 2, "_trace": "x", "_session": {"id": 1}}
        result = await invoker.call_tool(add_tool(plugin), arguments, gateway)
        assert result == {"content": [{"type": "text", "text": "3"}]}
        assert plugin.seen == [{"a": 1, "b": 2}]
        assert gateway.logs == [LogCall("info", "plugin running", None)]

    async def test_argument_filter_runs_before_validation(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Without the filter, ``_trace`` would fail ``additionalProperties: false``."""
        plain = add_tool(CallableAdder())
        with pytest.raises(ArgumentValidationError):
            await invoker.call_tool(plain, {"a": 1, "b": 2, "_trace": "x"}, gateway)

    async def test_container_id_that_is_not_an_import_path(self, gateway: RecordingGateway) -> None:
        """``svc.calculator`` exists only in the container; it is resolved there, lazily."""
        container = DictContainer({"svc.calculator": PluginTool()})
        invoker = Invoker(container=container)
        element = add_tool(HandlerRef("svc.calculator"))
        invoker.validate_handler(element)
        assert container.gets == []
        result = await invoker.call_tool(element, {"a": 20, "b": 22}, gateway)
        assert result["content"] == [{"type": "text", "text": "42"}]
        await invoker.call_tool(element, {"a": 1, "b": 1}, gateway)
        assert container.gets == ["svc.calculator"]

    async def test_container_is_consulted_before_importing(
        self, gateway: RecordingGateway, fixture_packages: None
    ) -> None:
        """An import-path-shaped id the container has is taken from the container."""
        container = DictContainer({"discovery_pkg_refs.handlers:lonely": CallableAdder()})
        element = add_tool(HandlerRef("discovery_pkg_refs.handlers:lonely"))
        result = await Invoker(container=container).call_tool(element, {"a": 1, "b": 1}, gateway)
        assert result["content"] == [{"type": "text", "text": "2"}]
        assert "discovery_pkg_refs.handlers" not in sys.modules

    async def test_lazy_class_method_reference(
        self, invoker: Invoker, gateway: RecordingGateway, fixture_packages: None
    ) -> None:
        """``pkg.mod:Class.method`` is imported on first call, the class instantiated once."""
        add = add_tool(HandlerRef("discovery_pkg_refs.handlers:Calculator.add"))
        subtract = add_tool(
            HandlerRef("discovery_pkg_refs.handlers:Calculator.subtract"), name="subtract"
        )
        invoker.validate_handler(add)
        assert "discovery_pkg_refs.handlers" not in sys.modules
        assert (await invoker.call_tool(add, {"a": 5, "b": 3}, gateway))["content"][0][
            "text"
        ] == "8"
        assert (await invoker.call_tool(subtract, {"a": 5, "b": 3}, gateway))["content"][0][
            "text"
        ] == "2"
        assert importlib.import_module("discovery_pkg_refs.handlers").Calculator.instances == 1

    async def test_class_reference_instantiated_through_the_container(
        self, gateway: RecordingGateway, fixture_packages: None
    ) -> None:
        """A class the container knows (by reference) is taken from it, with its constructor args."""
        greeter = importlib.import_module("discovery_pkg_refs.handlers").Greeter("Howdy")
        container = DictContainer({"discovery_pkg_refs.handlers:Greeter": greeter})
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        element = add_tool(
            HandlerRef("discovery_pkg_refs.handlers:Greeter.greet"), name="greet", schema=schema
        )
        result = await Invoker(container=container).call_tool(element, {"name": "Ada"}, gateway)
        assert result["content"] == [{"type": "text", "text": "Howdy, Ada"}]

    async def test_reference_to_a_handler_class(
        self, invoker: Invoker, gateway: RecordingGateway, fixture_packages: None
    ) -> None:
        """A reference to a ToolHandler class instantiates it and calls ``execute``."""
        element = add_tool(
            HandlerRef("discovery_pkg_refs.handlers:Echo"), schema={"type": "object"}
        )
        result = await invoker.call_tool(element, {"x": 1}, gateway)
        assert result["content"] == [{"type": "text", "text": "[('x', 1)]"}]


class TestInvokerHandlerResolution:
    """Unresolvable references fail with the reference and the element named."""

    @pytest.mark.parametrize(
        ("target", "fragment"),
        [
            ("svc.missing", "not an import path"),
            ("discovery_pkg_refs.nowhere:thing", "cannot be imported"),
            ("discovery_pkg_refs.handlers:Nope", "has no attribute 'Nope'"),
            ("discovery_pkg_refs.handlers:Calculator.nope", "has no attribute 'nope'"),
            (
                "discovery_pkg_refs.handlers:Greeter.greet",
                "cannot be instantiated without arguments",
            ),
        ],
    )
    async def test_unresolvable_reference(
        self,
        invoker: Invoker,
        gateway: RecordingGateway,
        fixture_packages: None,
        target: str,
        fragment: str,
    ) -> None:
        """Each failure says what was tried, naming the reference and the element."""
        element = add_tool(HandlerRef(target))
        with pytest.raises(HandlerResolutionError) as caught:
            await invoker.call_tool(element, {"a": 1, "b": 1}, gateway)
        message = str(caught.value)
        assert fragment in message
        assert target in message
        assert "tool 'add'" in message
        assert caught.value.ref == element.ref
        assert caught.value.handler_ref == HandlerRef(target)

    def test_check_reports_unresolvable_references(
        self, invoker: Invoker, fixture_packages: None
    ) -> None:
        """``check`` lists problems ahead of time instead of raising."""
        broken = add_tool(HandlerRef("discovery_pkg_refs.handlers:Nope"))
        fine = add_tool(HandlerRef("discovery_pkg_refs.handlers:Calculator.add"))
        problems = invoker.check(broken)
        assert len(problems) == 1
        assert "tool 'add'" in problems[0]
        assert "discovery_pkg_refs.handlers:Nope" in problems[0]
        assert invoker.check(fine) == []

    def test_check_reports_a_wrong_kind_behind_a_reference(self, fixture_packages: None) -> None:
        """A reference resolving to a prompt handler cannot serve a tool."""
        invoker = Invoker(container=DictContainer({"svc.prompt": StaticPrompt()}))
        problems = invoker.check(add_tool(HandlerRef("svc.prompt")))
        assert len(problems) == 1
        assert "PromptHandler" in problems[0]

    def test_failed_resolution_is_retried(self) -> None:
        """A failure is not cached: a container that later has the service resolves it."""
        container = DictContainer({})
        invoker = Invoker(container=container)
        element = add_tool(HandlerRef("svc.late"))
        assert invoker.check(element) != []
        container.services["svc.late"] = CallableAdder()
        assert invoker.check(element) == []


class TestInvokerValidateHandler:
    """Wrong pairings of definition and handler are refused at registration."""

    def test_prompt_handler_for_a_tool(self, invoker: Invoker) -> None:
        """A PromptHandler object cannot serve a tool."""
        with pytest.raises(HandlerKindError, match="PromptHandler"):
            invoker.validate_handler(add_tool(StaticPrompt()))

    def test_resource_handler_for_a_template(self, invoker: Invoker) -> None:
        """``read(uri, gateway)`` cannot serve a template, which passes variables."""
        element = Element(
            definition=ResourceTemplate(uri_template="res://{id}", name="item"),
            handler=FileResource(),
        )
        with pytest.raises(HandlerKindError, match="ResourceHandler"):
            invoker.validate_handler(element)

    def test_template_handler_for_a_resource(self, invoker: Invoker) -> None:
        """``read(uri, variables, gateway)`` cannot serve a fixed resource."""
        element = Element(definition=Resource(uri="res://x", name="x"), handler=ItemTemplate())
        with pytest.raises(HandlerKindError, match="ResourceTemplateHandler"):
            invoker.validate_handler(element)

    def test_a_class_instead_of_an_instance(self, invoker: Invoker) -> None:
        """A class is not a handler; the message suggests an instance or a reference."""
        with pytest.raises(HandlerKindError, match="not an instance"):
            invoker.validate_handler(add_tool(PluginTool))

    def test_a_non_callable_value(self, invoker: Invoker) -> None:
        """A value that is neither a handler object nor callable is refused."""
        with pytest.raises(HandlerKindError, match="cannot serve a tool"):
            invoker.validate_handler(add_tool(42))

    def test_template_function_missing_a_variable(self, invoker: Invoker) -> None:
        """A function that cannot take every template variable is refused."""

        def read(name: str) -> str:
            return name

        element = Element(
            definition=ResourceTemplate(uri_template="res://{id}", name="item"), handler=read
        )
        with pytest.raises(HandlerKindError, match=r"template variables \['id'\]"):
            invoker.validate_handler(element)

    def test_references_are_not_resolved(self, invoker: Invoker) -> None:
        """A reference is checked on use (or by ``check``), not at registration."""
        invoker.validate_handler(add_tool(HandlerRef("not.imported:anything")))

    def test_completion_provider_of_the_wrong_shape(self, invoker: Invoker) -> None:
        """A completion provider that is not one of the accepted shapes is refused."""
        element = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="x")]),
            handler=StaticPrompt(),
            completions={"x": 42},
        )
        with pytest.raises(HandlerKindError, match="cannot complete"):
            invoker.validate_handler(element)

    def test_a_derived_element_is_not_analysed_again_when_first_admitted(
        self, invoker: Invoker, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Derivation vouches for the function it derived from; only that object, only once."""
        seen: list[Element] = []
        served_by = _plan._served_by

        def counting(element: Element, handler: object) -> Any:
            seen.append(element)
            return served_by(element, handler)

        monkeypatch.setattr(_plan, "_served_by", counting)

        def add(a: int, b: int) -> int:
            return a + b

        element = tool_from_function(add)
        invoker.validate_handler(element)
        assert seen == []
        invoker.validate_handler(element)  # admitted again (another registry, a reload)
        assert seen == [element]
        twin = dataclasses.replace(element)  # equal, but not the object derivation checked
        invoker.validate_handler(twin)
        assert seen == [element, twin]

    def test_a_vouch_holds_nothing_alive(self) -> None:
        """The vouch is on the element itself: nothing beside it refers to a derived element."""

        def add(a: int, b: int) -> int:
            return a + b

        element = tool_from_function(add)
        plain = Element(definition=element.definition, handler=add)
        assert sys.getrefcount(element) == sys.getrefcount(plain)
        assert element == plain  # the vouch is no part of the value

    def test_a_copy_of_a_derived_element_with_another_handler_is_checked(
        self, invoker: Invoker
    ) -> None:
        """Vouching holds for the derived object only: a replaced handler is analysed."""

        def add(a: int, b: int) -> int:
            return a + b

        element = tool_from_function(add)
        with pytest.raises(HandlerKindError, match="PromptHandler"):
            invoker.validate_handler(dataclasses.replace(element, handler=StaticPrompt()))
        invoker.validate_handler(element)

    def test_a_derived_callable_that_is_also_a_handler_object_is_checked(
        self, invoker: Invoker
    ) -> None:
        """Served by its protocol method, not by the ``__call__`` derivation analysed."""

        class Both:
            def __call__(self, a: int) -> int:
                return a

            def execute(self, arguments: Mapping[str, Any]) -> object:  # one argument short
                return arguments

        element = tool_from_function(Both(), name="both")
        with pytest.raises(HandlerKindError, match="execute"):
            invoker.validate_handler(element)

    def test_the_completions_of_a_derived_element_are_checked(self, invoker: Invoker) -> None:
        """Only the handler is vouched for: a wrong completion provider is still refused."""

        def greet(name: str) -> str:
            return f"Hello {name}"

        element = prompt_from_function(greet, completions={"name": 42})
        with pytest.raises(HandlerKindError, match="cannot complete"):
            invoker.validate_handler(element)

    def test_every_good_pairing_passes(self, invoker: Invoker) -> None:
        """Each protocol object and function serves its own kind."""
        invoker.validate_handler(add_tool(PluginTool()))
        invoker.validate_handler(Element(definition=Prompt(name="p"), handler=StaticPrompt()))
        invoker.validate_handler(
            Element(definition=Resource(uri="res://x", name="x"), handler=FileResource())
        )
        invoker.validate_handler(
            Element(
                definition=ResourceTemplate(uri_template="res://{id}", name="i"),
                handler=ItemTemplate(),
            )
        )


class TestInvokerCallTool:
    """Validation, results and failures of ``tools/call``."""

    async def test_invalid_arguments_raise(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Schema violations raise ArgumentValidationError with a pointer per problem."""
        with pytest.raises(ArgumentValidationError) as caught:
            await invoker.call_tool(add_tool(CallableAdder()), {"a": "one"}, gateway)
        assert ("/a", "'one' is not of type 'integer'") in caught.value.errors
        assert ("/", "'b' is a required property") in caught.value.errors

    async def test_no_arguments_is_an_empty_object(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """``arguments`` may be absent (None)."""

        def hello() -> str:
            return "hi"

        result = await invoker.call_tool(tool_from_function(hello), None, gateway)
        assert result == {"content": [{"type": "text", "text": "hi"}]}

    async def test_tool_error_becomes_an_error_result(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A ToolError's message is meant for the model."""

        def divide(a: int, b: int) -> float:
            if b == 0:
                raise ToolError("cannot divide by zero; pass a non-zero b")
            return a / b

        result = await invoker.call_tool(tool_from_function(divide), {"a": 1, "b": 0}, gateway)
        assert result == {
            "content": [{"type": "text", "text": "cannot divide by zero; pass a non-zero b"}],
            "isError": True,
        }

    async def test_other_exceptions_are_logged_never_sent(
        self, invoker: Invoker, gateway: RecordingGateway, caplog: pytest.LogCaptureFixture
    ) -> None:
        """An unexpected exception gives a generic error; its text goes to the log only."""

        def leaky() -> str:
            raise RuntimeError("password=hunter2")

        with caplog.at_level(logging.ERROR, logger="mcp_core.handlers"):
            result = await invoker.call_tool(tool_from_function(leaky), {}, gateway)
        assert result == {
            "content": [{"type": "text", "text": "Error executing tool leaky"}],
            "isError": True,
        }
        assert "hunter2" not in repr(result)
        assert any(r.exc_info and "hunter2" in str(r.exc_info[1]) for r in caplog.records)

    async def test_structured_content_checked_against_the_output_schema(
        self, invoker: Invoker, gateway: RecordingGateway, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A result that breaks the declared output schema is an error, logged."""

        def lying() -> dict[str, Any]:
            return {"count": "many"}

        output = {"type": "object", "properties": {"count": {"type": "integer"}}}
        element = tool_from_function(lying, output_schema=output)
        with caplog.at_level(logging.ERROR, logger="mcp_core.handlers"):
            result = await invoker.call_tool(element, {}, gateway)
        assert result == {
            "content": [{"type": "text", "text": "Error executing tool lying"}],
            "isError": True,
        }
        assert any("output schema" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)

    async def test_scalar_result_of_the_wrong_type(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A tool declared ``-> int`` that returns text breaks its derived output schema."""

        def count() -> int:
            return "many"  # type: ignore[return-value]  # the broken promise under test

        result = await invoker.call_tool(tool_from_function(count), {}, gateway)
        assert result == {
            "content": [{"type": "text", "text": "Error executing tool count"}],
            "isError": True,
        }

    async def test_missing_structured_content_breaks_the_output_schema(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """With an output schema, plain content alone is not a valid result."""

        def text_only() -> str:
            return "no structure"

        element = tool_from_function(text_only, output_schema={"type": "object"})
        result = await invoker.call_tool(element, {}, gateway)
        assert result["isError"] is True

    async def test_tool_result_passes_through(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A ToolResult controls every field of the result."""

        def custom() -> ToolResult:
            return ToolResult(
                ["a", Image(b"\x89PNG", "image/png")], structured={"n": 1}, is_error=True
            )

        result = await invoker.call_tool(tool_from_function(custom), {}, gateway)
        assert result == {
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            ],
            "structuredContent": {"n": 1},
            "isError": True,
        }

    async def test_arguments_are_coerced_to_parameter_types(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """JSON 3.0 is an integer; objects become the annotated model types."""
        received: list[object] = []

        def record(n: int, tags: list[str] | None = None) -> None:
            received.extend((n, tags))

        await invoker.call_tool(tool_from_function(record), {"n": 3.0}, gateway)
        assert received == [3, None]
        assert type(received[0]) is int

    async def test_argument_validation_error_from_a_handler_propagates(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A plugin's own argument check maps to invalid params, not to a tool error."""

        class Strict:
            async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
                raise ArgumentValidationError("a must be even", errors=[("/a", "odd")])

        with pytest.raises(ArgumentValidationError, match="even"):
            await invoker.call_tool(add_tool(Strict()), {"a": 1, "b": 1}, gateway)

    async def test_wrong_kind_of_element(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """call_tool refuses an element that is not a tool."""
        with pytest.raises(TypeError, match="tool element"):
            await invoker.call_tool(
                Element(definition=Prompt(name="p"), handler=StaticPrompt()), {}, gateway
            )


class TestInvokerGatewayRegression:
    """Regression: an injected gateway parameter never leaks into the published schema."""

    async def test_gateway_parameter_is_injected_not_published(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """The schema has only ``text``; the tool stays callable and receives the gateway."""

        async def shout(text: str, ctx: ClientGateway) -> str:
            await ctx.progress(1, 1)
            return text.upper()

        element = tool_from_function(shout)
        schema = element.definition.input_schema  # type: ignore[union-attr]  # a tool
        assert set(schema["properties"]) == {"text"}
        assert list(schema["required"]) == ["text"]
        result = await invoker.call_tool(element, {"text": "hi"}, gateway)
        assert result == {"content": [{"type": "text", "text": "HI"}]}
        assert len(gateway.progress_updates) == 1

    async def test_unresolvable_gateway_annotation_is_still_recognised(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """``ClientGateway`` imported only under TYPE_CHECKING arrives as text and is still injected."""
        namespace: dict[str, Any] = {}
        exec(  # noqa: S102 -- builds a module-like function whose annotation cannot be resolved
            "from __future__ import annotations\n"
            "async def shout(text: str, gateway: ClientGateway) -> str:\n"
            "    await gateway.log('info', text)\n"
            "    return text.upper()\n",
            namespace,
        )
        element = tool_from_function(namespace["shout"])
        assert set(element.definition.input_schema["properties"]) == {"text"}  # type: ignore[union-attr]  # a tool
        result = await invoker.call_tool(element, {"text": "hi"}, gateway)
        assert result["content"] == [{"type": "text", "text": "HI"}]
        assert gateway.logs == [LogCall("info", "hi", None)]


class TestInvokerReadResource:
    """``resources/read`` through functions and resource handler objects."""

    async def test_function_resource_text(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A str is text; the MIME type is guessed from the URI."""

        def readme() -> str:
            return "# hello"

        element = resource_from_function(readme, "file:///docs/readme.md")
        result = await invoker.read_resource(element, "file:///docs/readme.md", {}, gateway)
        assert result == {
            "contents": [
                {"uri": "file:///docs/readme.md", "mimeType": "text/markdown", "text": "# hello"}
            ]
        }

    async def test_resource_handler_object_bytes(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Bytes are a base64 blob, ``application/octet-stream`` without a better type."""
        element = Element(definition=Resource(uri="res://bin", name="bin"), handler=FileResource())
        result = await invoker.read_resource(element, "res://bin", {}, gateway)
        assert result == {
            "contents": [
                {"uri": "res://bin", "mimeType": "application/octet-stream", "blob": "AAE="}
            ]
        }

    async def test_template_handler_object(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A ResourceTemplateHandler receives the URI and the variables."""
        element = Element(
            definition=ResourceTemplate(uri_template="res://items/{id}", name="item"),
            handler=ItemTemplate(),
        )
        result = await invoker.read_resource(element, "res://items/7", {"id": "7"}, gateway)
        assert result["contents"] == [
            {"uri": "res://items/7", "mimeType": "text/plain", "text": "7 at res://items/7"}
        ]

    async def test_template_variables_are_converted(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Variables arrive as strings and are converted to the parameter types."""

        def item(id: int) -> dict[str, Any]:  # noqa: A002 -- the template variable's name
            return {"id": id, "double": id * 2}

        element = resource_template_from_function(
            item, "res://items/{id}", mime_type="application/json"
        )
        result = await invoker.read_resource(element, "res://items/21", {"id": "21"}, gateway)
        assert result["contents"] == [
            {
                "uri": "res://items/21",
                "mimeType": "application/json",
                "text": '{"id": 21, "double": 42}',
            }
        ]
        with pytest.raises(ArgumentValidationError, match="id"):
            await invoker.read_resource(element, "res://items/x", {"id": "x"}, gateway)

    async def test_variable_named_uri_does_not_clobber_the_uri(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Regression: ``{uri}`` binds to the parameter ``uri``; the real URI only via RequestedUri."""

        def page(uri: str, requested: RequestedUri) -> str:
            return f"variable={uri} requested={requested}"

        element = resource_template_from_function(page, "web://pages/{uri}")
        result = await invoker.read_resource(element, "web://pages/home", {"uri": "home"}, gateway)
        assert result["contents"][0]["text"] == "variable=home requested=web://pages/home"

    async def test_embedded_and_mixed_contents(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A list gives several contents; EmbeddedResource keeps its own URI and type."""

        def bundle() -> list[object]:
            return ["a", EmbeddedResource("res://other", mime_type="application/json", text="{}")]

        element = resource_from_function(bundle, "res://bundle", mime_type="text/plain")
        result = await invoker.read_resource(element, "res://bundle", {}, gateway)
        assert result["contents"] == [
            {"uri": "res://bundle", "mimeType": "text/plain", "text": "a"},
            {"uri": "res://other", "mimeType": "application/json", "text": "{}"},
        ]

    async def test_exceptions_propagate(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """A failing read raises for the server to map."""

        def broken() -> str:
            raise FileNotFoundError("gone")

        with pytest.raises(FileNotFoundError):
            await invoker.read_resource(
                resource_from_function(broken, "res://gone"), "res://gone", {}, gateway
            )


class TestInvokerGetPrompt:
    """``prompts/get`` through functions and prompt handler objects."""

    async def test_function_prompt(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """Arguments bind by name; a str is a user message; the description is published."""

        def review(code: str, language: str = "python") -> str:
            """Review some code."""
            return f"Review this {language}: {code}"

        result = await invoker.get_prompt(prompt_from_function(review), {"code": "x = 1"}, gateway)
        assert result == {
            "description": "Review some code.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review this python: x = 1"}}
            ],
        }

    async def test_missing_required_argument(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A required argument that is absent raises ArgumentValidationError naming it."""
        element = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="topic", required=True)]),
            handler=StaticPrompt(),
        )
        with pytest.raises(ArgumentValidationError) as caught:
            await invoker.get_prompt(element, {}, gateway)
        assert caught.value.errors == (("/topic", "a required argument is missing"),)

    async def test_prompt_handler_object(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """A PromptHandler's messages are rendered in order."""
        element = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="topic", required=True)]),
            handler=StaticPrompt(),
        )
        result = await invoker.get_prompt(element, {"topic": "tests"}, gateway)
        assert result == {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "topic: tests"}},
                {"role": "assistant", "content": {"type": "text", "text": "noted"}},
            ]
        }

    async def test_arguments_converted_to_parameter_types(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Prompt arguments are strings; an ``int`` parameter receives an int."""

        def repeat(word: str, times: int = 1) -> str:
            return " ".join([word] * times)

        result = await invoker.get_prompt(
            prompt_from_function(repeat), {"word": "go", "times": "3"}, gateway
        )
        assert result["messages"][0]["content"]["text"] == "go go go"


class TestInvokerComplete:
    """``completion/complete`` through the element's providers."""

    async def test_no_provider(self, invoker: Invoker, gateway: RecordingGateway) -> None:
        """An argument without a provider completes to nothing."""
        element = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="x")]),
            handler=StaticPrompt(),
        )
        assert await invoker.complete(element, "x", "a", {}, gateway) == {
            "values": [],
            "hasMore": False,
        }

    async def test_list_provider_prefix_filters(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A list of values is filtered by prefix, case-insensitively."""
        element = Element(
            definition=Prompt(name="p", arguments=[PromptArgument(name="lang")]),
            handler=StaticPrompt(),
            completions={"lang": ["Python", "perl", "rust"]},
        )
        result = await invoker.complete(element, "lang", "p", {}, gateway)
        assert result == {"values": ["Python", "perl"], "total": 2, "hasMore": False}

    async def test_provider_by_reference(
        self, gateway: RecordingGateway, fixture_packages: None
    ) -> None:
        """A HandlerRef provider is resolved (here through the container) on first use."""

        def complete(value: str, context: Mapping[str, str]) -> list[str]:
            return [f"{context.get('prefix', '')}{value}1"]

        invoker = Invoker(container=DictContainer({"svc.complete": complete}))
        element = Element(
            definition=ResourceTemplate(uri_template="res://{a}/{b}", name="t"),
            handler=ItemTemplate(),
            completions={"b": HandlerRef("svc.complete")},
        )
        result = await invoker.complete(element, "b", "x", {"prefix": "p-"}, gateway)
        assert result == {"values": ["p-x1"], "total": 1, "hasMore": False}


class TestInvokerCaching:
    """Plans and validators are built once per element and shared where possible."""

    async def test_plan_built_once(self, gateway: RecordingGateway) -> None:
        """A second call reuses the plan: the container is asked once."""
        container = DictContainer({"svc.adder": CallableAdder()})
        invoker = Invoker(container=container)
        element = add_tool(HandlerRef("svc.adder"))
        for _ in range(3):
            await invoker.call_tool(element, {"a": 1, "b": 1}, gateway)
        assert container.gets == ["svc.adder"]
        assert len(invoker._plans) == 1

    async def test_validators_shared_by_equal_schemas(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """Many tools with one hand-written schema compile it once."""
        loose = {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        }
        for index in range(20):
            element = add_tool(CallableAdder(), name=f"add{index}", schema=loose)
            await invoker.call_tool(element, {"a": 1, "b": 1}, gateway)
        assert len(invoker._plans) == 20
        assert len(invoker._validators) == 1

    async def test_derived_simple_schemas_are_checked_by_the_binder(
        self, invoker: Invoker, gateway: RecordingGateway
    ) -> None:
        """A schema derived on the direct path is enforced by the binder, with the same messages."""

        def add(a: int, b: int) -> int:
            return a + b

        derived = tool_from_function(add)
        written = add_tool(add, schema={**ADD_SCHEMA, "description": "hand-written"})
        for element in (derived, written):
            with pytest.raises(ArgumentValidationError) as caught:
                await invoker.call_tool(element, {"a": "one", "c": 1}, gateway)
            assert caught.value.errors == (
                ("/", "'b' is a required property"),
                ("/", "Additional properties are not allowed ('c' was unexpected)"),
                ("/a", "'one' is not of type 'integer'"),
            )
        assert invoker._plans.get(derived).input_validator is None  # type: ignore[union-attr]  # cached by now
        assert invoker._plans.get(written).input_validator is not None  # type: ignore[union-attr]  # same

    async def test_cache_is_bounded(self, gateway: RecordingGateway) -> None:
        """Past ``cache_size``, the least recently used plans are dropped (and rebuilt on use)."""
        invoker = Invoker(cache_size=4)
        elements = [add_tool(CallableAdder(), name=f"add{index}") for index in range(10)]
        for element in elements:
            await invoker.call_tool(element, {"a": 1, "b": 1}, gateway)
        assert len(invoker._plans) == 4
        result = await invoker.call_tool(elements[0], {"a": 2, "b": 2}, gateway)
        assert result["content"] == [{"type": "text", "text": "4"}]
