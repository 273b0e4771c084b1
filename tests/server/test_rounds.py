"""Asking the client on 2026-07-28, round by round, and what a hostile client cannot do to it.

The official client drives the rounds by hand here (``allow_input_required=True``), so each test
sees the ``InputRequiredResult`` itself and can send back whatever an attacker would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.from_thread
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.elements import ElementCollection
from mcp_core.errors import ClientCapabilityError
from mcp_core.handlers import ClientGateway, tool_from_function
from mcp_core.registry import Registry
from mcp_core.server import Deployment, McpServer
from mcp_core.server._errors import InvalidRequestStateError, wire_error
from mcp_core.server._rounds import MAX_REMEMBERED_NOTIFICATIONS, InputRounds, RoundLedger
from mcp_core.sources import StaticSource
from mcp_core.stores import MemoryChangeBus, MemoryStore
from mcp_core.visibility import SessionInfo
from tests.clients import Inbox

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

QUESTION = {"role": "user", "content": {"type": "text", "text": "pick a number"}}
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


async def two_questions(topic: str, gateway: ClientGateway) -> str:
    """Sample, then elicit a confirmation."""
    sampled = await gateway.sample([QUESTION], max_tokens=5)
    confirmed = await gateway.elicit(f"Confirm {topic}?", FORM)
    return f"{sampled['content']['text']} {confirmed['action']} {confirmed.get('content')}"


async def concurrent_questions(gateway: ClientGateway) -> str:
    """Sample and list roots at the same time."""
    answers: dict[str, Any] = {}

    async def sample() -> None:
        answers["sampled"] = (await gateway.sample([QUESTION], max_tokens=5))["content"]["text"]

    async def roots() -> None:
        answers["roots"] = [root["uri"] for root in await gateway.list_roots()]

    async with anyio.create_task_group() as group:
        group.start_soon(sample)
        group.start_soon(roots)
    return f"{answers['sampled']} {answers['roots']}"


def sync_asker(gateway: ClientGateway) -> str:
    """A sync handler (a worker thread) that asks through the event loop."""
    answer = anyio.from_thread.run(gateway.elicit, "Sure?", FORM)
    return f"{gateway.element.ref.key}: {answer['action']}"


def server(**options: Any) -> McpServer:
    """A server with the asking tools."""
    tools = [
        tool_from_function(two_questions),
        tool_from_function(concurrent_questions),
        tool_from_function(sync_asker),
    ]
    return McpServer(Registry([(StaticSource(ElementCollection(tools)), 0)]), **options)


def connect(target: McpServer, **options: Any) -> Client:
    """The official in-memory client, in its default (2026-07-28) mode unless told otherwise.

    Its model always answers seven, its user confirms, and it has one root.
    """
    inbox = Inbox(reply=lambda prompt: "7", form={"ok": True}, roots=["file:///w"])
    return inbox.client(target.lowlevel, **options)


async def call(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    responses: types.InputResponses | None = None,
    state: str | None = None,
) -> types.CallToolResult | types.InputRequiredResult:
    """One round of tools/call, returning an InputRequiredResult instead of following it."""
    result = await client.session.call_tool(
        name,
        arguments,
        input_responses=responses,
        request_state=state,
        allow_input_required=True,
    )
    assert isinstance(result, types.CallToolResult | types.InputRequiredResult)
    return result


async def two(
    client: Client,
    *,
    responses: types.InputResponses | None = None,
    state: str | None = None,
    topic: str = "x",
) -> types.CallToolResult | types.InputRequiredResult:
    """One round of ``two_questions`` about ``topic``."""
    return await call(client, "two_questions", {"topic": topic}, responses=responses, state=state)


def asked(result: object) -> types.InputRequiredResult:
    """``result`` as an InputRequiredResult."""
    assert isinstance(result, types.InputRequiredResult), result
    assert result.input_requests
    assert result.request_state is not None
    return result


SEVEN = types.CreateMessageResult(
    role="assistant", content=types.TextContent(type="text", text="7"), model="m"
)
YES = types.ElicitResult(action="accept", content={"ok": True})


def text_of(result: object) -> str:
    """The text of a final tool result."""
    assert isinstance(result, types.CallToolResult), result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


class TestRounds:
    """What runs again, what is remembered."""

    async def test_one_question_per_round_then_the_result(self) -> None:
        """Each round asks the next open question; answers are replayed from the sealed state."""
        async with connect(server()) as client:
            first = asked(await two(client))
            [(sample_key, request)] = first.input_requests.items()  # type: ignore[union-attr]  # checked
            assert isinstance(request, types.CreateMessageRequest)
            assert first.request_state.startswith("v1.")  # type: ignore[union-attr]  # sealed, opaque
            second = asked(
                await two(client, responses={sample_key: SEVEN}, state=first.request_state)
            )
            [(elicit_key, request)] = second.input_requests.items()  # type: ignore[union-attr]  # checked
            assert isinstance(request, types.ElicitRequest)
            done = await two(client, responses={elicit_key: YES}, state=second.request_state)
        assert text_of(done) == "7 accept {'ok': True}"

    async def test_questions_asked_together_travel_together(self) -> None:
        """Two questions asked concurrently are one round."""
        async with connect(server()) as client:
            first = asked(await call(client, "concurrent_questions"))
            assert first.input_requests is not None
            assert len(first.input_requests) == 2
            result = await client.call_tool("concurrent_questions")
        assert text_of(result) == "7 ['file:///w']"

    async def test_sync_handlers_ask_from_their_thread(self) -> None:
        """A sync handler is stopped at its question too, and sees gateway.element in its thread."""
        async with connect(server()) as client:
            modern = await client.call_tool("sync_asker")
        async with connect(server(), mode="legacy") as client:
            legacy = await client.call_tool("sync_asker")
        assert text_of(modern) == text_of(legacy) == "sync_asker: accept"


class TestHostileClients:
    """Forged, replayed, skipped or misshapen answers are refused or not taken."""

    async def test_forged_or_tampered_state_is_refused(self) -> None:
        """State the server did not seal, or altered by one character, is -32602."""
        async with connect(server()) as client:
            first = asked(await two(client))
            assert first.request_state is not None
            flipped = first.request_state[:-2] + ("A" if first.request_state[-2] != "A" else "B")
            for state in ("{}", "v1.forged", flipped):
                with pytest.raises(MCPError) as refused:
                    await two(client, state=state)
                assert refused.value.code == -32602

    async def test_state_is_bound_to_the_arguments(self) -> None:
        """A state minted for one call cannot answer a call with other arguments."""
        async with connect(server()) as client:
            first = asked(await two(client))
            [key] = first.input_requests or {}
            with pytest.raises(MCPError) as refused:
                await two(client, responses={key: SEVEN}, state=first.request_state, topic="y")
        assert refused.value.code == -32602

    async def test_a_question_cannot_be_skipped_by_answering_ahead(self) -> None:
        """An answer to a question not yet asked is not taken: the question is asked anyway."""
        async with connect(server()) as client:
            # Learn the key of the second question (it is derived from the question's text).
            first = asked(await two(client))
            [sample_key] = first.input_requests or {}
            second = asked(
                await two(client, responses={sample_key: SEVEN}, state=first.request_state)
            )
            [elicit_key] = second.input_requests or {}
            # A fresh call answering both at once, the second never having been asked.
            fresh = asked(await two(client))
            forged = types.ElicitResult(action="decline")
            again = asked(
                await two(
                    client,
                    responses={sample_key: SEVEN, elicit_key: forged},
                    state=fresh.request_state,
                )
            )
            assert list(again.input_requests or {}) == [elicit_key]
            done = await two(client, responses={elicit_key: YES}, state=again.request_state)
        assert text_of(done) == "7 accept {'ok': True}"

    async def test_state_of_another_caller_is_refused(self) -> None:
        """With identities from the session hook, one caller's state is refused for another."""

        def by_client_name(info: SessionInfo) -> SessionInfo:
            name = info.attributes.get("client_name")
            return SessionInfo(principal=str(name), attributes=info.attributes)

        target = server(session_hook=by_client_name)
        alice = types.Implementation(name="alice", version="1")
        mallory = types.Implementation(name="mallory", version="1")
        async with connect(target, client_info=alice) as client:
            first = asked(await two(client))
        [key] = first.input_requests or {}
        async with connect(target, client_info=mallory) as client:
            with pytest.raises(MCPError) as refused:
                await two(client, responses={key: SEVEN}, state=first.request_state)
        assert refused.value.code == -32602
        assert "another caller" in refused.value.message

    async def test_an_answer_of_the_wrong_shape_is_refused(self) -> None:
        """An elicitation result sent for a sampling question is -32602, naming the question."""
        async with connect(server()) as client:
            first = asked(await two(client))
            [key] = first.input_requests or {}
            with pytest.raises(MCPError) as refused:
                await two(client, responses={key: YES}, state=first.request_state)
        assert refused.value.code == -32602
        assert "sampling/createMessage" in refused.value.message


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_missing_capability_is_its_own_error(mode: str) -> None:
    """A client that cannot sample gets -32021 with the capability it lacks, in both eras."""
    confirms = Inbox(form={"ok": True}).elicitation  # a user, and no model
    async with Client(server().lowlevel, mode=mode, elicitation_callback=confirms) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("two_questions", {"topic": "x"})
    assert refused.value.code == -32021
    data: Mapping[str, Any] = refused.value.error.data
    assert data == {"requiredCapabilities": {"sampling": {}}}


