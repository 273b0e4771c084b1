"""The MCP server: sans-IO request handlers bound to the official ``mcp`` SDK's transports.

:class:`McpServer` serves any registry with the catalogue and resolver roles over stdio or
streamable HTTP (or in memory, via ``mcp.Client(server.lowlevel)``). :class:`RequestHandlers` is
the transport-free core it binds: pure functions from a registry role and request params to MCP
wire dicts, usable and testable without the SDK.

Importing this package also teaches handler derivation the official SDK's ``Context`` and its
``Resolve(...)`` markers (see :mod:`mcp_core.server._context`), so functions written for the SDK's
``MCPServer`` are served unchanged.
"""

from mcp.server.request_state import RequestStateSecurity

from mcp_core.server._binding import McpServer, ServableRegistry
from mcp_core.server._context import (
    GatewayContext,
    GatewaySession,
    Lifespan,
    sample_through,
    sdk_context,
)
from mcp_core.server._deployment import ENVIRONMENT, Deployment
from mcp_core.server._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    InvalidCursorError,
    WireError,
    wire_error,
)
from mcp_core.server._events import InMemoryEventStore, SessionEventStore
from mcp_core.server._gateway import ServerGateway, SessionHook
from mcp_core.server._host import HostAuthentication
from mcp_core.server._metrics import ServerMetrics
from mcp_core.server._middleware import (
    AuditLog,
    AuditRecord,
    CallNext,
    Middleware,
    RateLimit,
    Request,
)
from mcp_core.server._paging import DEFAULT_PAGE_SIZE, CursorCodec
from mcp_core.server._requests import ElementInvoker, RequestHandlers
from mcp_core.server._serving import LOG_FORMAT, log_to_stderr
from mcp_core.server._session_link import SessionLink

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "ENVIRONMENT",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "LOG_FORMAT",
    "RESOURCE_NOT_FOUND",
    "AuditLog",
    "AuditRecord",
    "CallNext",
    "CursorCodec",
    "Deployment",
    "ElementInvoker",
    "GatewayContext",
    "GatewaySession",
    "HostAuthentication",
    "InMemoryEventStore",
    "InvalidCursorError",
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
    "SessionLink",
    "WireError",
    "log_to_stderr",
    "sample_through",
    "sdk_context",
    "wire_error",
]
