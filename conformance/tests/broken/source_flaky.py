"""Breaks source.idempotent: now and then provide() fails with a plain exception.

Every seventh call raises ``ConnectionError`` (a flaky backend reported as a crash, rather than
as ``SourceUnavailableError``); the calls in between are fine, so two calls in a row usually agree.
"""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _FlakySource:
    def __init__(self) -> None:
        self.calls = 0

    def kinds(self) -> ElementKind:
        return example_collection().kinds

    async def provide(self) -> ElementCollection:
        self.calls += 1
        if self.calls % 7 == 0:
            raise ConnectionError("the backend dropped the connection")
        return example_collection()


def make_source() -> _FlakySource:
    """A source failing on every seventh provide()."""
    return _FlakySource()