def test_wire_errors_of_the_rounds() -> None:
    """Bad state is -32602; a missing capability is -32021 with what the client must declare."""
    state = wire_error(InvalidRequestStateError("requestState was issued to another caller"))
    assert (state.code, state.expected) == (-32602, True)
    missing = wire_error(
        ClientCapabilityError("no sampling", capability="sampling", required={"sampling": {}})
    )
    assert (missing.code, missing.data) == (-32021, {"requiredCapabilities": {"sampling": {}}})


class TestReplayedNotifications:
    """What a re-run handler already said in an earlier round is not said again."""

    async def test_the_kth_identical_notification_is_a_replay_only_if_sent_k_times(self) -> None:
        """Counted per run: two identical logs sent before, a third is new."""
        said = {"method": "notifications/message", "level": "info", "data": "tick"}
        first = InputRounds(owner="o")
        assert [first.replayed(said) for _ in range(2)] == [False, False]
        ledger = RoundLedger()
        await ledger.issue("s1")
        state = json.loads(first.input_required("s1")["requestState"])
        second = await InputRounds.resume(
            owner="o", request_state=json.dumps(state), input_responses={}, ledger=ledger
        )
        assert [second.replayed(said) for _ in range(3)] == [True, True, False]

    async def test_state_without_sent_notifications_replays_nothing(self) -> None:
        """State minted without notifications remembered still resumes: nothing is a replay."""
        ledger = RoundLedger()
        await ledger.issue("s1")
        state = {"v": 2, "id": "s1", "round": 1, "owner": "o", "asked": {}, "answers": {}}
        rounds = await InputRounds.resume(
            owner="o", request_state=json.dumps(state), input_responses={}, ledger=ledger
        )
        assert not rounds.replayed({"method": "notifications/progress", "progress": 1})

    async def test_what_is_remembered_is_bounded(self) -> None:
        """Beyond MAX_REMEMBERED_NOTIFICATIONS distinct notifications, the rest are sent again."""
        first = InputRounds(owner="o")
        for index in range(MAX_REMEMBERED_NOTIFICATIONS + 5):
            first.replayed({"method": "notifications/progress", "progress": index})
        ledger = RoundLedger()
        await ledger.issue("s1")
        state = json.loads(first.input_required("s1")["requestState"])
        assert len(state["sent"]) == MAX_REMEMBERED_NOTIFICATIONS
        second = await InputRounds.resume(
            owner="o", request_state=json.dumps(state), input_responses={}, ledger=ledger
        )
        assert second.replayed({"method": "notifications/progress", "progress": 0})
        last = MAX_REMEMBERED_NOTIFICATIONS + 4
        assert not second.replayed({"method": "notifications/progress", "progress": last})


