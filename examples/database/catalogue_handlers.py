"""The handlers a catalogue row may name, by id: the server's code, chosen by the database's data.

A row says *which* handler serves its element (``"text.template"``); only the ids registered
here can be named, so whoever writes the table chooses among this code and cannot make the
server import anything else. Two of the handlers serve many elements each, telling them apart by
``gateway.element`` (its definition's ``_meta`` carries the template).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import anyio
import psycopg

from mcp_core import ClientGateway, Message, ToolError

TIMEOUT: Final = 5.0
"""Seconds any one database round trip of a handler may take."""


@final
class TemplateTool:
    """A tool whose answer is its definition's ``_meta.template``, filled with the arguments."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """Fill the template of the tool being served."""
        meta = gateway.element.definition.meta or {}
        template = meta.get("template")
        if not isinstance(template, str):
            raise ToolError(f"{gateway.element.ref} has no _meta.template; fix its row")
        return template.format_map({key: str(value) for key, value in arguments.items()})


@final
class TemplatePrompt:
    """A prompt whose one user message is its definition's ``_meta.template``, filled."""

    async def get(self, arguments: Mapping[str, str], gateway: ClientGateway) -> object:
        """Fill the template of the prompt being served."""
        meta = gateway.element.definition.meta or {}
        return [Message.user(str(meta.get("template", "")).format_map(dict(arguments)))]


@final
class OrderLookup:
    """Reads an order's status from the shop's own ``orders`` table (needs the database)."""

    __slots__ = ("_dsn",)

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:  # noqa: ARG002 -- ToolHandler's signature
        """The order's status; a tool error saying to retry while the database is unreachable."""
        try:
            with anyio.fail_after(TIMEOUT):
                async with await psycopg.AsyncConnection.connect(
                    self._dsn, connect_timeout=int(TIMEOUT), autocommit=True
                ) as connection:
                    cursor = await connection.execute(
                        "SELECT status FROM orders WHERE id = %s", (arguments["order"],)
                    )
                    row = await cursor.fetchone()
        except (psycopg.OperationalError, TimeoutError) as exc:
            # For the model to read (a tool error, not a crash): no address, and what to do.
            raise ToolError("the orders database is unavailable; retry later") from exc
        if row is None:
            raise ToolError(f"there is no order {arguments['order']}")
        return f"order {arguments['order']}: {row[0]}"


@final
class Handlers:
    """The server's handlers by id: a ``Container`` (``has``/``get``) over a fixed table."""

    __slots__ = ("_by_id",)

    def __init__(self, by_id: Mapping[str, object]) -> None:
        self._by_id = dict(by_id)

    def has(self, id: str) -> bool:  # noqa: A002 -- the Container protocol's vocabulary
        """Whether ``id`` is one of the handlers."""
        return id in self._by_id

    def get(self, id: str) -> object:  # noqa: A002 -- the Container protocol's vocabulary
        """The handler registered as ``id``."""
        return self._by_id[id]
