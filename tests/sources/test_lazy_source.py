"""LazySource: a factory called once, on first need."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.sources import LazySource
from tests.strategies import prompt_element, tool_element

COLLECTION = ElementCollection([tool_element("a"), tool_element("b")])


class TestLazySource:
    """LazySource defers the factory, calls it once, and retries after a failure."""

    async def test_factory_waits_for_the_first_provide(self) -> None:
        """Neither construction nor kinds() calls the factory; the first provide() does."""
        calls: list[int] = []

        def factory() -> ElementCollection:
            calls.append(1)
            return COLLECTION

        source = LazySource(factory, kinds=ElementKind.TOOL)
        assert source.kinds() == ElementKind.TOOL
        assert calls == []
        assert not source.called
        assert await source.provide() == COLLECTION
        assert await source.provide() == COLLECTION
        assert calls == [1]
        assert source.called

    async def test_concurrent_first_calls_share_one_factory_call(self) -> None:
        """Ten concurrent first provide() calls run an async factory once and all get its result."""
        calls = 0
        release = anyio.Event()

        async def factory() -> ElementCollection:
            nonlocal calls
            calls += 1
            await release.wait()
            return COLLECTION

        source = LazySource(factory)
        results: list[ElementCollection] = []

        async def provide() -> None:
            results.append(await source.provide())

        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(provide)
            await anyio.wait_all_tasks_blocked()
            release.set()
        assert calls == 1
        assert results == [COLLECTION] * 10

    async def test_a_raising_factory_is_retried(self) -> None:
        """A failure is not cached: the next provide() calls the factory again and can succeed."""
        outcomes: Iterator[Exception | None] = iter([ConnectionError("plugins not ready"), None])

        def factory() -> ElementCollection:
            error = next(outcomes)
            if error is not None:
                raise error
            return COLLECTION

        source = LazySource(factory)
        with pytest.raises(ConnectionError, match="plugins not ready"):
            await source.provide()
        assert not source.called
        assert await source.provide() == COLLECTION

    async def test_concurrent_callers_share_a_failure(self) -> None:
        """Callers waiting on a failing first call get its error; the factory ran once."""
        calls = 0
        release = anyio.Event()

        async def factory() -> ElementCollection:
            nonlocal calls
            calls += 1
            await release.wait()
            raise ConnectionError("down")

        source = LazySource(factory)
        errors: list[BaseException] = []

        async def provide() -> None:
            try:
                await source.provide()
            except ConnectionError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(provide)
            await anyio.wait_all_tasks_blocked()
            release.set()
        assert calls == 1
        assert len(errors) == 3

    async def test_a_cancelled_first_call_lets_a_waiter_retry(self) -> None:
        """If the caller running the factory is cancelled, a waiting caller runs it again."""
        calls = 0
        first_started = anyio.Event()

        async def factory() -> ElementCollection:
            nonlocal calls
            calls += 1
            if calls == 1:
                first_started.set()
                await anyio.sleep_forever()
            return COLLECTION

        source = LazySource(factory)
        results: list[ElementCollection] = []
        first_scope = anyio.CancelScope()

        async def first_caller() -> None:
            with first_scope:
                await source.provide()

        async def waiter() -> None:
            results.append(await source.provide())

        async with anyio.create_task_group() as group:
            group.start_soon(first_caller)
            await first_started.wait()
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            first_scope.cancel()
        assert calls == 2
        assert results == [COLLECTION]

    async def test_iterables_of_elements_are_collected(self) -> None:
        """A factory may return any iterable of elements (here a generator)."""

        def factory() -> Iterator[Element]:
            yield tool_element("a")
            yield prompt_element("p")

        collection = await LazySource(factory).provide()
        assert collection.refs == (tool_element("a").ref, prompt_element("p").ref)

    async def test_duplicates_cost_only_the_repeat(self) -> None:
        """A repeated ref keeps the first item's element and skips the repeat, naming both items."""
        source = LazySource(lambda: [tool_element("a"), tool_element("a"), tool_element("b")])
        collection = await source.provide()
        assert collection.refs == (tool_element("a").ref, tool_element("b").ref)
        [diagnostic] = source.diagnostics()
        assert (diagnostic.kind, diagnostic.ref) == ("skipped", tool_element("a").ref)
        assert (
            "item 1 repeats tool 'a', which the factory, item 0 holds first" in diagnostic.message
        )

    async def test_undeclared_kinds_cost_only_their_elements(self) -> None:
        """A prompt under kinds=TOOL is skipped, naming the kind; the tools are served."""
        source = LazySource(
            lambda: [prompt_element("p"), tool_element("t")], kinds=ElementKind.TOOL
        )
        collection = await source.provide()
        assert collection.refs == (tool_element("t").ref,)
        [diagnostic] = source.diagnostics()
        assert "prompt element, outside the declared kinds=tool" in diagnostic.message

    async def test_each_builder_is_admitted_alone(self) -> None:
        """One factory's builders: one that raises (a bad name) costs only itself; async ones too."""

        async def later() -> Element:
            return tool_element("async_one")

        def bad() -> Element:
            return tool_element("bad name")

        def factory() -> list[object]:
            return [lambda: tool_element("first"), bad, later, 42, tool_element("last")]

        source = LazySource(factory, kinds=ElementKind.TOOL)
        collection = await source.provide()
        assert [ref.key for ref in collection.refs] == ["first", "async_one", "last"]
        messages = [d.message for d in source.diagnostics()]
        assert len(messages) == 2
        assert "item 1" in messages[0]
        assert "'bad name'" in messages[0]
        assert "item 3 is a int, not an Element or a callable building one" in messages[1]

    async def test_a_generator_that_raises_keeps_what_it_yielded(self) -> None:
        """A generator failing mid-way keeps its earlier elements and says to yield builders."""

        def factory() -> Iterator[Element]:
            yield tool_element("a")
            yield tool_element("bad name")
            yield tool_element("never")  # pragma: no cover -- the line above raises

        source = LazySource(factory)
        collection = await source.provide()
        assert collection.refs == (tool_element("a").ref,)
        [diagnostic] = source.diagnostics()
        assert "raised InvalidElementError" in diagnostic.message
        assert "after 1 items" in diagnostic.message
        assert "yield each plugin's builder" in diagnostic.message

    async def test_a_wrong_result_type_is_a_type_error(self) -> None:
        """A factory returning something else entirely raises TypeError saying what was expected."""
        source = LazySource(lambda: 42)  # type: ignore[arg-type,return-value]  # the mistake under test
        with pytest.raises(TypeError, match="an ElementCollection or an iterable of Elements"):
            await source.provide()

    def test_factory_must_be_callable(self) -> None:
        """A non-callable factory is refused at construction."""
        with pytest.raises(TypeError, match="callable factory"):
            LazySource(COLLECTION)  # type: ignore[arg-type]  # the mistake under test

    def test_repr_names_the_factory(self) -> None:
        """The repr names the factory and any declared kinds."""

        def load_plugins() -> ElementCollection:
            return COLLECTION

        source = LazySource(load_plugins, kinds=ElementKind.TOOL)
        assert repr(source) == (
            f"LazySource({__name__}.TestLazySource.test_repr_names_the_factory.<locals>."
            "load_plugins, kinds=tool)"
        )
