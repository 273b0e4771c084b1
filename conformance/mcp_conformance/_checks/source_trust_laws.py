"""Declared handler targets: what a source says it can produce covers what it provides.

``handler_targets()`` is optional (``HandlerTargets``): a source that cannot say which handlers it
produces claims nothing, and the law is N/A for it. A wrapper is asked through
``handler_targets_of``, which follows ``inner`` the way ``CachedSource`` does when it decides
whether a cached entry may be trusted.
"""

from __future__ import annotations

from typing import Final

from mcp_conformance._checks._subjects import Subject, for_each_subject, provide
from mcp_conformance._contract import LawViolation
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance.faults import MutableSource
from mcp_core.elements import ElementCollection, HandlerRef
from mcp_core.sources import handler_targets_of

_NOT_CLAIMED: Final = (
    "optional capability not implemented: it has no handler_targets() (HandlerTargets), so it "
    "claims no set of handlers"
)


@checks("source.handler-targets")
def test_source_handler_targets(kit: Kit) -> None:
    """Every HandlerRef provide() returns is among the declared handler targets."""
    sample = (
        kit.target.factory() if kit.target.kind == "source" else kit.target.factory(MutableSource())
    )
    if handler_targets_of(sample) is None:
        kit.not_applicable(_NOT_CLAIMED, why="declared")

    async def body(subject: Subject) -> None:
        declared = handler_targets_of(subject.source)
        provided = await provide(subject.source)
        if declared is None or not isinstance(provided, ElementCollection):
            return  # source.returns-collection reports a collection that is none
        for element in provided:
            for provider in (element.handler, *(element.completions or {}).values()):
                if isinstance(provider, HandlerRef) and provider.target not in declared:
                    raise LawViolation(
                        f"{element.ref} names the handler {provider.target!r}, which "
                        f"handler_targets() does not declare ({sorted(declared)[:5]})"
                    )

    for_each_subject(kit, body, name="source_handler_targets")
