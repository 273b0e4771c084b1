"""export_report: a long job that reports its progress and logs each batch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_core import ClientGateway
from mcp_core.elements import Tool
from toolbox_plugins.base import ToolPlugin

BATCHES: Final = 3


class ExportReport(ToolPlugin):
    """Export a report in batches, with progress."""

    definition = Tool(
        name="export_report",
        description="Export the sales report, in three batches.",
        input_schema={
            "type": "object",
            "properties": {"rows": {"type": "integer", "minimum": 1, "maximum": 10_000}},
            "required": ["rows"],
            "additionalProperties": False,
        },
    )

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Export ``rows`` rows in three batches, reporting progress after each."""
        rows: int = arguments["rows"]
        for batch in range(1, BATCHES + 1):
            await gateway.log("info", f"exported batch {batch} of {BATCHES}", logger="export")
            await gateway.progress(batch, BATCHES, f"batch {batch} of {BATCHES}")
        return f"exported {rows} rows in {BATCHES} batches"
