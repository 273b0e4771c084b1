"""The reference Registry under faults: admission, bounded time, recovery, health, logging."""

from __future__ import annotations

import logging
import random
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_core.elements import Element, ElementCollection, ElementKind, HandlerRef, Tool
from mcp_core.errors import InvalidElementError, SourceError, SourceUnavailableError
from mcp_core.handlers import ElementLimits
from mcp_core.registry import Backoff, Priority, Registry
from mcp_core.sources import StaticSource

FAST = Backoff(initial=0.01, maximum=0.05, jitter=0)


def tool(name: str, schema: dict[str, Any] | None = None) -> Element:
    """A tool element named ``name``."""
    return Element(
        definition=Tool(name=name, input_schema=schema or {"type": "object"}),
        handler=HandlerRef(f"tests.handlers:{name}"),
    )


def static(*names: str) -> StaticSource:
    """A healthy source of tools."""
    return StaticSource(ElementCollection(tool(n) for n in names))


class Counting:
    """Counts provide() calls; tests wait for the n-th."""

    def __init__(self) -> None:
        self.provides = 0
        self._tick = anyio.Event()

    def count(self) -> None:
        """Record one provide() call."""
        self.provides += 1
        self._tick.set()
        self._tick = anyio.Event()

    async def wait_for(self, provides: int) -> None:
        """Return once provide() has been called ``provides`` times."""
        while self.provides < provides:
            await self._tick.wait()


class Changes:
    """A registry listener that records changes and can be waited on."""

    def __init__(self) -> None:
        self.seen: list[ElementKind] = []
        self.arrived = anyio.Event()

    def __call__(self, kinds: ElementKind) -> None:
        self.seen.append(kinds)
        self.arrived.set()


class Hanging(Counting):
    """A source whose provide() never returns until released; counts its calls."""

    def __init__(self, *names: str) -> None:
        super().__init__()
        self.collection = ElementCollection(tool(n) for n in names)
        self.release = anyio.Event()

    def __repr__(self) -> str:
        return "Hanging()"

    def kinds(self) -> ElementKind:
        """Tools."""
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        """Wait for release, then provide."""
        self.count()
        await self.release.wait()
        return self.collection


class Flaky(Counting):
    """A source that raises ``error`` until ``healed``; counts its calls."""

    def __init__(self, *names: str, error: BaseException | None = None) -> None:
        super().__init__()
        self.collection = ElementCollection(tool(n) for n in names)
        self.error = error or SourceUnavailableError("the database is down")
        self.healed = False

    def __repr__(self) -> str:
        return "Flaky()"

    def kinds(self) -> ElementKind:
        """Tools."""
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        """The collection once healed; the error before."""
        self.count()
        await anyio.lowlevel.checkpoint()
        if not self.healed:
            raise self.error
        return self.collection


async def names(registry: Registry) -> list[str]:
    """The listed tool names."""
    return [t.name for t in await registry.tools()]


class TestAdmission:
    """Elements are checked once, when the catalogue is built; a bad one costs only itself."""

    async def test_invalid_schemas_and_deep_definitions_are_skipped(self) -> None:
        """Meta-schema failures, bad regexes and nesting past the limit: skipped, named, logged."""
        deep: dict[str, Any] = {"type": "string"}
        for _ in range(40):
            deep = {"type": "object", "properties": {"a": deep}}
        elements = [
            tool("good"),
            tool("invalid", {"type": "object", "properties": {"a": {"type": 12}}}),
            tool("regex", {"type": "object", "properties": {"a": {"pattern": "(["}}}),
            tool("deep", {"type": "object", "properties": {"a": deep}}),
        ]
        registry = Registry([(StaticSource(ElementCollection(elements)), 0)])
        assert await names(registry) == ["good"]
        skipped = {str(d.ref): d.message for d in registry.diagnostics()}
        assert set(skipped) == {"tool 'invalid'", "tool 'regex'", "tool 'deep'"}
        assert "'([' is not a 'regex'" in skipped["tool 'regex'"]
        assert "more than the limit of 64" in skipped["tool 'deep'"]
        assert await registry.get_tool("invalid") is None

    async def test_limits_are_configurable_or_off(self) -> None:
        """A lower limit skips more; limits=None admits everything the validator accepts."""
        source = StaticSource(
            ElementCollection([tool("t", {"type": "object", "description": "x" * 500})])
        )
        assert await names(Registry([(source, 0)], limits=ElementLimits(max_bytes=200))) == []
        unchecked = Registry(
            [
                (
                    StaticSource(
                        ElementCollection([tool("bad", {"type": "object", "required": "x"})])
                    ),
                    0,
                )
            ],
            limits=None,
        )
        assert await names(unchecked) == ["bad"]

    async def test_register_refuses_what_admission_refuses(self) -> None:
        """A runtime registration must pass the same checks, or it is refused at once."""
        registry = Registry()
        with pytest.raises(InvalidElementError, match="input_schema is not a valid JSON Schema"):
            await registry.register(tool("bad", {"type": "object", "required": "x"}))
        assert await names(registry) == []


