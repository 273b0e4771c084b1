"""The top-level package: curated, lazily imported public names."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mcp_core


class TestPublicApi:
    """mcp_core re-exports the everyday names."""

    @pytest.mark.parametrize("name", [n for n in mcp_core.__all__ if n != "__version__"])
    def test_every_exported_name_resolves(self, name: str) -> None:
        """Each name in __all__ resolves to the object of the layer that defines it."""
        value = getattr(mcp_core, name)
        assert value.__module__.startswith("mcp_core.")

    def test_unknown_name_is_an_attribute_error(self) -> None:
        """A typo names itself."""
        with pytest.raises(AttributeError, match="'nope'"):
            _ = mcp_core.nope

    def test_value_layers_do_not_import_the_sdk(self) -> None:
        """Importing the sans-IO layers loads neither the server layer nor the MCP SDK."""
        probe = (
            "import sys, mcp_core, mcp_core.registry, mcp_core.sources, mcp_core.handlers;"
            "print('mcp' in sys.modules, 'mcp_core.server' in sys.modules)"
        )
        out = subprocess.run(  # noqa: S603 -- our own interpreter with a fixed program
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == ["False", "False"]


def test_wire_error_is_a_deprecated_alias_of_error_reply() -> None:
    """The old name of the server's error reply still resolves, with a DeprecationWarning."""
    import mcp_core.server

    with pytest.warns(DeprecationWarning, match="ErrorReply"):
        old = mcp_core.server.WireError
    assert old is mcp_core.server.ErrorReply
