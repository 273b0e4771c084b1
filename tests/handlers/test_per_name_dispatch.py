"""Per-name dispatch: a handler learns, through its gateway, which element it is serving."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_core.elements import Element, HandlerRef, Prompt, Tool
from mcp_core.handlers import ClientGateway, Invoker
from mcp_core.handlers._current_element import serving_element
from mcp_core.handlers.testing import ElicitUrlCall, RecordingGateway


class Operations:
    """One object behind several tools and a prompt; answers with what it was called as."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        """Run the tool named by the element."""
        element = gateway.element
        return f"{element.ref.key}: {element.definition.description}"

    def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> str:
        """Render the prompt named by the element (a sync method: run in a worker thread)."""
        return f"prompt {gateway.element.ref.key}"


class Services:
    """A container holding the one Operations service."""

    def __init__(self) -> None:
        self.gets = 0

    def has(self, id: str) -> bool:  # noqa: A002 -- the container protocol
        return id == "ops"

    def get(self, id: str) -> object:  # noqa: A002 -- the container protocol
        self.gets += 1
        return Operations()


def tool(name: str, description: str) -> Element:
    """A tool served by the container's 'ops' service."""
    definition = Tool(name=name, description=description, input_schema={"type": "object"})
    return Element(definition=definition, handler=HandlerRef("ops"))


class TestPerNameDispatch:
    """gateway.element during a call; a clear error outside one."""

    async def test_one_service_serves_many_tools(self) -> None:
        """Two tools over one container id: one service, each call told which tool it is."""
        services = Services()
        invoker = Invoker(container=services)
        gateway = RecordingGateway()
        listed = await invoker.call_tool(tool("list", "List."), {}, gateway)
        got = await invoker.call_tool(tool("get", "Get one."), {}, gateway)
        assert listed["content"] == [{"type": "text", "text": "list: List."}]
        assert got["content"] == [{"type": "text", "text": "get: Get one."}]
        assert services.gets == 1

    async def test_sync_handlers_see_it_in_their_thread(self) -> None:
        """A sync prompt handler, run in a worker thread, reads gateway.element too."""
        element = Element(definition=Prompt(name="brief"), handler=Operations())
        result = await Invoker().get_prompt(element, {}, RecordingGateway())
        assert result["messages"][0]["content"]["text"] == "prompt brief"

    def test_outside_a_call_it_is_a_lookup_error(self) -> None:
        """Asking outside a handler call says where it is known."""
        with pytest.raises(LookupError, match="only while the Invoker runs a handler"):
            serving_element()
        with pytest.raises(LookupError):
            _ = RecordingGateway().element

    def test_a_recording_gateway_can_be_given_the_element(self) -> None:
        """Tests that call a handler directly say what it serves."""
        element = tool("list", "List.")
        assert RecordingGateway(element=element).element is element

    async def test_recording_gateway_records_url_elicitations(self) -> None:
        """elicit_url is recorded and answered like a form elicitation."""
        gateway = RecordingGateway(elicit_result={"action": "accept"})
        answer = await gateway.elicit_url("Sign in", "https://example.com", elicitation_id="e1")
        assert answer == {"action": "accept"}
        assert gateway.elicitations == [ElicitUrlCall("Sign in", "https://example.com", "e1")]
