"""Crash containment: which exceptions a call may contain, and which must escape."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from mcp_core.handlers import escapes


class Custom(BaseException):
    """A BaseException subclass of the kind a library may raise."""


class TestEscapes:
    """Cancellation, KeyboardInterrupt and GeneratorExit escape; everything else is contained."""

    @pytest.mark.parametrize(
        "exc",
        [ValueError("x"), SystemExit(2), Custom("x"), BaseExceptionGroup("g", [SystemExit(1)])],
    )
    def test_failures_are_contained(self, exc: BaseException) -> None:
        """Exceptions, SystemExit, custom BaseExceptions and groups of them fail only the call."""
        assert not escapes(exc)

    @pytest.mark.parametrize(
        "exc",
        [
            asyncio.CancelledError(),
            KeyboardInterrupt(),
            GeneratorExit(),
            BaseExceptionGroup("g", [ValueError("x"), KeyboardInterrupt()]),
        ],
    )
    def test_signals_escape(self, exc: BaseException) -> None:
        """Cancellation, Ctrl-C, a closing generator (alone or in a group) propagate."""
        assert escapes(exc)

    async def test_the_running_librarys_cancellation_escapes(self) -> None:
        """Inside an event loop, the async library's own cancellation class escapes."""
        assert escapes(anyio.get_cancelled_exc_class()())
