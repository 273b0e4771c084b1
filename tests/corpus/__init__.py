"""The corpus of real third-party MCP servers (installed from PyPI by scripts/corpus.py)."""