class TestTheOwnerIsDigestedOnlyWhenNeeded:
    """A request that presents no state and asks nothing never computes its caller's digest."""

    async def test_a_plain_request_never_asks_for_the_owner(self) -> None:
        """No state presented, no question asked: the owner function is not called."""
        asked_for: list[str] = []

        def owner() -> str:
            asked_for.append("o")
            return "o"

        rounds = await InputRounds.resume(
            owner=owner, request_state=None, input_responses=None, ledger=RoundLedger()
        )

        async def work() -> dict[str, Any]:
            return {"content": []}

        assert await rounds.run(work, RoundLedger()) == {"content": []}
        assert asked_for == []

    async def test_a_state_is_checked_and_issued_against_the_owner(self) -> None:
        """Issuing a state digests the owner once; a state of another owner is refused."""
        asked_for: list[str] = []

        def owner() -> str:
            asked_for.append("o")
            return "o"

        first = InputRounds(owner=owner)
        ledger = RoundLedger()
        await ledger.issue("s1")
        state = first.input_required("s1")["requestState"]
        first.input_required("s1")
        assert asked_for == ["o"]
        with pytest.raises(InvalidRequestStateError, match="another caller"):
            await InputRounds.resume(
                owner=lambda: "p", request_state=state, input_responses={}, ledger=ledger
            )


