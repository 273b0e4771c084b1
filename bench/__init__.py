"""The benchmark harness: mcp-core against the official SDK's MCPServer and fastmcp.

Run it with ``python bench/run.py`` (see ``docs/benchmarks.md``). Each measurement runs in a
fresh worker process (``bench/worker.py``) per library and catalogue size; the orchestrator
(``bench/run.py``) aggregates medians, prints one table, and writes the report and plot.
"""
