"""List changes coalesced into announcements: one per kind, at least a second apart (no SDK).

The server's hub (:mod:`mcp_core.server._hub`) and the stdio prelude
(:mod:`mcp_core.server._prelude`, ADR 0115) announce the registry's changes to their clients
the same way: a burst of writes becomes one ``notifications/*/list_changed`` per kind, and
announcements are at least :data:`CHANGE_GAP` apart, the last change of a burst always
announced (a backend's storm of changes reaches each client as about one notification per kind
per second).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Final, final

import anyio
import anyio.abc
import anyio.lowlevel

from mcp_core.elements import ElementKind

__all__ = ["CHANGE_GAP", "LIST_CHANGED", "Announcer"]

CHANGE_GAP: Final = 1.0
"""Seconds at least between two list-changed announcements to the clients of one server run."""

LIST_CHANGED: Final = (
    (ElementKind.TOOL, "notifications/tools/list_changed"),
    (ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE, "notifications/resources/list_changed"),
    (ElementKind.PROMPT, "notifications/prompts/list_changed"),
)
"""Each list-changed notification and the kinds whose changes it announces."""


@final
class Announcer:
    """Coalesces the kinds that changed and hands them to ``announce``, at most once a gap.

    Announcements are sent from ``tasks``; :meth:`changed` may be called synchronously (from a
    registry listener).
    """

    __slots__ = ("_announce", "_pending", "_quiet_until", "_tasks")

    def __init__(
        self, tasks: anyio.abc.TaskGroup, announce: Callable[[ElementKind], Awaitable[None]]
    ) -> None:
        self._tasks = tasks
        self._announce = announce
        self._pending = ElementKind.NONE
        self._quiet_until = -math.inf  # (anyio clock) no announcement before then

    def changed(self, kinds: ElementKind) -> None:
        """Note that the lists of ``kinds`` changed; announced from the task group."""
        if not self._pending:
            self._tasks.start_soon(self._flush)
        self._pending |= kinds

    async def _flush(self) -> None:
        await anyio.lowlevel.checkpoint()
        wait = self._quiet_until - anyio.current_time()
        if wait > 0:
            await anyio.sleep(wait)  # changes meanwhile join this announcement
        kinds, self._pending = self._pending, ElementKind.NONE
        self._quiet_until = anyio.current_time() + CHANGE_GAP
        await self._announce(kinds)
