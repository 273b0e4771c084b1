"""IsolatedSource: a failing source becomes its last good collection plus a diagnostic."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.errors import SourceUnavailableError
from mcp_core.sources import IsolatedSource
from tests.strategies import CountingSource, tool_element

GOOD = ElementCollection([tool_element("a"), tool_element("b")])


class TestIsolatedSource:
    """IsolatedSource keeps serving what last worked, and says why."""

    async def test_keeps_the_last_good_collection(self, caplog: pytest.LogCaptureFixture) -> None:
        """After a success, a failure yields the previous collection, a diagnostic and a warning."""
        inner = CountingSource(GOOD)
        source = IsolatedSource(inner)
        assert await source.provide() == GOOD
        inner.fail_with = RuntimeError("plugin crashed")
        before = time.time()
        with caplog.at_level(logging.WARNING, logger="mcp_core.sources"):
            assert await source.provide() == GOOD
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "failed"
        assert diagnostic.source == "CountingSource(ElementCollection(<2 elements, kinds=tool>))"
        assert diagnostic.message.startswith("RuntimeError: plugin crashed;")
        assert "last good collection (2 elements)" in diagnostic.message
        assert diagnostic.at >= before
        assert "plugin crashed" in caplog.text
        assert caplog.records[0].exc_info is not None  # a failure logs its traceback
        assert source.last_good == GOOD

    async def test_nothing_before_the_first_success(self) -> None:
        """A source that never worked contributes an empty collection."""
        inner = CountingSource(GOOD)
        inner.fail_with = RuntimeError("boom")
        source = IsolatedSource(inner)
        assert await source.provide() == ElementCollection()
        assert "serving nothing until it recovers" in source.diagnostics()[0].message
        assert source.last_good is None

    async def test_unavailable_is_reported_as_unavailable(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """SourceUnavailableError becomes an 'unavailable' diagnostic, logged without a traceback."""
        inner = CountingSource(GOOD)
        inner.fail_with = SourceUnavailableError("database down")
        source = IsolatedSource(inner)
        with caplog.at_level(logging.WARNING, logger="mcp_core.sources"):
            await source.provide()
        assert source.diagnostics()[0].kind == "unavailable"
        assert caplog.records[0].exc_info is None

    async def test_recovery_replaces_last_good_and_clears_diagnostics(self) -> None:
        """The next success is served as is and the failure diagnostic disappears."""
        inner = CountingSource(GOOD)
        inner.fail_with = RuntimeError("boom")
        source = IsolatedSource(inner)
        await source.provide()
        inner.fail_with = None
        inner.collection = ElementCollection([tool_element("c")])
        assert await source.provide() == inner.collection
        assert source.diagnostics() == ()
        assert source.last_good == inner.collection

    async def test_cancellation_is_never_swallowed(self) -> None:
        """Only Exception is isolated: a cancellation reaching provide() propagates."""
        inner = CountingSource(GOOD)
        inner.fail_with = asyncio.CancelledError()  # type: ignore[assignment]  # a BaseException on purpose
        with pytest.raises(asyncio.CancelledError):
            await IsolatedSource(inner).provide()

    def test_kinds_are_the_inners(self) -> None:
        """kinds() delegates, without providing."""
        inner = CountingSource(GOOD, ElementKind.TOOL | ElementKind.PROMPT)
        assert IsolatedSource(inner).kinds() == ElementKind.TOOL | ElementKind.PROMPT
        assert inner.provides == 0
