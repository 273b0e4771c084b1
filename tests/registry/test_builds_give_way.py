"""A build on the event loop gives way to the worker threads requests wait on (mcp_core._stretches).

The preload derives and merges a large catalogue on the event loop in stretches; a request
served in a worker thread meanwhile (a sync tool, a collection file's lookup) must be answered
between stretches, not once the build is done. Before, the loop's zero-timeout poll between two
stretches took the interpreter lock back before the waiting thread could, every time: a sync
tool called while 100k tools were derived waited for all of them. Each test asserts an order of
events (the answer came while the build still ran), never a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from mcp_core.app import App
from mcp_core.elements import ElementCollection, ElementKind, ElementRef
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.server import RequestHandlers
from mcp_core.sources import CollectionFileSource
from mcp_core.visibility import SessionInfo
from tests.strategies import tool_element

SIZE = 20_000  # a build of several hundred stretches: long beside one call, short for a test
GATEWAY = RecordingGateway(session=SessionInfo(session_id="s"))


def _identity_named(index: int) -> Callable[[int], int]:
    def identity(x: int) -> int:
        return x

    identity.__name__ = f"tool_{index:06d}"
    return identity


def _big_app() -> App:
    app = App("big")
    for index in range(SIZE):
        app.tool(_identity_named(index))

    @app.tool
    def in_a_thread() -> str:
        """A sync tool: served in a worker thread."""
        return threading.current_thread().name

    return app


def _provided(app: App) -> bool:
    return all(source.elements is not None for source in app.registry.health().sources)


@pytest.mark.parametrize("phase", ["deriving", "merging"])
async def test_a_sync_tool_called_while_the_catalogue_builds_is_answered_before_it_is_built(
    phase: str,
) -> None:
    """Called while the preload derives, or merges, 20k tools: answered between stretches."""
    app = _big_app()
    registry = app.registry
    handlers = RequestHandlers(registry, registry, invoker=app.invoker)
    order: list[str] = []

    async def load() -> None:
        await registry.load()
        order.append("loaded")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(load)
        # Into the build: its first stretches (deriving), or past the provide (merging).
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        while phase == "merging" and not _provided(app):
            await anyio.lowlevel.checkpoint()
        assert not registry.loaded
        result = await handlers.call_tool("in_a_thread", {}, GATEWAY)
        order.append("answered")
        # Deriving: answered before the derivation ended (not in the merge that follows it).
        assert phase == "merging" or not _provided(app)
    assert result["content"][0]["text"] != threading.main_thread().name
    assert order == ["answered", "loaded"]


async def test_a_collection_files_lookup_is_answered_while_the_file_builds(tmp_path: Path) -> None:
    """A first call's lookup (a worker thread indexing the file) goes between build stretches."""
    dumped = tmp_path / "catalogue.json"
    collection = ElementCollection([tool_element(f"tool_{i:06d}") for i in range(SIZE)])
    dumped.write_text(collection.to_json(), encoding="utf-8")
    source = CollectionFileSource(dumped, kinds=ElementKind.TOOL)
    order: list[str] = []

    async def provide() -> None:
        await source.provide()
        order.append("built")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(provide)
        await anyio.lowlevel.checkpoint()  # the provide parses (the lookup waits), then builds
        found = await source.lookup(ElementRef.tool(f"tool_{SIZE - 1:06d}"))
        order.append("looked up")
    assert found is not None
    assert order == ["looked up", "built"]


async def test_a_thread_that_waits_for_the_build_never_stops_it() -> None:
    """A sync tool blocked until the load is done: the load still ends (the pauses are bounded)."""
    app = _big_app()
    released = threading.Event()

    @app.tool
    def waits_for_the_load() -> str:
        """Blocks its worker thread until the test lets it go (after the load)."""
        if not released.wait(timeout=60):
            return "never released"
        return "released"

    registry = app.registry
    handlers = RequestHandlers(registry, registry, invoker=app.invoker)
    answers: list[str] = []

    async def call() -> None:
        result = await handlers.call_tool("waits_for_the_load", {}, GATEWAY)
        answers.append(result["content"][0]["text"])

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call)
        await registry.load()  # with the thread blocked throughout
        released.set()
    assert answers == ["released"]