class TestBoundedTime:
    """A hanging source delays the first load by at most the timeout and blocks nothing after."""

    async def test_first_load_serves_the_others_when_the_timeout_expires(self) -> None:
        """The hanging source counts as unavailable, with a diagnostic; the rest is served."""
        hanging = Hanging("late")
        registry = Registry([(static("a"), 0), (hanging, 0)], provide_timeout=0.05, retry=None)
        with anyio.fail_after(10):
            assert await names(registry) == ["a"]
        [diagnostic] = registry.diagnostics()
        assert diagnostic.kind == "unavailable"
        assert diagnostic.source == "Hanging()"
        assert diagnostic.message == (
            "provide() did not finish within 0.05 s; contributing nothing until it recovers"
        )

    async def test_a_hanging_reload_blocks_no_read(self) -> None:
        """While a reload waits on a hanging source, reads answer from the current catalogue."""
        flaky = Flaky("b")
        flaky.healed = True
        hanging = Hanging("h")
        hanging.release.set()
        registry = Registry([(flaky, 0), (hanging, 1)], provide_timeout=5, retry=None)
        assert await names(registry) == ["h", "b"]
        hanging.release = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(registry.reload)
            await anyio.sleep(0.01)
            with anyio.fail_after(1):
                assert await names(registry) == ["h", "b"]
                assert await registry.get_tool("b") is not None
            hanging.release.set()

    async def test_no_timeout(self) -> None:
        """provide_timeout=None waits as long as the source takes."""
        hanging = Hanging("x")
        registry = Registry([(hanging, 0)], provide_timeout=None, retry=None)
        async with anyio.create_task_group() as group:
            group.start_soon(registry.load)
            await anyio.sleep(0.05)
            assert not registry.loaded
            hanging.release.set()
        assert await names(registry) == ["x"]

    @pytest.mark.parametrize("timeout", [0, -1, True, "10"])
    def test_nonsense_timeouts_are_refused(self, timeout: object) -> None:
        """A timeout is a positive number of seconds, or None."""
        with pytest.raises(ValueError, match="provide_timeout"):
            Registry(provide_timeout=timeout)  # type: ignore[arg-type]  # the misuse under test


class TestContainment:
    """A source or listener raising SystemExit costs only itself."""

    async def test_a_source_raising_system_exit_is_a_failed_source(self) -> None:
        """The source is failed, the rest is served, the process lives on."""
        exiting = Flaky("x", error=SystemExit(3))
        registry = Registry([(static("a"), 0), (exiting, 0)], retry=None)
        assert await names(registry) == ["a"]
        [diagnostic] = registry.diagnostics()
        assert (diagnostic.kind, diagnostic.message.split(";")[0]) == ("failed", "SystemExit: 3")

    async def test_a_listener_raising_system_exit_is_ignored(self) -> None:
        """A subscriber's SystemExit is logged and ignored; the write stands."""
        registry = Registry()
        seen: list[ElementKind] = []

        def exits(kinds: ElementKind) -> None:
            raise SystemExit(1)

        registry.subscribe(exits)
        registry.subscribe(seen.append)
        await registry.load()  # writes before the first load announce nothing
        await registry.register(tool("t"))
        assert seen == [ElementKind.TOOL]


