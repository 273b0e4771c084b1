"""running_sources: sources that run while served are started, and their changes reload."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.sources import (
    ChangeListeners,
    ChangingSource,
    ElementSource,
    PrefixedSource,
    RunningSource,
    StaticSource,
    running_sources,
)
from mcp_core.sources._running import Applied


class LiveSource:
    """A source that records its runs and can announce changes."""

    def __init__(self, *, fail: bool = False) -> None:
        self.events: list[str] = []
        self.listeners: list[Callable[[ElementKind], object]] = []
        self.fail = fail

    def kinds(self) -> ElementKind:
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        return ElementCollection()

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[None]:
        if self.fail:
            raise ConnectionError("backend down")
        self.events.append("start")
        yield
        self.events.append("stop")

    def running(self) -> Any:
        return self._run()

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def announce(self) -> None:
        for listener in tuple(self.listeners):
            listener(ElementKind.TOOL)


class TestRunningSources:
    """Start, stop, reload on change."""

    def test_protocols(self) -> None:
        """The optional protocols recognise a live source, not a plain one."""
        assert isinstance(LiveSource(), RunningSource)
        assert isinstance(LiveSource(), ChangingSource)
        assert not isinstance(StaticSource(ElementCollection()), RunningSource)

    async def test_started_inside_wrappers_and_reloaded_on_change(self) -> None:
        """An inner source is started; each announced change reloads; exit stops and unsubscribes."""
        live = LiveSource()
        reloads: list[tuple[ElementSource, ...]] = []
        reloaded = anyio.Event()

        async def reload(*changed: ElementSource) -> None:
            reloads.append(changed)
            reloaded.set()

        prefixed = PrefixedSource(live, "live")
        sources: list[ElementSource] = [prefixed, StaticSource(ElementCollection())]
        async with running_sources(sources, reload):
            assert live.events == ["start"]
            live.announce()
            with anyio.fail_after(5):
                await reloaded.wait()
        assert live.events == ["start", "stop"]
        assert live.listeners == []
        assert reloads == [(prefixed,)]

    async def test_a_listener_can_wait_for_its_reload(self) -> None:
        """What a change listener returns completes once the reload it asked for has run."""
        live = LiveSource()
        reloads: list[tuple[ElementSource, ...]] = []

        async def reload(*changed: ElementSource) -> None:
            await anyio.lowlevel.checkpoint()
            reloads.append(changed)

        async with running_sources([live], reload):
            applied = live.listeners[0](ElementKind.TOOL)
            assert isinstance(applied, Applied)
            with anyio.fail_after(5):
                await applied
            assert reloads == [(live,)]

    async def test_a_failing_start_costs_only_itself(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A source that cannot start is logged; the others run."""
        broken, healthy = LiveSource(fail=True), LiveSource()

        async def reload() -> None:
            return None

        async with running_sources([broken, healthy], reload):
            assert healthy.events == ["start"]
        assert "failed to start" in caplog.text


class TestChangeListeners:
    """What a changing source keeps its listeners in."""

    def test_announce_reaches_the_subscribed_until_they_unsubscribe(self) -> None:
        """Each listener hears each announcement while subscribed, with the kinds announced."""
        listeners = ChangeListeners()
        heard: list[tuple[str, ElementKind]] = []
        stop_a = listeners.subscribe(lambda kinds: heard.append(("a", kinds)))
        listeners.subscribe(lambda kinds: heard.append(("b", kinds)))
        listeners.announce(ElementKind.TOOL)
        stop_a()
        stop_a()  # unsubscribing twice is harmless
        listeners.announce(ElementKind.PROMPT)
        assert heard == [
            ("a", ElementKind.TOOL),
            ("b", ElementKind.TOOL),
            ("b", ElementKind.PROMPT),
        ]

    def test_a_failing_listener_costs_only_itself(self, caplog: pytest.LogCaptureFixture) -> None:
        """A listener that raises (SystemExit too) is logged; the next one still hears."""
        listeners = ChangeListeners()
        heard: list[ElementKind] = []

        def exits(kinds: ElementKind) -> None:
            raise SystemExit(1)

        listeners.subscribe(exits)
        listeners.subscribe(heard.append)
        listeners.announce(ElementKind.TOOL)
        assert heard == [ElementKind.TOOL]
        assert "change listener" in caplog.text
