"""mcp-core's version, read once from the installed package's metadata (the one place it is set)."""

from __future__ import annotations

import importlib.metadata
from typing import Final

__all__ = ["DISTRIBUTION", "VERSION", "__version__"]

DISTRIBUTION: Final = "mcp-core-server"
"""The name mcp-core is installed under (``pip install mcp-core-server``; ADR 0063): ``mcp-core``
on PyPI is an unrelated project. The import package is ``mcp_core``, the command ``mcp-core``."""


def _installed_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        # A source checkout used without installing it: a local version that no release has,
        # so cache keys never collide with an installed one and no client is told a false number.
        return "0+uninstalled"


VERSION: Final = _installed_version()
__version__: Final = VERSION
