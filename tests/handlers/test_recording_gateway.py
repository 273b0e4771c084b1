"""RecordingGateway: the public ClientGateway test double."""

from __future__ import annotations

from typing import Any

from mcp_core.elements import Tool
from mcp_core.handlers import ClientGateway, Invoker, tool_from_function
from mcp_core.handlers.testing import (
    ElicitCall,
    ListRootsCall,
    LogCall,
    ProgressCall,
    RecordingGateway,
    SampleCall,
)
from mcp_core.visibility import SessionInfo


class TestRecordingGateway:
    """Records every call in order and answers from its script."""

    def test_conforms_to_the_protocol(self) -> None:
        """It is usable wherever a ClientGateway is expected."""
        gateway: ClientGateway = RecordingGateway(
            session=SessionInfo(session_id="s1"), request_id="r"
        )
        assert gateway.session.session_id == "s1"
        assert gateway.request_id == "r"

    async def test_records_in_order(self) -> None:
        """Each method is recorded as a typed call, in order."""
        gateway = RecordingGateway(roots=[{"uri": "file:///w"}])
        await gateway.log("info", {"k": 1}, logger="app")
        await gateway.progress(1, 2, "half")
        question = {"role": "user", "content": {"type": "text", "text": "q"}}
        answer = await gateway.sample([question], max_tokens=5, temperature=0.1)
        elicited = await gateway.elicit("Name?", {"type": "object"})
        roots = await gateway.list_roots()
        assert gateway.calls == [
            LogCall("info", {"k": 1}, "app"),
            ProgressCall(1, 2, "half"),
            SampleCall((question,), 5, {"temperature": 0.1}),
            ElicitCall("Name?", {"type": "object"}),
            ListRootsCall(),
        ]
        assert answer["role"] == "assistant"
        assert elicited == {"action": "decline"}
        assert list(roots) == [{"uri": "file:///w"}]
        assert gateway.logs == [LogCall("info", {"k": 1}, "app")]
        assert gateway.progress_updates == [ProgressCall(1, 2, "half")]

    async def test_scripted_answers(self) -> None:
        """Canned answers may be mappings or functions of the call."""
        gateway = RecordingGateway(
            sample_result=lambda call: {
                "role": "assistant",
                "content": {"type": "text", "text": f"{call.max_tokens}"},
            },
            elicit_result={"action": "accept", "content": {"name": "Ada"}},
        )
        assert (await gateway.sample([], max_tokens=7))["content"]["text"] == "7"
        assert (await gateway.elicit("?", {}))["content"] == {"name": "Ada"}

    async def test_drives_a_tool_through_the_invoker(self) -> None:
        """A tool that samples and elicits is tested without a client."""

        async def ask(question: str, gateway: ClientGateway) -> str:
            message = {"role": "user", "content": {"type": "text", "text": question}}
            reply = await gateway.sample([message], max_tokens=100)
            confirm = await gateway.elicit(
                "Send it?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            )
            return f"{reply['content']['text']} ({confirm['action']})"

        gateway = RecordingGateway(
            sample_result={
                "role": "assistant",
                "content": {"type": "text", "text": "42"},
                "model": "m",
            },
            elicit_result={"action": "accept", "content": {"ok": True}},
        )
        element = tool_from_function(ask)
        assert isinstance(element.definition, Tool)
        result: dict[str, Any] = await Invoker().call_tool(
            element, {"question": "meaning?"}, gateway
        )
        assert result["content"] == [{"type": "text", "text": "42 (accept)"}]
        assert [s.max_tokens for s in gateway.samples] == [100]
        assert [e.message for e in gateway.elicitations] == ["Send it?"]
