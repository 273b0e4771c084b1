"""The sans-IO request handlers and their wire errors (mcp_core.server.RequestHandlers)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import ArgumentValidationError, ElementNotFoundError
from mcp_core.handlers import ClientGateway, Invoker
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.registry import Registry, ResolvedResource
from mcp_core.server import RequestHandlers
from mcp_core.server._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    InvalidCursorError,
    clip_json,
    wire_error,
)
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, per_uri, predicate


async def echo(arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
    """Echo the arguments."""
    return repr(dict(arguments))


class _Echo:
    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        return f"echo {dict(arguments)}"


class _Read:
    async def read(self, uri: str, gateway: ClientGateway) -> str:
        return f"read {uri}"


class _ReadTemplate:
    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        return f"item {variables['id']}"


class _ReadPath:
    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        return f"path {variables['path']}"


class _Prompt:
    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> str:
        return f"hello {arguments.get('who', 'nobody')}"


class _Boom:
    async def read(self, uri: str, gateway: ClientGateway) -> str:
        raise RuntimeError("secret path /etc/shadow")


def _complete_who(value: str) -> list[str]:
    return [v for v in ("alice", "bob") if v.startswith(value)]


def catalogue() -> ElementCollection:
    """One element of each kind, plus a secret tool and a resource that fails."""
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    return ElementCollection(
        [
            Element(definition=Tool(name="echo", input_schema=schema), handler=_Echo()),
            Element(
                definition=Tool(name="secret", input_schema={"type": "object"}), handler=_Echo()
            ),
            Element(definition=Resource(uri="test://r", name="r"), handler=_Read()),
            Element(definition=Resource(uri="test://boom", name="boom"), handler=_Boom()),
            Element(
                definition=ResourceTemplate(uri_template="test://items/{id}", name="items"),
                handler=_ReadTemplate(),
            ),
            Element(
                definition=Prompt(
                    name="greet", arguments=[PromptArgument(name="who", required=True)]
                ),
                handler=_Prompt(),
                completions={"who": _complete_who},
            ),
        ]
    )


@pytest.fixture
def handlers() -> RequestHandlers:
    """Request handlers over a registry of the catalogue, hiding 'secret' from sessions without the 'admin' scope."""
    registry = Registry([(StaticSource(catalogue()), 0)])
    rule = predicate(lambda ref, session: ref.key != "secret" or "admin" in session.scopes)
    return RequestHandlers(registry, registry, invoker=Invoker(), visibility=rule)


USER = RecordingGateway(session=SessionInfo(session_id="u"))
ADMIN = RecordingGateway(session=SessionInfo(session_id="a", scopes=frozenset({"admin"})))


class TestLists:
    """List handlers answer wire dicts from the catalogue, per session."""

    async def test_lists_every_kind(self, handlers: RequestHandlers) -> None:
        """Each list has its result key and the wire shape of its definitions."""
        assert [t["name"] for t in (await handlers.list_tools(None, USER.session))["tools"]] == [
            "echo"
        ]
        assert [
            r["uri"] for r in (await handlers.list_resources(None, USER.session))["resources"]
        ] == [
            "test://boom",
            "test://r",
        ]
        templates = await handlers.list_resource_templates(None, USER.session)
        assert templates == {
            "resourceTemplates": [{"uriTemplate": "test://items/{id}", "name": "items"}]
        }
        prompts = await handlers.list_prompts(None, USER.session)
        assert prompts["prompts"][0]["arguments"] == [{"name": "who", "required": True}]

    async def test_visibility_per_session(self, handlers: RequestHandlers) -> None:
        """A scoped session sees the secret tool; another does not."""
        assert [t["name"] for t in (await handlers.list_tools(None, ADMIN.session))["tools"]] == [
            "echo",
            "secret",
        ]

    async def test_bad_cursor(self, handlers: RequestHandlers) -> None:
        """A malformed cursor raises InvalidCursorError, which is -32602 on the wire."""
        with pytest.raises(InvalidCursorError) as caught:
            await handlers.list_prompts("nope", USER.session)
        assert wire_error(caught.value).code == INVALID_PARAMS


class TestElementRequests:
    """call/read/get/complete resolve, check visibility and invoke."""

    async def test_call(self, handlers: RequestHandlers) -> None:
        """A tool call returns the invoker's CallToolResult."""
        result = await handlers.call_tool("echo", {"x": 1}, USER)
        assert result == {"content": [{"type": "text", "text": "echo {'x': 1}"}]}

    async def test_invalid_arguments_are_tool_errors(self, handlers: RequestHandlers) -> None:
        """Arguments that miss the schema are an isError result with the message (SEP-1303)."""
        result = await handlers.call_tool("echo", {"x": "one"}, USER)
        assert result == {
            "content": [
                {
                    "type": "text",
                    "text": "tool 'echo': invalid arguments: /x: 'one' is not of type 'integer'",
                }
            ],
            "isError": True,
        }

    def test_argument_errors_elsewhere_are_invalid_params(self) -> None:
        """Outside tools/call (prompt arguments), an ArgumentValidationError stays -32602 with data."""
        error = wire_error(
            ArgumentValidationError("bad", errors=[("/x", "'one' is not of type 'integer'")])
        )
        assert error.code == INVALID_PARAMS
        assert error.data == {
            "errors": [{"path": "/x", "message": "'one' is not of type 'integer'"}]
        }

    async def test_hidden_is_missing(self, handlers: RequestHandlers) -> None:
        """A hidden tool raises exactly what an unknown one raises."""
        errors = []
        for name in ("secret", "unknown"):
            with pytest.raises(ElementNotFoundError) as caught:
                await handlers.call_tool(name, {}, USER)
            errors.append(wire_error(caught.value))
        assert [
            (e.code, e.message.replace("secret", "X").replace("unknown", "X")) for e in errors
        ] == [(INVALID_PARAMS, "Unknown tool: X")] * 2
        assert (await handlers.call_tool("secret", {}, ADMIN))["content"]

    async def test_read_exact_and_template(self, handlers: RequestHandlers) -> None:
        """An exact resource reads itself; a templated URI passes its variables."""
        assert (await handlers.read_resource("test://r", USER))["contents"][0][
            "text"
        ] == "read test://r"
        assert (await handlers.read_resource("test://items/7", USER))["contents"][0][
            "text"
        ] == "item 7"

    async def test_unknown_resource(self, handlers: RequestHandlers) -> None:
        """An unknown URI is -32002 with the uri in data."""
        with pytest.raises(ElementNotFoundError) as caught:
            await handlers.read_resource("test://nothing", USER)
        error = wire_error(caught.value)
        assert (error.code, error.message) == (RESOURCE_NOT_FOUND, "Resource not found")
        assert error.data == {"uri": "test://nothing"}

    async def test_failure_never_leaks(self, handlers: RequestHandlers) -> None:
        """An unexpected exception's text is not part of its wire error."""
        with pytest.raises(RuntimeError) as caught:
            await handlers.read_resource("test://boom", USER)
        error = wire_error(caught.value)
        assert (error.code, error.message, error.data) == (INTERNAL_ERROR, "Internal error", None)

    async def test_prompt(self, handlers: RequestHandlers) -> None:
        """A prompt renders; an unknown one is -32602; a missing argument too."""
        result = await handlers.get_prompt("greet", {"who": "ann"}, USER)
        assert result["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "hello ann"}}
        ]
        with pytest.raises(ElementNotFoundError) as caught:
            await handlers.get_prompt("nope", {}, USER)
        assert wire_error(caught.value).message == "Unknown prompt: nope"
        with pytest.raises(ArgumentValidationError):
            await handlers.get_prompt("greet", {}, USER)

    async def test_complete(self, handlers: RequestHandlers) -> None:
        """Completion consults the prompt's provider; a template without one answers no values."""
        ref = {"type": "ref/prompt", "name": "greet"}
        result = await handlers.complete(ref, {"name": "who", "value": "a"}, None, USER)
        assert result["completion"]["values"] == ["alice"]
        template = {"type": "ref/resource", "uri": "test://items/{id}"}
        assert (await handlers.complete(template, {"name": "id", "value": ""}, {}, USER))[
            "completion"
        ]["values"] == []

    async def test_complete_unknown_ref(self, handlers: RequestHandlers) -> None:
        """Completing an unknown prompt or template is -32602."""
        with pytest.raises(ElementNotFoundError) as caught:
            await handlers.complete(
                {"type": "ref/resource", "uri": "nope://x/{y}"}, {"name": "y"}, None, USER
            )
        assert wire_error(caught.value).code == INVALID_PARAMS
        assert caught.value.ref == ElementRef(ElementKind.RESOURCE_TEMPLATE, "nope://x/{y}")

    @pytest.mark.parametrize("size", [0, -1, True, False, 1.5, "2"])
    def test_page_size_must_be_positive(self, size: object) -> None:
        """A page size that is not a positive int (a bool is none) is refused, naming it."""
        registry = Registry()
        with pytest.raises(ValueError, match=f"page_size .* got {size!r}"):
            RequestHandlers(registry, registry, invoker=Invoker(), page_size=size)  # type: ignore[arg-type]  # the mistake under test

    async def test_malformed_completion_argument(self, handlers: RequestHandlers) -> None:
        """A completion argument without a string name and value is refused, a missing ref first."""
        ref = {"type": "ref/prompt", "name": "greet"}
        for argument in ({"name": 1, "value": "a"}, {"name": "who", "value": 1}, {"value": 1}):
            with pytest.raises(ArgumentValidationError, match="name: string, value: string"):
                await handlers.complete(ref, argument, None, USER)
        with pytest.raises(ElementNotFoundError):
            await handlers.complete(
                {"type": "ref/prompt", "name": "nope"}, {"value": 1}, None, USER
            )


