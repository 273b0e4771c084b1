"""Registration parity with the PHP SDK's documented API, each row shown with the official client.

Every handler type and every parameter of the PHP SDK's ``addTool``, ``addResource``,
``addResourceTemplate``, ``addPrompt`` and discovery options has an mcp-core equivalent; the
table in ``docs/registration.md`` names the test here that shows it, in both protocol eras.
"""

from __future__ import annotations

import functools
import inspect
import sys
import textwrap
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_core import App, Message
from mcp_core.elements import Annotations, Icon, Tool, ToolAnnotations
from mcp_core.errors import HandlerKindError
from mcp_core.handlers import ClientGateway

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ICON = Icon(src="https://example.org/icon.png", mime_type="image/png", sizes=("48x48",))
SUM = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
TOTAL = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """The official client's default mode (2026-07-28) and its legacy mode (2025-11-25)."""
    value: str = request.param
    return value


class Calculator:
    """A service whose methods are handlers (the class and method name pair, and the instance's)."""

    def __init__(self, factor: int = 1) -> None:
        self.factor = factor

    def multiply(self, a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b * self.factor

    def divide(self, a: int, b: int) -> float:
        """Divide a by b."""
        return a / b / self.factor


class InvokableCalculator:
    """Subtract b from a (an invokable class: instantiated on first use)."""

    def __call__(self, a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b


@functools.cache
def handler_types_app() -> App:
    """One tool per PHP handler type, each named and described as the PHP SDK derives them.

    Built once: marking a module-level function twice (two apps) is a declaration error.
    """
    app = App("handlers")

    def add(a: int, b: int) -> int:  # a closure: a function defined in a function
        """Adds two numbers together."""
        return a + b

    app.tool(name="add_numbers")(add)
    app.tool(lambda a, b: a**b)  # an unnamed closure, named by the documented rule
    app.tool(name="multiply_numbers")(Calculator.multiply)  # [Calculator::class, 'multiply']
    app.tool(Calculator(factor=2).divide)  # [$calculatorInstance, 'divide']
    app.tool(InvokableCalculator)  # InvokableCalculator::class
    app.tool(functools.partial(add, 10))  # a partial: named after what it wraps
    return app


async def test_every_php_handler_type(mode: str) -> None:
    """Closure, lambda, class+method, instance+method and invokable class, listed and called."""
    lines, first = inspect.getsourcelines(handler_types_app.__wrapped__)
    line = first + next(i for i, text in enumerate(lines) if "app.tool(lambda" in text)
    lambda_name = f"{__name__}.lambda_{line}"  # <module>.lambda_<line>
    async with Client(handler_types_app().server.lowlevel, mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        results = {
            name: await client.call_tool(name, arguments)
            for name, arguments in [
                ("add_numbers", {"a": 2, "b": 3}),
                (lambda_name, {"a": 2, "b": 3}),
                ("multiply_numbers", {"a": 2, "b": 3}),
                ("divide", {"a": 6, "b": 3}),
                ("InvokableCalculator", {"a": 5, "b": 3}),
                ("add", {"b": 5}),
            ]
        }
    assert set(tools) == {
        "add_numbers",
        lambda_name,
        "multiply_numbers",
        "divide",
        "InvokableCalculator",
        "add",
    }
    assert tools["add_numbers"].description == "Adds two numbers together."
    assert tools["divide"].description == "Divide a by b."
    assert tools["InvokableCalculator"].description == "Subtract b from a."
    texts = {name: result.content[0] for name, result in results.items()}
    assert {name: getattr(block, "text", None) for name, block in texts.items()} == {
        "add_numbers": "5",
        lambda_name: "8",
        "multiply_numbers": "6",
        "divide": "1.0",
        "InvokableCalculator": "2",
        "add": "15",
    }


def tool_parameters_app() -> App:
    """A tool given every addTool parameter (input and output schemas included)."""
    app = App("tools")

    @app.tool(
        name="sum_numbers",
        title="Sum",
        description="Adds a and b.",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        input_schema=SUM,
        output_schema=TOTAL,
        icons=[ICON],
        meta={"vendor": {"cost": 1}},
    )
    def total(**numbers: int) -> dict[str, int]:
        return {"total": sum(numbers.values())}

    return app


async def test_every_add_tool_parameter(mode: str) -> None:
    """AddTool's parameters, input_schema included: arguments validated against it, then bound."""
    async with Client(tool_parameters_app().server.lowlevel, mode=mode) as client:
        [tool] = (await client.list_tools()).tools
        ok = await client.call_tool("sum_numbers", {"a": 2, "b": 3})
        refused = await client.call_tool("sum_numbers", {"a": 2})
    wire = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert wire["inputSchema"] == SUM
    assert wire["outputSchema"] == TOTAL
    assert (wire["name"], wire["title"], wire["description"]) == (
        "sum_numbers",
        "Sum",
        "Adds a and b.",
    )
    assert wire["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert wire["icons"] == [ICON.to_wire()]
    assert wire["_meta"] == {"vendor": {"cost": 1}}
    assert ok.structured_content == {"total": 5}
    assert refused.is_error  # a missing argument is a tool error result (SEP-1303), not -32602


async def test_input_schema_through_the_function_helper_and_explicit_registration(
    mode: str,
) -> None:
    """tool_from_function(input_schema=...) and app.add(Tool(...), handler) (Builder::add)."""
    from mcp_core.handlers import tool_from_function

    def total(**numbers: int) -> int:
        return sum(numbers.values())

    class Weather:
        async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
            return {"temperature": 21, "city": arguments["city"]}

    app = App("helpers")
    summing = tool_from_function(total, name="total", input_schema=SUM)
    app.add(summing.definition, summing.handler)
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    app.add(Tool(name="get_weather", input_schema=city, description="Weather."), Weather())
    async with Client(app.server.lowlevel, mode=mode) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        summed = await client.call_tool("total", {"a": 1, "b": 2})
        weather = await client.call_tool("get_weather", {"city": "Oslo"})
    assert schemas == {"total": SUM, "get_weather": city}
    assert getattr(summed.content[0], "text", None) == "3"
    assert weather.structured_content == {"temperature": 21, "city": "Oslo"}


def resource_parameters_app() -> App:
    """A resource, a template and a prompt given every parameter the PHP SDK documents."""
    app = App("resources")

    @app.resource(
        "config://app/settings",
        name="app_config",
        title="Settings",
        description="Application configuration",
        mime_type="application/json",
        size=17,
        annotations=Annotations(audience=("user",), priority=0.5),
        icons=[ICON],
        meta={"owner": "ops"},
    )
    def settings() -> dict[str, str]:
        return {"mode": "demo"}

    @app.resource_template(
        "user://{user_id}/profile",
        name="user_profile",
        title="Profile",
        description="User profile by ID",
        mime_type="application/json",
        annotations=Annotations(priority=1.0),
        icons=[ICON],
        meta={"pii": True},
    )
    def profile(user_id: str) -> dict[str, str]:
        return {"id": user_id}

    @app.prompt(
        name="custom_prompt",
        title="Custom",
        description="A custom prompt generator",
        icons=[ICON],
        meta={"lang": "en"},
    )
    def generate(topic: str) -> list[Message]:
        return [Message.user(f"Write about {topic}")]

    return app


async def test_every_resource_template_and_prompt_parameter(mode: str) -> None:
    """addResource, addResourceTemplate and addPrompt parameters, listed and served."""
    async with Client(resource_parameters_app().server.lowlevel, mode=mode) as client:
        [resource] = (await client.list_resources()).resources
        [template] = (await client.list_resource_templates()).resource_templates
        [prompt] = (await client.list_prompts()).prompts
        read = await client.read_resource("user://7/profile")
        got = await client.get_prompt("custom_prompt", {"topic": "cats"})

    def wire(model: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
        return dumped

    assert wire(resource) == {
        "uri": "config://app/settings",
        "name": "app_config",
        "title": "Settings",
        "description": "Application configuration",
        "mimeType": "application/json",
        "size": 17,
        "annotations": {"audience": ["user"], "priority": 0.5},
        "icons": [ICON.to_wire()],
        "_meta": {"owner": "ops"},
    }
    assert wire(template) == {
        "uriTemplate": "user://{user_id}/profile",
        "name": "user_profile",
        "title": "Profile",
        "description": "User profile by ID",
        "mimeType": "application/json",
        "annotations": {"priority": 1.0},
        "icons": [ICON.to_wire()],
        "_meta": {"pii": True},
    }
    assert {k: v for k, v in wire(prompt).items() if k != "arguments"} == {
        "name": "custom_prompt",
        "title": "Custom",
        "description": "A custom prompt generator",
        "icons": [ICON.to_wire()],
        "_meta": {"lang": "en"},
    }
    assert isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text == '{"id": "7"}'
    assert isinstance(got.messages[0].content, types.TextContent)
    assert got.messages[0].content.text == "Write about cats"


PROJECT = {
    "src/tools/weather.py": '''
        from mcp_core.handlers import completion, resource_template, tool

        @tool
        def forecast(city: str) -> str:
            """The forecast for a city."""
            return f"sunny in {city}"

        @resource_template("station://{code}", mime_type="text/plain")
        def station(code: str) -> str:
            """A weather station."""
            return f"discovered station {code}"

        @completion("station://{code}", "code")
        def codes(value: str) -> list[str]:
            return [c for c in ("OSL", "BER") if c.startswith(value)]
    ''',
    "src/tools/broken-name.py": "raise RuntimeError('never imported')\n",
    "tests/test_tools.py": """
        from mcp_core.handlers import tool

        @tool
        def only_in_tests() -> str:
            return "test"
    """,
    "vendor/lib/vendored.py": """
        from mcp_core.handlers import tool

        @tool
        def vendored() -> str:
            return "vendored"
    """,
}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project folder to discover from, its top folder named uniquely (modules are global).

    Discovery puts the folder on ``sys.path`` to import its modules; it is taken off after.
    """
    root = (tmp_path / f"proj_{uuid.uuid4().hex[:8]}").resolve()
    for relative, code in PROJECT.items():
        file = root / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(textwrap.dedent(code))
    yield root
    if str(root) in sys.path:
        sys.path.remove(str(root))


async def test_discovery_from_paths_with_excluded_folders(mode: str, project: Path) -> None:
    """setDiscovery(base, ['.'], excludeDirs: [...]): paths, root, include/exclude patterns."""
    app = App("discovered")
    app.discover(paths=["."], root=project, exclude=["vendor", "tests", "*/broken-name.py"])
    async with Client(app.server.lowlevel, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("forecast", {"city": "Oslo"})
    assert names == {"forecast"}
    assert getattr(result.content[0], "text", None) == "sunny in Oslo"
    assert app.registry.diagnostics() == ()


async def test_an_overriding_template_keeps_the_discovered_completion(
    mode: str, project: Path
) -> None:
    """Manual beats discovered for a template; the completion provider follows the winner."""
    app = App("override")
    app.discover(paths=["src"], root=project, exclude=["*/broken-name.py"])

    @app.resource_template("station://{code}", mime_type="text/plain")
    def station(code: str) -> str:
        """The application's own station view."""
        return f"manual station {code}"

    async with Client(app.server.lowlevel, mode=mode) as client:
        ref = types.ResourceTemplateReference(uri="station://{code}")
        completed = await client.complete(ref, {"name": "code", "value": "O"})
        read = await client.read_resource("station://OSL")
    assert completed.completion.values == ["OSL"]
    assert isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text == "manual station OSL"


class ConfigHandler:
    """ResourceHandlerInterface: reads a fixed resource."""

    async def read(self, uri: str, gateway: ClientGateway) -> str:
        """The resource's text."""
        return f"read {uri}"


class ProfileHandler:
    """ResourceTemplateHandlerInterface: reads a templated resource with its variables."""

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        """The profile of the user the URI names."""
        return f"profile of {variables['user_id']}"


class GreetingHandler:
    """PromptHandlerInterface: renders a prompt from its arguments."""

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> str:
        """A user message."""
        return f"Greet {arguments['name']}"


async def test_the_four_handler_interfaces_through_add(mode: str) -> None:
    """Builder::add() with each handler interface; a wrong pairing is refused when added."""
    from mcp_core.elements import Prompt, PromptArgument, Resource, ResourceTemplate

    app = App("explicit")
    app.add(Resource(uri="config://app", name="config"), ConfigHandler())
    app.add(ResourceTemplate(uri_template="user://{user_id}", name="user"), ProfileHandler())
    greeting = Prompt(name="greet", arguments=(PromptArgument(name="name", required=True),))
    app.add(greeting, GreetingHandler())
    with pytest.raises(HandlerKindError, match="cannot serve a prompt"):
        app.add(Prompt(name="wrong"), ConfigHandler())
    async with Client(app.server.lowlevel, mode=mode) as client:
        config = await client.read_resource("config://app")
        profile = await client.read_resource("user://7")
        prompt = await client.get_prompt("greet", {"name": "Ann"})
    assert isinstance(config.contents[0], types.TextResourceContents)
    assert config.contents[0].text == "read config://app"
    assert isinstance(profile.contents[0], types.TextResourceContents)
    assert profile.contents[0].text == "profile of 7"
    assert isinstance(prompt.messages[0].content, types.TextContent)
    assert prompt.messages[0].content.text == "Greet Ann"
