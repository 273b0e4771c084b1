"""examples/everything.py's sampling and elicitation tools with the official client in both eras.

The official conformance suite speaks only the handshake era; these run the same tools with the
client's default mode (2026-07-28: the questions travel in InputRequiredResult rounds) and its
legacy mode (2025-11-25: standalone requests), in memory, over stdio and over HTTP.
"""

from __future__ import annotations

import json

import pytest

from tests.clients import Inbox, ok_text
from tests.e2e.conftest import everything

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_sampling_and_elicitation_in_both_eras(
    transport: str, mode: str, request: pytest.FixtureRequest
) -> None:
    """test_sampling and every elicitation tool get the client's answers in either era."""
    # A user who fills each form in with its defaults, or as ann.
    inbox = Inbox(defaults=True)
    async with inbox.client(everything(transport, request), mode=mode) as connected:
        sampled = await connected.call_tool("test_sampling", {"prompt": "meaning?"})
        elicited = await connected.call_tool("test_elicitation", {"message": "who are you?"})
        defaults = await connected.call_tool("test_elicitation_sep1034_defaults", {})
    assert ok_text(sampled) == "LLM response: forty-two"
    assert ok_text(elicited) == (
        'User response: action=accept, content={"username": "ann", "email": "ann@example.org"}'
    )
    content = json.loads(ok_text(defaults).partition("content=")[2])
    assert content == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
