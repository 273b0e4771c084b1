"""LazySource: a factory called once, on first need."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.errors import DuplicateElementError, SourceError
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

    async def test_duplicates_raise_and_are_retried(self) -> None:
        """An iterable with a duplicate ref raises DuplicateElementError and is not cached."""
        source = LazySource(lambda: [tool_element("a"), tool_element("a")])
        with pytest.raises(DuplicateElementError):
            await source.provide()
        assert not source.called

    async def test_undeclared_kinds_are_a_configuration_error(self) -> None:
        """A factory returning prompts under kinds=TOOL raises SourceError naming the kind."""
        source = LazySource(lambda: [prompt_element("p")], kinds=ElementKind.TOOL)
        with pytest.raises(
            SourceError, match="prompt elements, outside the declared kinds=tool"
        ) as info:
            await source.provide()
        assert info.value.source is source

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
