"""Sources that misbehave on purpose, and the invalid elements the kit feeds registries.

Public so that a framework's own tests can put its registry through the same situations the kit
does::

    flaky = UnavailableAfterFirstSource(collection)
    registry = make_registry([(flaky, 0)])
    await registry.load()
    await registry.reload()              # flaky raises SourceUnavailableError now
    assert await registry.tools() == collection.tools

Every source here counts its ``provide()`` calls (``provides``) and ``kinds()`` calls
(``kinds_calls``), and yields to the event loop once per ``provide()`` so that concurrent callers
really interleave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import final

import anyio
import anyio.lowlevel

from mcp_core.elements import Definition, Element, ElementCollection, ElementKind
from mcp_core.errors import SourceError, SourceUnavailableError

__all__ = [
    "InvalidElementSource",
    "MutableSource",
    "PromptOnlyHandler",
    "RaisingSource",
    "SlowSource",
    "ToolOnlyHandler",
    "UnavailableAfterFirstSource",
    "invalid_element",
    "is_invalid",
]


@final
class PromptOnlyHandler:
    """A handler implementing only ``PromptHandler.get``: wrong for anything but a prompt."""

    async def get(self, arguments: Mapping[str, str], gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """Never meant to be called."""
        raise AssertionError("the kit's wrong-kind handler was invoked")


@final
class ToolOnlyHandler:
    """A handler implementing only ``ToolHandler.execute``: wrong for anything but a tool."""

    async def execute(self, arguments: Mapping[str, object], gateway: object) -> object:  # noqa: ARG002 -- the protocol's signature
        """Never meant to be called."""
        raise AssertionError("the kit's wrong-kind handler was invoked")


def invalid_element(definition: Definition) -> Element:
    """``definition`` paired with a handler of the wrong kind (the kit's "invalid element").

    A prompt gets a :class:`ToolOnlyHandler`; every other kind a :class:`PromptOnlyHandler`.
    Construction accepts it (handler kinds are checked at registration); a registry must skip it.
    """
    handler: object = (
        ToolOnlyHandler() if definition.ref.kind is ElementKind.PROMPT else PromptOnlyHandler()
    )
    return Element(definition=definition, handler=handler)


def is_invalid(element: Element) -> bool:
    """Whether ``element`` is one the kit made invalid with :func:`invalid_element`."""
    return isinstance(element.handler, PromptOnlyHandler | ToolOnlyHandler)


class _CountingSource:
    """The bookkeeping every fault source shares: call counters and one checkpoint per provide."""

    # The counters are plain public attributes: tests read them, and subclasses add their own.
    def __init__(self, kinds: ElementKind) -> None:
        self.declared = kinds
        self.kinds_fail_with: BaseException | None = None
        self.provides = 0
        self.kinds_calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def kinds(self) -> ElementKind:
        """The declared kinds (or ``kinds_fail_with`` raised, if set); never provides."""
        self.kinds_calls += 1
        if self.kinds_fail_with is not None:
            raise self.kinds_fail_with
        return self.declared

    async def provide(self) -> ElementCollection:
        """Count the call, yield to the loop, then answer (see ``_answer``)."""
        self.provides += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await anyio.sleep(self._delay())
            for _ in range(self._turns()):
                await anyio.lowlevel.checkpoint()
            return self._answer()
        finally:
            self.in_flight -= 1

    def _delay(self) -> float:
        return 0

    def _turns(self) -> int:
        return 0

    def _answer(self) -> ElementCollection:
        raise NotImplementedError


@final
class MutableSource(_CountingSource):
    """A healthy source whose content, failure and declared kinds can be changed between calls.

    ``content`` is what ``provide()`` returns; set ``fail_with`` to an exception to make it raise
    that instead (``None`` heals it). ``kinds()`` answers ``declared``, which defaults to
    ``ElementKind.ALL`` so that content changes never make the source dishonest (or raises
    ``kinds_fail_with``, when set). Each
    ``provide()`` takes ``delay`` seconds, then ``turns`` more turns of the event loop: sources
    with different turns finish in a known order, without a clock.
    """

    def __init__(
        self,
        content: ElementCollection | Iterable[Element] = (),
        *,
        kinds: ElementKind = ElementKind.ALL,
        delay: float = 0,
        turns: int = 0,
    ) -> None:
        super().__init__(kinds)
        self.content = (
            content if isinstance(content, ElementCollection) else ElementCollection(content)
        )
        self.fail_with: BaseException | None = None
        self.delay = delay
        self.turns = turns

    def __repr__(self) -> str:
        failing = f", failing with {self.fail_with!r}" if self.fail_with is not None else ""
        return f"MutableSource({self.content!r}{failing})"

    def _delay(self) -> float:
        return self.delay

    def _turns(self) -> int:
        return self.turns

    def _answer(self) -> ElementCollection:
        if self.fail_with is not None:
            raise self.fail_with
        return self.content


@final
class RaisingSource(_CountingSource):
    """A source whose ``provide()`` always raises ``error`` (a SourceError by default)."""

    def __init__(
        self, error: Exception | None = None, *, kinds: ElementKind = ElementKind.ALL
    ) -> None:
        super().__init__(kinds)
        self.error = error if error is not None else SourceError("RaisingSource always raises")

    def __repr__(self) -> str:
        return f"RaisingSource({self.error!r})"

    def _answer(self) -> ElementCollection:
        raise self.error


@final
class UnavailableAfterFirstSource(_CountingSource):
    """Provides ``collection`` once, then raises SourceUnavailableError on every later call."""

    def __init__(self, collection: ElementCollection, *, kinds: ElementKind | None = None) -> None:
        super().__init__(collection.kinds if kinds is None else kinds)
        self.collection = collection

    def __repr__(self) -> str:
        return f"UnavailableAfterFirstSource({self.collection!r})"

    def _answer(self) -> ElementCollection:
        if self.provides > 1:
            raise SourceUnavailableError(
                "the backend went away after the first provide()", source=self
            )
        return self.collection


@final
class InvalidElementSource(_CountingSource):
    """Provides ``valid`` plus one invalid element (``invalid``), placed at ``position``.

    The invalid element pairs ``definition`` with a handler of the wrong kind (see
    :func:`invalid_element`); a registry must skip it and serve every other element.
    """

    def __init__(
        self,
        valid: ElementCollection,
        definition: Definition,
        *,
        position: int | None = None,
        kinds: ElementKind = ElementKind.ALL,
    ) -> None:
        super().__init__(kinds)
        if valid.get(definition.ref) is not None:
            raise ValueError(f"{definition.ref} is among the valid elements; pick another ref")
        self.valid = valid
        self.invalid = invalid_element(definition)
        elements = list(valid)
        elements.insert(len(elements) if position is None else position, self.invalid)
        self.collection = ElementCollection(elements)

    def __repr__(self) -> str:
        return f"InvalidElementSource({self.valid!r}, invalid={self.invalid.ref})"

    def _answer(self) -> ElementCollection:
        return self.collection


@final
class SlowSource(_CountingSource):
    """Provides ``collection`` after sleeping ``delay`` seconds; records overlapping calls.

    ``max_in_flight`` is how many ``provide()`` calls ever ran at once: more than one means the
    caller did not share one load.
    """

    def __init__(self, collection: ElementCollection, *, delay: float = 0.01) -> None:
        super().__init__(collection.kinds)
        self.collection = collection
        self.delay = delay

    def __repr__(self) -> str:
        return f"SlowSource({self.collection!r}, delay={self.delay})"

    def _delay(self) -> float:
        return self.delay

    def _answer(self) -> ElementCollection:
        return self.collection