PAID: list[str] = []


async def pay(amount: int, gateway: ClientGateway) -> str:
    """Ask the user to confirm, then pay (recorded in PAID)."""
    confirmed = await gateway.elicit(f"Pay {amount}?", FORM)
    if confirmed["action"] != "accept":
        return "not paid"
    PAID.append(f"paid {amount}")
    return f"paid {amount}"


async def nagging(gateway: ClientGateway) -> str:
    """Ask the same question again and again (a new round each time), never done."""
    while True:
        await gateway.elicit("Again?", FORM)


def paying_server(**options: Any) -> McpServer:
    """A server with the paying and the nagging tools."""
    tools = [tool_from_function(pay), tool_from_function(nagging)]
    return McpServer(Registry([(StaticSource(ElementCollection(tools)), 0)]), **options)


class TestSingleUseState:
    """Attacker: a client replaying a round (the final one: a paid action) or asking forever."""

    async def test_a_replayed_final_round_is_refused(self) -> None:
        """The final round's state pays once; each replay of it is -32602 and pays nothing.

        Before: replaying the final round repeated the payment (8 times from one consent).
        """
        PAID.clear()
        async with connect(paying_server()) as client:
            first = asked(await call(client, "pay", {"amount": 5}))
            [key] = first.input_requests or {}
            done = await call(
                client, "pay", {"amount": 5}, responses={key: YES}, state=first.request_state
            )
            assert text_of(done) == "paid 5"
            for _ in range(8):
                with pytest.raises(MCPError) as refused:
                    await call(
                        client,
                        "pay",
                        {"amount": 5},
                        responses={key: YES},
                        state=first.request_state,
                    )
                assert refused.value.code == -32602
                assert "used already" in refused.value.message
        assert PAID == ["paid 5"]

    async def test_state_is_single_use_across_workers(self) -> None:
        """With a deployment, a state used on one worker is refused on every other."""
        PAID.clear()
        store, bus = MemoryStore(), MemoryChangeBus()
        secret = b"s" * 32
        one = paying_server(deployment=Deployment(worker="w1", secret=secret, store=store, bus=bus))
        two_ = paying_server(
            deployment=Deployment(worker="w2", secret=secret, store=store, bus=bus)
        )
        async with connect(one) as first_worker, connect(two_) as second_worker:
            first = asked(await call(first_worker, "pay", {"amount": 7}))
            [key] = first.input_requests or {}
            done = await call(
                first_worker, "pay", {"amount": 7}, responses={key: YES}, state=first.request_state
            )
            with pytest.raises(MCPError) as refused:
                await call(
                    second_worker,
                    "pay",
                    {"amount": 7},
                    responses={key: YES},
                    state=first.request_state,
                )
        assert text_of(done) == "paid 7"
        assert "used already" in refused.value.message
        assert PAID == ["paid 7"]

    async def test_rounds_are_capped_by_the_server(self) -> None:
        """A request asks at most max_input_rounds rounds; the next ends it with an error."""
        async with connect(paying_server(max_input_rounds=3)) as client:
            result = asked(await call(client, "nagging"))
            for _ in range(2):
                [key] = result.input_requests or {}
                result = asked(
                    await call(client, "nagging", responses={key: YES}, state=result.request_state)
                )
            [key] = result.input_requests or {}
            with pytest.raises(MCPError) as refused:
                await call(client, "nagging", responses={key: YES}, state=result.request_state)
        assert refused.value.code == -32602
        assert "asked the client 3 rounds" in refused.value.message

    async def test_the_official_client_following_rounds_is_unaffected(self) -> None:
        """A client that follows the rounds (each state once) gets its result, under the cap."""
        PAID.clear()
        async with connect(paying_server()) as client:
            result = await client.call_tool("pay", {"amount": 3})
        assert text_of(result) == "paid 3"

    def test_max_input_rounds_is_checked(self) -> None:
        """A cap that is not a positive number of rounds is refused, naming it."""
        with pytest.raises(ValueError, match="max_input_rounds"):
            paying_server(max_input_rounds=0)