class WinnerOnly:
    """A third-party resolver without ResourceCandidates: it offers get_resource's winner only."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    async def get_tool(self, name: str) -> Element | None:
        return await self._registry.get_tool(name)

    async def get_prompt(self, name: str) -> Element | None:
        return await self._registry.get_prompt(name)

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        return await self._registry.get_resource(uri)


class TestCandidates:
    """A hidden candidate makes way for the next visible one; a winner-only resolver cannot."""

    @staticmethod
    def overlapping() -> Registry:
        """An exact resource and a specific template, both under a generic template."""
        generic = ResourceTemplate(uri_template="test://{+path}", name="generic")
        specific = ResourceTemplate(uri_template="test://items/{id}", name="items")
        return Registry(
            [
                (
                    StaticSource(
                        ElementCollection(
                            [
                                Element(
                                    definition=Resource(uri="test://r", name="r"), handler=_Read()
                                ),
                                Element(definition=specific, handler=_ReadTemplate()),
                                Element(definition=generic, handler=_ReadPath()),
                            ]
                        )
                    ),
                    0,
                )
            ]
        )

    async def test_hidden_candidates_make_way(self) -> None:
        """Reads, subscriptions and completions of a hidden exact/specific match go to the generic one."""
        registry = self.overlapping()
        hide = predicate(lambda ref, session: ref.key not in {"test://r", "test://items/{id}"})
        handlers = RequestHandlers(registry, registry, invoker=Invoker(), visibility=hide)
        exact = await handlers.read_resource("test://r", USER)
        templated = await handlers.read_resource("test://items/7", USER)
        assert exact["contents"][0]["text"] == "path r"
        assert templated["contents"][0]["text"] == "path items/7"
        resolved = await handlers.resolve_resource("test://items/7", USER.session)
        assert resolved.element.ref.key == "test://{+path}"
        completion = await handlers.complete(
            {"type": "ref/resource", "uri": "test://items/7"}, {"name": "path"}, None, USER
        )
        assert completion == {"completion": {"values": [], "hasMore": False}}

    async def test_a_winner_only_resolver_hides_the_uri(self) -> None:
        """Without resource_candidates a hidden winner hides the URI (documented degradation)."""
        registry = self.overlapping()
        hide = predicate(lambda ref, session: ref.key != "test://r")
        handlers = RequestHandlers(
            registry, WinnerOnly(registry), invoker=Invoker(), visibility=hide
        )
        with pytest.raises(ElementNotFoundError):
            await handlers.read_resource("test://r", USER)
        assert (await handlers.read_resource("test://items/7", USER))["contents"]

    async def test_per_uri_rules_see_the_uri_and_variables(self) -> None:
        """A per-URI rule is asked with the concrete URI and variables, for templates only."""
        asked: list[tuple[str, str, dict[str, str]]] = []

        def rule(
            ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
        ) -> bool:
            asked.append((ref.key, uri, dict(variables)))
            return variables.get("id") != "1"

        registry = self.overlapping()
        handlers = RequestHandlers(registry, registry, invoker=Invoker(), visibility=per_uri(rule))
        assert (await handlers.read_resource("test://items/2", USER))["contents"][0][
            "text"
        ] == "item 2"
        assert (await handlers.read_resource("test://items/1", USER))["contents"][0][
            "text"
        ] == "path items/1"
        await handlers.read_resource("test://r", USER)
        assert asked == [
            ("test://items/{id}", "test://items/2", {"id": "2"}),
            ("test://items/{id}", "test://items/1", {"id": "1"}),
            ("test://{+path}", "test://items/1", {"path": "items/1"}),
        ]


class TestClipJson:
    """Error data on its way out: every string clipped, structure kept, depth bounded."""

    def test_strings_anywhere(self) -> None:
        """Strings in dicts and lists are clipped; other values pass through."""
        data = {"method": "m" * 10_000, "items": ["i" * 10_000, 3, None], "k" * 10_000: True}
        clipped = clip_json(data)
        assert len(json.dumps(clipped)) < 2_000
        assert clipped["items"][1:] == [3, None]
        assert "characters elided" in clipped["method"]

    def test_depth(self) -> None:
        """Beyond the depth bound, a structure becomes its clipped rendering."""
        deep: object = "leaf"
        for _ in range(20):
            deep = [deep]
        clipped = clip_json(deep)
        for _ in range(8):
            assert isinstance(clipped, list)
            (clipped,) = clipped
        assert isinstance(clipped, str)  # the rest, rendered