class TestRecovery:
    """While background() is open, a failing source is retried until it comes back."""

    async def test_down_at_cold_start_comes_back_with_a_change_event(self) -> None:
        """No cache, down at start: retried with backoff; when it answers, listeners hear it."""
        flaky = Flaky("back")
        registry = Registry([(static("a"), 0), (flaky, Priority.DISCOVERY)], retry=FAST)
        changes = Changes()
        registry.subscribe(changes)
        async with registry.background():
            assert await names(registry) == ["a"]
            assert registry.health().sources[1].state == "down"
            with anyio.fail_after(10):
                await flaky.wait_for(3)
                flaky.healed = True
                await changes.arrived.wait()
        assert changes.seen == [ElementKind.TOOL]
        assert await names(registry) == ["a", "back"]
        assert registry.diagnostics() == ()
        health = registry.health().sources[1]
        assert (health.state, health.failures, health.next_retry) == ("ok", 0, None)
        assert health.last_error == "SourceUnavailableError: the database is down"

    async def test_a_hanging_source_is_retried_after_its_timeout(self) -> None:
        """A timed-out source is retried too, and joins once it answers in time."""
        hanging = Hanging("slow")
        registry = Registry([(hanging, 0)], provide_timeout=0.05, retry=FAST)
        changes = Changes()
        registry.subscribe(changes)
        async with registry.background():
            assert await names(registry) == []
            with anyio.fail_after(10):
                await hanging.wait_for(2)
                hanging.release.set()
                await changes.arrived.wait()
        assert await names(registry) == ["slow"]

    async def test_retry_off(self) -> None:
        """retry=None: nothing is retried on its own; reload() still recovers the source."""
        flaky = Flaky("x")
        registry = Registry([(flaky, 0)], retry=None)
        async with registry.background():
            await registry.load()
            await anyio.sleep(0.1)
        assert flaky.provides == 1
        assert registry.health().sources[0].next_retry is None
        flaky.healed = True
        await registry.reload()
        assert await names(registry) == ["x"]

    async def test_nothing_is_retried_without_background(self) -> None:
        """Outside background(), a failure stays until someone reloads; health promises no retry."""
        flaky = Flaky("x")
        registry = Registry([(flaky, 0)], retry=FAST)
        await registry.load()
        await anyio.sleep(0.1)
        assert flaky.provides == 1
        assert registry.health().sources[0].next_retry is None
        async with registry.background():
            with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
                await flaky.wait_for(2)  # what failed before the server started is retried too

    def test_backoff_is_capped_and_validated(self) -> None:
        """Delays double up to the cap, even after thousands of failures; nonsense is refused."""
        backoff = Backoff(initial=1, maximum=60, factor=2, jitter=0)
        assert [backoff.delay(n) for n in (1, 2, 3, 7, 8, 5000)] == [1, 2, 4, 60, 60, 60]
        spread = Backoff(initial=10, maximum=10, jitter=0.5)
        assert all(5 <= spread.delay(1) <= 15 for _ in range(50))
        for bad in ({"initial": 0}, {"maximum": 0.5}, {"factor": 0.5}, {"jitter": 1}):
            with pytest.raises(ValueError, match="Backoff"):
                Backoff(**bad)

    def test_the_jitter_leaves_the_applications_random_stream_alone(self) -> None:
        """A retry's spread is drawn from a generator of its own, not from ``random``'s stream."""
        spread = Backoff(initial=10, maximum=10, jitter=0.5)
        state = random.getstate()
        try:
            expected = [random.random() for _ in range(3)]  # noqa: S311 -- a test's stream
            random.setstate(state)
            drawn = []
            for _ in range(3):
                spread.delay(1)  # a retry's jitter between two of the application's draws
                drawn.append(random.random())  # noqa: S311 -- a test's stream
        finally:
            random.setstate(state)
        assert drawn == expected


