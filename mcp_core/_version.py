"""mcp-core's version, read once from the installed package's metadata (the one place it is set)."""

from __future__ import annotations

import importlib.metadata
from typing import Final

__all__ = ["VERSION", "__version__"]


def _installed_version() -> str:
    try:
        return importlib.metadata.version("mcp-core")
    except importlib.metadata.PackageNotFoundError:
        # A source checkout used without installing it: a local version that no release has,
        # so cache keys never collide with an installed one and no client is told a false number.
        return "0+uninstalled"


VERSION: Final = _installed_version()
__version__: Final = VERSION
