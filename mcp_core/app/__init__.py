"""The front door for simple apps: :class:`App` — decorators, sources, visibility, run."""

from mcp_core.app._app import App

__all__ = ["App"]
