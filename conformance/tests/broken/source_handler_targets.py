"""Breaks source.handler-targets: handler_targets() leaves out a handler provide() names."""

from __future__ import annotations

from mcp_conformance.reference._example import example_collection
from mcp_core.elements import ElementCollection, ElementKind


class _ForgetfulTargets:
    def kinds(self) -> ElementKind:
        return example_collection().kinds

    async def provide(self) -> ElementCollection:
        return example_collection()

    def handler_targets(self) -> frozenset[str]:
        return frozenset({"pkg.somewhere:else"})


def make_source() -> _ForgetfulTargets:
    """A source whose declared handler targets miss the ones it provides."""
    return _ForgetfulTargets()
