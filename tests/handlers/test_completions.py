"""Completion providers of every accepted shape, through the Invoker."""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator, Mapping, Sequence

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import Element, Prompt, PromptArgument
from mcp_core.handlers import ClientGateway, Invoker
from mcp_core.handlers._completion import MAX_COMPLETIONS
from mcp_core.handlers.testing import RecordingGateway


class Language(enum.Enum):
    """An Enum provider."""

    PYTHON = "python"
    PERL = "perl"
    RUST = "rust"


class Planets:
    """A CompletionProvider object."""

    async def complete(
        self, value: str, context: Mapping[str, str], gateway: ClientGateway
    ) -> Sequence[str]:
        """Planets starting with ``value``, logged."""
        await gateway.log("debug", value)
        return [p for p in ("mercury", "mars", "venus") if p.startswith(value)]


def prompt_with(provider: object) -> Element:
    """A prompt whose argument ``arg`` is completed by ``provider``."""
    return Element(
        definition=Prompt(
            name="p", arguments=[PromptArgument(name="arg"), PromptArgument(name="other")]
        ),
        handler=lambda: "x",
        completions={"arg": provider},
    )


async def complete(
    provider: object, value: str, context: Mapping[str, str] | None = None
) -> dict[str, object]:
    """Complete ``arg`` with ``provider``."""
    return await Invoker().complete(
        prompt_with(provider), "arg", value, context or {}, RecordingGateway()
    )


class TestCompletionProviders:
    """Each shape of provider, filtered and capped."""

    async def test_enum(self) -> None:
        """An Enum class completes its values by prefix."""
        assert await complete(Language, "p") == {
            "values": ["python", "perl"],
            "total": 2,
            "hasMore": False,
        }

    async def test_set_is_sorted(self) -> None:
        """A set has no order of its own: its values are sorted."""
        assert await complete({"b", "a", "c"}, "") == {
            "values": ["a", "b", "c"],
            "total": 3,
            "hasMore": False,
        }

    async def test_prefix_is_case_insensitive(self) -> None:
        """``PY`` finds ``python``."""
        assert (await complete(["python", "Pyre", "go"], "PY"))["values"] == ["python", "Pyre"]

    async def test_provider_object(self) -> None:
        """A CompletionProvider receives the value, context and gateway."""
        gateway = RecordingGateway()
        result = await Invoker().complete(prompt_with(Planets()), "arg", "m", {}, gateway)
        assert result == {"values": ["mercury", "mars"], "total": 2, "hasMore": False}
        assert [log.data for log in gateway.logs] == ["m"]

    async def test_sync_function_of_value_runs_in_a_thread(self) -> None:
        """A sync ``(value)`` function runs off the event loop."""
        threads: list[int] = []

        def by_value(value: str) -> list[str]:
            threads.append(threading.get_ident())
            return [value + "1", value + "2"]

        assert (await complete(by_value, "v"))["values"] == ["v1", "v2"]
        assert threads[0] != threading.get_ident()

    async def test_async_function_with_context_and_gateway(self) -> None:
        """An async ``(value, context)`` function; a gateway parameter is injected."""

        async def by_context(
            value: str, context: Mapping[str, str], gateway: ClientGateway
        ) -> list[str]:
            await gateway.log("info", "asked")
            return [f"{context['other']}/{value}"]

        assert (await complete(by_context, "x", {"other": "o"}))["values"] == ["o/x"]

    async def test_generator_beyond_the_cap(self) -> None:
        """An endless generator: 100 values, ``hasMore``, no ``total``."""

        def endless(value: str) -> Iterator[str]:
            index = 0
            while True:
                yield f"{value}{index}"
                index += 1

        result = await complete(endless, "n")
        assert result["hasMore"] is True
        assert "total" not in result
        assert len(result["values"]) == MAX_COMPLETIONS  # type: ignore[arg-type]  # a list

    async def test_non_string_values_are_refused(self) -> None:
        """A function returning non-strings is a provider bug, reported as TypeError."""
        with pytest.raises(TypeError, match="strings"):
            await complete(lambda value: [1, 2], "")

    @given(st.integers(0, 250))
    def test_cap_and_total(self, count: int) -> None:
        """Any list: at most 100 values, ``total`` is the full count, ``hasMore`` iff cut."""
        values = [f"v{index}" for index in range(count)]
        result = anyio.run(complete, values, "")
        assert result == {
            "values": values[:MAX_COMPLETIONS],
            "total": count,
            "hasMore": count > MAX_COMPLETIONS,
        }
