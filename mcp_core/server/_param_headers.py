"""``Mcp-Param-*`` header validation (2026-07-28, streamable HTTP) after per-name resolution.

A 2026-07-28 client mirrors the arguments a tool's input schema marks with ``x-mcp-header`` into
``Mcp-Param-*`` request headers, so intermediaries can route on them; the server must refuse a
call whose headers and body disagree (``HEADER_MISMATCH``). The SDK checks that before dispatch,
taking the tool's input schema from ``Server.get_tool_input_schema`` (synchronous, and asked
before anyone knows who is calling) or, when that is unset, by running the server's own
``tools/list`` handler page by page until the tool shows up: on every call with arguments, a
full catalogue load and up to a whole listing — what per-name resolution exists to avoid (a
10,000-operation API built all its tools on its first call).

So the server tells the SDK it has nothing to check before dispatch (:func:`no_schema_yet`), and
checks the headers itself once the tool is resolved by name and found visible to the caller,
before it runs (:func:`param_header_check`). The refusal is then a JSON-RPC ``HEADER_MISMATCH``
error rather than an HTTP 400, which the official client handles the same way (it lists the
tools again and resends once); in exchange a hidden tool stays indistinguishable from a missing
one. A call without ``Mcp-Param-*`` headers needs no check: nothing an intermediary could have
routed on can disagree with its body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PARAM_HEADER_PREFIX, validate_mcp_param_headers
from mcp_types import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_core.elements import Element, Tool
from mcp_core.elements._json import thaw

__all__ = ["no_schema_yet", "param_header_check"]

_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()


def no_schema_yet(name: str) -> None:
    """The SDK's ``get_tool_input_schema``: nothing before dispatch (see the module docstring)."""
    del name


def param_header_check(
    protocol_version: str | None,
    headers: Mapping[str, str] | None,
    arguments: Mapping[str, Any] | None,
) -> Callable[[Element], None] | None:
    """What to check on the resolved tool of a call: None when the call carries no ``Mcp-Param-*``."""
    if protocol_version not in MODERN_PROTOCOL_VERSIONS or headers is None:
        return None
    if not any(key.lower().startswith(_PREFIX) for key in headers):
        return None

    def check(element: Element) -> None:
        definition = element.definition
        if not isinstance(definition, Tool):
            return
        schema = thaw(definition.input_schema)
        rejection = validate_mcp_param_headers(schema, arguments or {}, headers)
        if rejection is not None:
            raise MCPError(HEADER_MISMATCH, rejection.message, rejection.data)

    return check
