"""The SDK's low-level server as mcp-core builds it: ``serverInfo`` icons, capabilities trimmed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, final

import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server

from mcp_core.elements import Icon
from mcp_core.elements._definitions import WireModel, own_value
from mcp_core.server._hub import Hub

__all__ = ["LowLevelServer", "server_icons"]


def server_icons(
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None,
) -> list[types.Icon] | None:
    """``serverInfo.icons`` as the SDK takes them, from mcp-core's, the SDK's or wire icons.

    Raises:
        TypeError: an icon is none of these (the message names which).
    """
    if icons is None:
        return None
    if isinstance(icons, str | bytes | Mapping):
        raise TypeError(f"icons must be a list of Icon values, got {type(icons).__name__}")
    return [
        types.Icon.model_validate(own_value(Icon, icon, parameter=f"icons[{index}]").to_wire())
        for index, icon in enumerate(icons)
    ]


@final
class LowLevelServer(Server[Hub]):
    """The SDK's low-level server with capabilities derived from what the registry can hold."""

    def __init__(
        self,
        name: str,
        *,
        capabilities: Callable[[types.ServerCapabilities], types.ServerCapabilities],
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        self._trim = capabilities

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's capabilities for the registered handlers, trimmed to the registry's kinds."""
        capabilities = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        return self._trim(capabilities)
