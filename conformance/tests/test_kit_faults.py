"""The fault sources do what their names say, and the invalid element is invalid."""

from __future__ import annotations

import anyio
import pytest

from mcp_conformance.faults import (
    InvalidElementSource,
    MutableSource,
    RaisingSource,
    SlowSource,
    UnavailableAfterFirstSource,
    invalid_element,
    is_invalid,
)
from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind, Prompt, Tool
from mcp_core.errors import HandlerKindError, SourceError, SourceUnavailableError
from mcp_core.handlers import Invoker
from mcp_core.sources import ElementSource


def test_fault_sources_are_element_sources() -> None:
    """Every fault source conforms to ElementSource (mypy checks these assignments)."""
    sources: list[ElementSource] = [
        MutableSource(),
        RaisingSource(),
        UnavailableAfterFirstSource(example_collection()),
        InvalidElementSource(example_collection(), Prompt(name="bad")),
        SlowSource(example_collection()),
    ]
    assert all(source.kinds() in ElementKind.ALL for source in sources)


class TestMutableSource:
    """Content and failure are settable; calls are counted."""

    def test_provides_its_content_and_counts(self) -> None:
        """provide() returns the content; kinds() never provides."""
        source = MutableSource(example_collection())

        async def body() -> None:
            assert await source.provide() == example_collection()
            assert source.kinds() is ElementKind.ALL
            assert (source.provides, source.kinds_calls) == (1, 1)

        anyio.run(body)

    def test_fails_until_healed(self) -> None:
        """fail_with makes provide() raise it; None heals the source."""
        source = MutableSource()
        source.fail_with = RuntimeError("down")

        async def body() -> None:
            with pytest.raises(RuntimeError, match="down"):
                await source.provide()
            source.fail_with = None
            assert await source.provide() == ElementCollection()

        anyio.run(body)


class TestFailingSources:
    """RaisingSource and UnavailableAfterFirstSource."""

    def test_raising_source_always_raises(self) -> None:
        """The default error is a SourceError."""

        async def body() -> None:
            with pytest.raises(SourceError):
                await RaisingSource().provide()

        anyio.run(body)

    def test_unavailable_after_first(self) -> None:
        """The first provide succeeds, every later one is SourceUnavailableError."""
        source = UnavailableAfterFirstSource(example_collection())

        async def body() -> None:
            assert await source.provide() == example_collection()
            for _ in range(2):
                with pytest.raises(SourceUnavailableError):
                    await source.provide()

        anyio.run(body)


class TestInvalidElements:
    """The kit's invalid element is one a handler-kind validator rejects."""

    @pytest.mark.parametrize(
        "definition",
        [Tool(name="t", input_schema={"type": "object"}), Prompt(name="p")],
        ids=["tool", "prompt"],
    )
    def test_wrong_kind_handler_is_rejected(self, definition: Tool | Prompt) -> None:
        """Invoker.validate_handler refuses it, and is_invalid recognises it."""
        element = invalid_element(definition)
        assert is_invalid(element)
        with pytest.raises(HandlerKindError):
            Invoker().validate_handler(element)

    def test_invalid_element_source_places_it_among_valid_ones(self) -> None:
        """The collection holds the valid elements plus the invalid one where asked."""
        valid = example_collection()
        source = InvalidElementSource(
            valid, Tool(name="bad", input_schema={"type": "object"}), position=1
        )

        async def body() -> None:
            provided = list(await source.provide())
            assert provided[1] == source.invalid
            assert [e for e in provided if not is_invalid(e)] == list(valid)

        anyio.run(body)


class TestSlowSource:
    """Overlapping provides are recorded."""

    def test_concurrent_calls_overlap(self) -> None:
        """Two concurrent provides are both in flight at once."""
        source = SlowSource(example_collection(), delay=0.01)

        async def body() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(source.provide)
                group.start_soon(source.provide)

        anyio.run(body)
        assert (source.provides, source.max_in_flight) == (2, 2)
