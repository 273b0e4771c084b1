"""The CLI on an SDK MCPServer target and on an aggregated app: where each element comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_core.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class TestAdoptedTargets:
    """inspect shows the source of every element."""

    def test_sdk_mcpserver_target(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An SDK MCPServer module is inspected through MCPServerSource, its elements intact."""
        assert main(["inspect", str(EXAMPLES / "adopt" / "everything_sdk.py"), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        tools = {tool["name"]: tool for tool in report["elements"]["Tools"]}
        assert report["server"] == {"name": "sdk-everything", "version": "1.0.0"}
        assert tools["test_sampling"]["x-mcp-core-source"] == "MCPServerSource('sdk-everything')"
        assert tools["test_sampling"]["inputSchema"]["required"] == ["prompt"]
        assert "ctx" not in tools["test_tool_with_logging"]["inputSchema"].get("properties", {})
        assert report["diagnostics"] == []
        assert report["problems"] == []

    def test_text_report_names_sources(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The text report puts each element's source after its description."""
        assert main(["inspect", str(EXAMPLES / "adopt" / "everything_adopted.py")]) == 0
        out = capsys.readouterr().out
        assert (
            "  test_simple_text - Return a simple text response.  "
            "[MCPServerSource('sdk-everything')]"
        ) in out
