"""The MCP server: sans-IO request handlers bound to the official ``mcp`` SDK's transports.

:class:`McpServer` serves any registry with the catalogue and resolver roles over stdio or
streamable HTTP (or in memory, via ``mcp.Client(server.lowlevel)``). :class:`RequestHandlers` is
the transport-free core it binds: pure functions from a registry role and request params to MCP
wire dicts, usable and testable without the SDK.

Handler derivation learns the official SDK's ``Context`` and its ``Resolve(...)`` markers (see
:mod:`mcp_core.server._context`) when it first meets one of the SDK's types, so functions written
for the SDK's ``MCPServer`` are served unchanged. Importing this package imports no SDK: the names
bound to it are exported lazily, so a stdio start answers its first requests before the SDK is
imported (ADR 0115).
"""

import sys
import warnings
from typing import TYPE_CHECKING

from mcp_core._lazy import LazyNames
from mcp_core.handlers._injection import register_injection_loader
from mcp_core.server._errors import ErrorReply
from mcp_core.server._middleware import (
    AuditLog,
    AuditRecord,
    CallNext,
    Middleware,
    RateLimit,
    Request,
)
from mcp_core.server._requests import ElementInvoker, RequestHandlers
from mcp_core.server._serving import LOG_FORMAT, log_to_stderr

if TYPE_CHECKING:
    from mcp.server.request_state import RequestStateSecurity

    from mcp_core.server._binding import McpServer, ServableRegistry
    from mcp_core.server._context import Lifespan
    from mcp_core.server._deployed import WorkerStatus
    from mcp_core.server._deployment import Deployment
    from mcp_core.server._events import InMemoryEventStore, SessionEventStore
    from mcp_core.server._gateway import ServerGateway, SessionHook
    from mcp_core.server._host import HostAuthentication
    from mcp_core.server._metrics import ServerMetrics

# Imported on first use (ADR 0112): a server that serves alone over stdio (every plain start) needs
# no deployment (whose module imports the Redis stores), HTTP event store, host authentication or
# metrics.
_LAZY: dict[str, str] = {
    "Deployment": "mcp_core.server._deployment",
    "Lifespan": "mcp_core.server._context",
    "McpServer": "mcp_core.server._binding",
    "RequestStateSecurity": "mcp.server.request_state",
    "ServableRegistry": "mcp_core.server._binding",
    "ServerGateway": "mcp_core.server._gateway",
    "SessionHook": "mcp_core.server._gateway",
    "HostAuthentication": "mcp_core.server._host",
    "InMemoryEventStore": "mcp_core.server._events",
    "ServerMetrics": "mcp_core.server._metrics",
    "SessionEventStore": "mcp_core.server._events",
    "WorkerStatus": "mcp_core.server._deployed",
}
_NAMES = LazyNames(__name__, _LAZY, globals())


def _sdk_rules() -> None:
    from mcp_core.server import _context  # noqa: F401, PLC0415 -- registers the rules


if "mcp" in sys.modules:  # the SDK is here already: its rules cost nothing more
    _sdk_rules()
else:
    register_injection_loader("mcp", _sdk_rules)

__all__ = [
    "LOG_FORMAT",
    "AuditLog",
    "AuditRecord",
    "CallNext",
    "Deployment",
    "ElementInvoker",
    "ErrorReply",
    "HostAuthentication",
    "InMemoryEventStore",
    "Lifespan",
    "McpServer",
    "Middleware",
    "RateLimit",
    "Request",
    "RequestHandlers",
    "RequestStateSecurity",
    "ServableRegistry",
    "ServerGateway",
    "ServerMetrics",
    "SessionEventStore",
    "SessionHook",
    "WorkerStatus",
    "log_to_stderr",
]


def __getattr__(name: str) -> object:
    # WireError was renamed ErrorReply: it is a value the server sends, not an exception.
    if name == "WireError":
        warnings.warn(
            "mcp_core.server.WireError is now mcp_core.server.ErrorReply (it is a reply, not an "
            "exception); the old name goes away in the next minor version",
            DeprecationWarning,
            stacklevel=2,
        )
        return ErrorReply
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
