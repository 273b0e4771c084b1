"""``visibility.parts`` for a rule that composes others (a ``--mcp-visibility`` target).

A combinator's list decision is a boolean function of its parts' list decisions: ``all_of`` is
``all``, ``any_of`` is ``any``, ``not_`` is the negation of its part. The rule declares which
function it is (``Capabilities(decides=...)``, see :func:`mcp_conformance.declare`); the kit
builds it over one to four parts and asks it about every combination of their decisions (each
part deciding differently for two refs and two sessions, so a rule that asks a part about the
wrong ref or session answers wrongly too), and compares each answer with the declared function.
``visibility.uri-narrows`` judges the URI decisions, which it learns from the rule itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Final

from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation, awaited
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._rules import ListKey, Part
from mcp_core.elements import ElementKind, ElementRef
from mcp_core.visibility import SessionInfo

_REFS: Final = (
    ElementRef(ElementKind.TOOL, "t"),
    ElementRef(ElementKind.RESOURCE_TEMPLATE, "file:///{name}"),
)
_SESSIONS: Final = ("s1", "s2")
_NOT_DECLARED: Final = (
    "the rule declares no Capabilities(decides=...): which boolean function of its parts' list "
    "decisions it computes is not said, so the kit cannot judge its list decisions (declare it "
    "to have them checked)"
)


def _tables(count: int, row: tuple[bool, ...], asked: ListKey, other: int) -> list[Part]:
    """Parts deciding ``row`` at ``asked``; at every other question, the bits of ``other``."""
    questions = [(ref, sid) for ref in _REFS for sid in _SESSIONS]
    parts = []
    for index in range(count):
        listed = {
            key
            for number, key in enumerate(questions)
            if key != asked and (other >> (number * count + index)) & 1
        }
        if row[index]:
            listed.add(asked)
        parts.append(Part(name=f"part {index}", listed=frozenset(listed)))
    return parts


@checks("visibility.parts")
def test_visibility_parts(kit: Kit) -> None:
    """A composed rule lists an element exactly as its declared function of its parts' decisions."""
    decides = kit.capabilities.decides
    if decides is None:
        kit.not_applicable(_NOT_DECLARED, why="declared")

    async def body(example: tuple[int, int, int]) -> None:
        count, asked_index, other = example
        asked = [(ref, sid) for ref in _REFS for sid in _SESSIONS][asked_index]
        for row in itertools.product((False, True), repeat=count):
            await _judge(kit, decides, _tables(count, row, asked, other), row, asked)

    examples = st.tuples(
        st.integers(min_value=1, max_value=4),
        st.integers(min_value=0, max_value=len(_REFS) * len(_SESSIONS) - 1),
        st.integers(min_value=0, max_value=2**16 - 1),
    )
    kit.given(examples, body, name="visibility_parts")


async def _judge(
    kit: Kit,
    decides: Callable[[Sequence[bool]], bool],
    parts: list[Part],
    row: tuple[bool, ...],
    asked: ListKey,
) -> None:
    count = len(parts)
    rule: Any = kit.target.factory(parts)  # duck-typed: its answer is checked
    ref, sid = asked
    answer: bool = await awaited(
        rule.is_visible(ref, SessionInfo(session_id=sid)), bool, what="is_visible(ref, session)"
    )
    expected = bool(decides(list(row)))
    if answer != expected:
        decisions = ", ".join(
            f"part {index}: {'yes' if d else 'no'}" for index, d in enumerate(row)
        )
        raise LawViolation(
            f"asked about {ref} for session {sid}, the rule over {count} parts ({decisions}) "
            f"answers {answer}, but the function it declares "
            f"({getattr(decides, '__qualname__', repr(decides))}) of those decisions is "
            f"{expected}: a composed rule lists an element as its parts' decisions say"
        )
