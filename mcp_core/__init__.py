"""mcp-core: a statically typed, protocol-first core for MCP servers.

The names below are the everyday public API; each lives in the layer named in its module
(``mcp_core.elements``, ``mcp_core.sources``, ``mcp_core.registry``...). They are imported on
first use, so ``import mcp_core.elements`` stays free of the server stack and the MCP SDK.
"""

from __future__ import annotations

from mcp_core._lazy import LazyNames  # imports nothing itself

# Not typing.TYPE_CHECKING, and importlib only once a name is asked for: every import here costs
# the console script (mcp_core.cli:main) time before it can handle Ctrl-C (mcp_core.cli._main);
# type checkers read this name.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from mcp_core._version import __version__
    from mcp_core.app import App
    from mcp_core.elements import (
        Element,
        ElementCollection,
        ElementKind,
        ElementRef,
        HandlerRef,
        Prompt,
        PromptArgument,
        Resource,
        ResourceTemplate,
        Tool,
    )
    from mcp_core.errors import (
        McpCoreError,
        PromptError,
        ResourceError,
        ResourceNotFoundError,
        SourceUnavailableError,
        ToolError,
    )
    from mcp_core.handlers import (
        Audio,
        ClientGateway,
        EmbeddedResource,
        Image,
        Message,
        RequestedUri,
        ResourceLink,
        Text,
        ToolResult,
        completion,
        prompt,
        resource,
        resource_template,
        tool,
    )
    from mcp_core.registry import Priority, Registry
    from mcp_core.sources import DiscoverySource, FunctionSource, StaticSource
    from mcp_core.visibility import SessionInfo

_EXPORTS: dict[str, str] = {
    "App": "mcp_core.app",
    **dict.fromkeys(
        (
            "Element",
            "ElementCollection",
            "ElementKind",
            "ElementRef",
            "HandlerRef",
            "Prompt",
            "PromptArgument",
            "Resource",
            "ResourceTemplate",
            "Tool",
        ),
        "mcp_core.elements",
    ),
    **dict.fromkeys(
        (
            "McpCoreError",
            "PromptError",
            "ResourceError",
            "ResourceNotFoundError",
            "SourceUnavailableError",
            "ToolError",
        ),
        "mcp_core.errors",
    ),
    **dict.fromkeys(
        (
            "Audio",
            "ClientGateway",
            "EmbeddedResource",
            "Image",
            "Message",
            "RequestedUri",
            "ResourceLink",
            "Text",
            "ToolResult",
            "completion",
            "prompt",
            "resource",
            "resource_template",
            "tool",
        ),
        "mcp_core.handlers",
    ),
    **dict.fromkeys(("Priority", "Registry"), "mcp_core.registry"),
    **dict.fromkeys(("DiscoverySource", "FunctionSource", "StaticSource"), "mcp_core.sources"),
    "SessionInfo": "mcp_core.visibility",
    # Read from the package metadata on first use: importlib.metadata is slow to import.
    "__version__": "mcp_core._version",
}

__all__ = [
    "App",
    "Audio",
    "ClientGateway",
    "DiscoverySource",
    "Element",
    "ElementCollection",
    "ElementKind",
    "ElementRef",
    "EmbeddedResource",
    "FunctionSource",
    "HandlerRef",
    "Image",
    "McpCoreError",
    "Message",
    "Priority",
    "Prompt",
    "PromptArgument",
    "PromptError",
    "Registry",
    "RequestedUri",
    "Resource",
    "ResourceError",
    "ResourceLink",
    "ResourceNotFoundError",
    "ResourceTemplate",
    "SessionInfo",
    "SourceUnavailableError",
    "StaticSource",
    "Text",
    "Tool",
    "ToolError",
    "ToolResult",
    "__version__",
    "completion",
    "prompt",
    "resource",
    "resource_template",
    "tool",
]


_LAZY = LazyNames(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    return _LAZY.get(name)


def __dir__() -> list[str]:
    return _LAZY.listed()