class TestHealth:
    """health() says, per source: state, last success, last error, stale since; loading nothing."""

    async def test_states(self) -> None:
        """Pending before the load; ok, degraded (last good served) and down after failures."""
        healthy, flaky, never = static("a"), Flaky("b"), Flaky("c")
        flaky.healed = True
        registry = Registry([(healthy, 0), (flaky, 0), (never, 0)], retry=None)
        before = registry.health()
        assert (before.status, before.ready) == ("loading", False)
        assert [s.state for s in before.sources] == ["pending"] * 3
        await registry.load()
        flaky.healed = False
        await registry.reload()
        health = registry.health()
        assert (health.status, health.ready) == ("degraded", True)
        assert [s.state for s in health.sources] == ["ok", "degraded", "down"]
        ok, degraded, down = health.sources
        assert ok.last_success is not None
        assert ok.stale_since is None
        assert degraded.elements == 1
        assert degraded.stale_since is not None
        assert degraded.last_error == "SourceUnavailableError: the database is down"
        assert (down.elements, down.failures, down.last_success) == (None, 2, None)
        assert health.to_json()["sources"][2] == {
            "source": "Flaky()",
            "priority": 0,
            "state": "down",
            "elements": None,
            "lastSuccess": None,
            "lastError": "SourceUnavailableError: the database is down",
            "lastErrorAt": down.last_error_at,
            "staleSince": down.stale_since,
            "failures": 2,
            "nextRetry": None,
        }

    async def test_a_source_reporting_stale_is_degraded_since_it_first_did(self) -> None:
        """A wrapper serving an expired cache entry makes its source degraded, since the first time."""
        from mcp_core.sources import SourceDiagnostic

        class Stale:
            def __init__(self) -> None:
                self.at: float | None = 5.0

            def kinds(self) -> ElementKind:
                return ElementKind.TOOL

            async def provide(self) -> ElementCollection:
                return ElementCollection([tool("s")])

            def diagnostics(self) -> tuple[SourceDiagnostic, ...]:
                if self.at is None:
                    return ()
                return (SourceDiagnostic(source="Stale", kind="stale", message="old", at=self.at),)

        stale = Stale()
        registry = Registry([(stale, 0)])
        await registry.load()
        stale.at = 9.0  # served stale again, later: still stale since the first time
        await registry.reload()
        [source] = registry.health().sources
        assert (source.state, source.stale_since) == ("degraded", 5.0)
        stale.at = None
        await registry.reload()
        [source] = registry.health().sources
        assert (source.state, source.stale_since) == ("ok", None)


class TestLogging:
    """One clear line per problem, once; a traceback only for what is not a user error."""

    async def test_each_problem_is_logged_once(self, caplog: pytest.LogCaptureFixture) -> None:
        """A skipped element is logged when it appears, not again on every reload."""
        bad = tool("bad", {"type": "object", "required": "x"})
        registry = Registry([(StaticSource(ElementCollection([bad, tool("ok")])), 0)])
        with caplog.at_level(logging.INFO, logger="mcp_core.registry"):
            await registry.load()
            await registry.reload()
            await registry.reload()
        lines = [r for r in caplog.records if "tool 'bad'" in r.getMessage()]
        assert len(lines) == 1
        assert lines[0].levelno == logging.WARNING
        assert lines[0].exc_info is None

    async def test_an_outage_is_one_line_then_quiet(self, caplog: pytest.LogCaptureFixture) -> None:
        """The first failure is a warning (no traceback for our errors); repeats are debug."""
        flaky = Flaky("x", error=SourceError("config file missing"))
        registry = Registry([(flaky, 0)], retry=None)
        with caplog.at_level(logging.DEBUG, logger="mcp_core.registry"):
            await registry.load()
            await registry.reload()
            flaky.healed = True
            await registry.reload()
        levels = [(r.levelno, r.exc_info is None) for r in caplog.records]
        assert levels == [(logging.WARNING, True), (logging.DEBUG, True), (logging.WARNING, True)]
        assert "recovered after 2 failed attempt(s)" in caplog.records[-1].getMessage()

    async def test_an_unexpected_error_keeps_its_traceback(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A bug in a source (not an mcp-core error) is logged with its traceback."""
        registry = Registry([(Flaky("x", error=RuntimeError("bug")), 0)], retry=None)
        with caplog.at_level(logging.WARNING, logger="mcp_core.registry"):
            await registry.load()
        [record] = caplog.records
        assert record.exc_info is not None


class TestOneCollectionPerLoad:
    """The merged catalogue reuses a source's collection when it is the whole catalogue."""

    async def test_a_whole_source_is_the_catalogue_itself(self) -> None:
        """One source, all admitted: elements() is that source's collection, not a copy."""
        collection = ElementCollection([tool("a"), tool("b")])
        registry = Registry([(StaticSource(collection), 0)])
        assert await registry.elements() is collection

    async def test_a_skip_or_a_second_source_builds_the_merged_collection(self) -> None:
        """A skipped element or another contributing source gives a new, correct collection."""
        bad = tool("bad", {"type": "object", "properties": {"x": {"type": 3}}})
        with_bad = ElementCollection([tool("a"), bad])
        registry = Registry([(StaticSource(with_bad), 0)])
        assert [e.ref.key for e in await registry.elements()] == ["a"]
        two = Registry([(static("a"), 0), (static("b", "a"), 1)])
        assert [e.ref.key for e in await two.elements()] == ["b", "a"]
        await two.register(tool("c"))
        assert [e.ref.key for e in await two.elements()] == ["c", "b", "a"]
