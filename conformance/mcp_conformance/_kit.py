"""What a kit check sees: the session's target and profile, and a per-check helper (``kit``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final, NoReturn, TypeVar, final

import anyio
import pytest
from hypothesis import given, seed
from hypothesis import settings as Settings  # noqa: N812 -- the class, next to a `settings()` method
from hypothesis.strategies import SearchStrategy

from mcp_conformance._capabilities import Capabilities
from mcp_conformance._contract import escaped, uncontained
from mcp_conformance._laws import law
from mcp_conformance._profiles import Profile
from mcp_conformance._session import (
    CHECK_FACTS,
    LAW_MARK,
    SESSION,
    CheckFacts,
    KitSession,
    NotApplicableWhy,
)
from mcp_conformance._target import Target

__all__ = ["Kit", "checks", "kit_fixture"]

T = TypeVar("T")

_PROGRESS_EVERY: Final = 25
"""Examples between two progress lines of a running check."""


def checks(law_id: str) -> pytest.MarkDecorator:
    """Mark a kit check as certifying ``law_id`` (an unknown id is an error at import)."""
    return getattr(pytest.mark, LAW_MARK)(law(law_id).id)  # type: ignore[no-any-return]  # a MarkDecorator


@final
class Kit:
    """A check's view of the run, plus the helpers every check uses.

    ``run`` executes an async body on a fresh event loop; ``given`` runs an async body under
    hypothesis with the profile's settings; ``not_applicable`` ends the check as N/A.
    """

    __slots__ = ("_facts", "_law", "_started", "session")

    def __init__(self, session: KitSession, item: pytest.Item) -> None:
        self.session = session
        self._facts = item.stash.setdefault(CHECK_FACTS, CheckFacts())
        mark = item.get_closest_marker(LAW_MARK)
        self._law = str(mark.args[0]) if mark is not None else item.name
        self._started = time.monotonic()

    @property
    def target(self) -> Target:
        """What is certified."""
        return self.session.target

    @property
    def capabilities(self) -> Capabilities:
        """What the target claims."""
        return self.session.target.capabilities

    @property
    def profile(self) -> Profile:
        """How hard to look."""
        return self.session.profile

    def settings(self) -> Settings:
        """The hypothesis settings for this check (the profile's, never the loaded profile's)."""
        return self.session.profile.settings(derandomize=self.session.seed is None)

    def counted(self) -> None:
        """Count one example (the report records how many each check ran); report progress."""
        self._facts.examples += 1
        if self.session.progress is not None and self._facts.examples % _PROGRESS_EVERY == 0:
            elapsed = time.monotonic() - self._started
            self.session.progress(
                f"mcp-conformance: {self._law}: {self._facts.examples} examples, {elapsed:.0f} s"
            )

    def not_applicable(self, reason: str, *, why: NotApplicableWhy = "inapplicable") -> NoReturn:
        """End the check as N/A, saying why (see :data:`NotApplicableWhy`)."""
        self._facts.why = why
        pytest.skip(reason)

    def run(self, body: Callable[[], Awaitable[None]]) -> None:
        """Run ``body`` once on a fresh event loop, as one example."""
        self.counted()
        anyio.run(body)

    def given(
        self,
        strategy: SearchStrategy[T],
        body: Callable[[T], Awaitable[None]],
        *,
        name: str,
        max_examples: int | None = None,
    ) -> None:
        """Run ``body`` on examples of ``strategy``, each on a fresh event loop.

        ``name`` is what the shrunk reproduction in the report calls the check; ``max_examples``
        overrides the profile's for checks whose examples cost far more than most.
        """

        def check(example: T) -> None:
            self.counted()
            try:
                anyio.run(body, example)
            except BaseException as exc:
                if uncontained(exc):
                    raise escaped(exc) from exc
                raise

        check.__name__ = check.__qualname__ = name
        derandomize = self.session.seed is None
        settings = self.session.profile.settings(max_examples=max_examples, derandomize=derandomize)
        test = settings(given(strategy)(check))
        if self.session.seed is not None:
            test = seed(self.session.seed)(test)
        test()


@pytest.fixture(name="kit")
def kit_fixture(request: pytest.FixtureRequest) -> Kit:
    """The per-check helper ``kit``; kit check modules import this fixture."""
    return Kit(request.config.stash[SESSION], request.node)
