"""ToolIndex: its ranking is SQLite's bm25() over the visible tools alone, and it follows changes.

The laws, on generated catalogues, queries and visibility rules:

- **reference**: a session's hits are, in order and with their scores, what SQLite's own
  ``bm25()`` gives over a fresh table holding only the tools that session may list;
- **hidden is missing**: searching a catalogue whose extra tools are hidden from the session
  answers exactly (names, order, scores) as searching the catalogue without them;
- **follows the registry**: after any sequence of source reloads and runtime writes, the index
  answers as one built afresh over the new catalogue; a shadowed tool is never found.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core.elements import Element, ElementCollection, ElementRef, Tool
from mcp_core.registry import Registry
from mcp_core.search import SearchHit, ToolIndex
from mcp_core.search._index import MAX_LIMIT
from mcp_core.sources import StaticSource
from mcp_core.visibility import (
    ALWAYS,
    NEVER,
    ElementVisibility,
    SessionInfo,
    all_of,
    by_tag,
    not_,
    predicate,
    scoped_by_tag,
)
from tests.search._reference import reference_ranking

VOCABULARY = ("send", "email", "get", "weather", "list", "file", "user", "Report", "alpha", "ß")
SESSIONS = (
    SessionInfo(session_id="a", principal="ann", scopes=frozenset({"mail"})),
    SessionInfo(session_id="b", principal="bob"),
)


def _handler(**arguments: object) -> str:
    return "ok"


text = st.lists(st.sampled_from(VOCABULARY), max_size=6).map(" ".join)


@st.composite
def tools(draw: st.DrawFn, *, max_size: int = 25) -> list[Element]:
    """Tools whose names, titles, descriptions, parameters and tags share a small vocabulary."""
    count = draw(st.integers(0, max_size))
    found = []
    for index in range(count):
        stem = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3))
        name = "_".join(w for w in stem if w.isascii()) or "tool"
        tool = Tool(
            name=f"{name}_{index}",
            title=draw(st.none() | text),
            description=draw(st.none() | text),
            input_schema={
                "type": "object",
                "properties": {
                    draw(st.sampled_from(("to", "city", "path", "userId"))): {
                        "type": "string",
                        "description": draw(text),
                    }
                },
            },
        )
        tags = draw(st.sets(st.sampled_from(("secret", "scope:mail", "weather", "public"))))
        found.append(Element(definition=tool, handler=_handler, tags=frozenset(tags)))
    return found


def _rules(registry: Registry) -> dict[str, ElementVisibility]:
    """Several rules, per element and per session."""
    parity = predicate(lambda ref, session: zlib.crc32(ref.key.encode()) % 2 == 0)
    return {
        "always": ALWAYS,
        "never": NEVER,
        "parity": parity,
        "hide-secret": by_tag(registry, hide=["secret"]),
        "scoped": scoped_by_tag(registry),
        "per-principal": predicate(
            lambda ref, session: (session.principal == "ann") == ("email" in ref.key)
        ),
        "composed": all_of(not_(parity), by_tag(registry, hide=["weather"])),
    }


RULES = ("always", "never", "parity", "hide-secret", "scoped", "per-principal", "composed")


async def _visible(
    elements: Sequence[Element], rule: ElementVisibility, session: SessionInfo
) -> list[Element]:
    return [e for e in elements if await rule.is_visible(e.ref, session)]


def _same(hits: Sequence[SearchHit], expected: list[tuple[str, float]]) -> None:
    assert [hit.tool.name for hit in hits] == [name for name, _ in expected[: len(hits)]]
    assert len(hits) == min(len(expected), MAX_LIMIT)
    for hit, (_, score) in zip(hits, expected, strict=False):
        assert hit.score == pytest.approx(score, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools(), st.sampled_from(RULES), st.sampled_from(SESSIONS), text)
def test_a_session_ranking_is_sqlite_bm25_over_its_visible_tools(
    elements: list[Element], rule_name: str, session: SessionInfo, query: str
) -> None:
    """Law reference: hits, order and scores are bm25() over a table of the visible tools."""

    async def check() -> None:
        registry = Registry([(StaticSource(ElementCollection(elements)), 0)])
        rule = _rules(registry)[rule_name]
        index = ToolIndex(registry)
        hits = await index.search(query, session, rule, limit=MAX_LIMIT)
        expected = reference_ranking(await _visible(elements, rule, session), query)
        _same(hits, expected)
        index.close()

    anyio.run(check)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools(), tools(), st.sampled_from(SESSIONS), text, st.integers(1, MAX_LIMIT))
def test_hidden_tools_change_nothing_a_session_sees(
    shown: list[Element], extra: list[Element], session: SessionInfo, query: str, limit: int
) -> None:
    """Law hidden-is-missing: hidden tools change no hit, count, order or score."""
    hidden = [
        Element(
            definition=Tool(
                name=f"hidden_{e.ref.key}",
                title=e.definition.title,
                description=e.definition.description,
                input_schema=e.definition.input_schema,  # type: ignore[union-attr]  # tools
            ),
            handler=_handler,
            tags=e.tags,
        )
        for e in extra
    ]
    rule = predicate(lambda ref, _session: not ref.key.startswith("hidden_"))

    async def check() -> None:
        with_hidden = Registry([(StaticSource(ElementCollection([*shown, *hidden])), 0)])
        without = Registry([(StaticSource(ElementCollection(shown)), 0)])
        seen = await ToolIndex(with_hidden).search(query, session, rule, limit=limit)
        bare = await ToolIndex(without).search(query, session, ALWAYS, limit=limit)
        assert seen == bare  # names, order and scores, to the last bit

    anyio.run(check)


class _Swappable:
    """A source whose collection a test replaces, then reloads."""

    def __init__(self, collection: ElementCollection) -> None:
        self.collection = collection

    def kinds(self) -> Any:
        return self.collection.kinds

    async def provide(self) -> ElementCollection:
        return self.collection


def _renamed(elements: list[Element], prefix: str) -> list[Element]:
    return [
        Element(
            definition=Tool(
                name=f"{prefix}{e.ref.key}",
                title=e.definition.title,
                description=e.definition.description,
                input_schema=e.definition.input_schema,  # type: ignore[union-attr]  # tools
            ),
            handler=_handler,
            tags=e.tags,
        )
        for e in elements
    ]


Step = tuple[str, int, list[Element]]
steps = st.lists(
    st.tuples(
        st.sampled_from(("reload", "register", "unregister")), st.integers(0, 2), tools(max_size=8)
    ),
    max_size=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools(max_size=10), tools(max_size=10), tools(max_size=10), steps, text)
def test_the_index_follows_reloads_and_writes_as_a_fresh_one(
    first: list[Element], second: list[Element], third: list[Element], plan: list[Step], query: str
) -> None:
    """Law follows-the-registry: after reloads and writes, as a fresh index over the catalogue."""

    async def check() -> None:
        # Three sources whose names overlap (shared prefixes), so precedence decides winners.
        sources = [
            _Swappable(ElementCollection(_renamed(part, ""))) for part in (first, second, third)
        ]
        registry = Registry(
            [(source, priority) for source, priority in zip(sources, (2, 1, 1), strict=True)]
        )
        index = ToolIndex(registry)
        await registry.load()
        await index.refresh()
        session = SESSIONS[0]
        for action, which, elements in plan:
            if action == "reload":
                sources[which].collection = ElementCollection(_renamed(elements, ""))
                await registry.reload(sources[which])
            elif action == "register" and elements:
                await registry.register(elements[0])
            elif action == "unregister" and elements:
                await registry.unregister(elements[0].ref)
            current = await index.search(query, session, limit=MAX_LIMIT)
            listed = [e for e in await registry.elements() if isinstance(e.definition, Tool)]
            _same(current, reference_ranking(listed, query))
        index.close()

    anyio.run(check)


async def test_a_shadowed_tool_is_never_found() -> None:
    """Only the winner of a name is indexed: the shadowed tool's words find nothing."""

    def tool(description: str) -> Element:
        definition = Tool(name="forecast", description=description, input_schema={"type": "object"})
        return Element(definition=definition, handler=_handler)

    registry = Registry(
        [
            (StaticSource(ElementCollection([tool("weather")])), 2),
            (StaticSource(ElementCollection([tool("volcano")])), 1),
        ]
    )
    index = ToolIndex(registry)
    session = SESSIONS[0]
    assert [h.tool.description for h in await index.search("weather", session)] == ["weather"]
    assert await index.search("volcano", session) == ()


async def test_a_runtime_registration_that_only_retags_a_tool_is_followed() -> None:
    """Tags are indexed words: re-registering a tool with other tags rewrites its row.

    The definition does not change, so no change event comes (lists are the same); the
    registry tells source listeners instead, and the index reads it (found by the reload law).
    """
    definition = Tool(name="send_0", input_schema={"type": "object"})
    registry = Registry(
        [(StaticSource(ElementCollection([Element(definition=definition, handler=_handler)])), 0)]
    )
    index = ToolIndex(registry)
    session = SESSIONS[0]
    assert await index.search("secret", session) == ()
    await registry.register(
        Element(definition=definition, handler=_handler, tags=frozenset({"secret"}))
    )
    assert [h.tool.name for h in await index.search("secret", session)] == ["send_0"]
    await registry.unregister(definition.ref)
    assert await index.search("secret", session) == ()


@pytest.mark.parametrize(
    ("query", "limit", "message"),
    [
        ("x" * 1001, 3, "at most 1000 are searched"),
        (" ".join(f"w{i}" for i in range(40)), 3, "at most 32 are searched"),
        ("mail", 0, "limit must be an integer from 1 to 50"),
        ("mail", 51, "limit must be an integer from 1 to 50"),
    ],
)
async def test_bad_queries_say_what_to_do(query: str, limit: int, message: str) -> None:
    """A query too long or too wordy, or a limit out of range, is refused with the bound."""
    index = ToolIndex(Registry())
    with pytest.raises(ValueError, match=message):
        await index.search(query, SESSIONS[0], limit=limit)


async def test_a_failing_rule_fails_the_search_and_the_next_one_works() -> None:
    """A raising rule fails that search; the index is unharmed."""
    registry = Registry(
        [
            (
                StaticSource(
                    ElementCollection(
                        [
                            Element(
                                definition=Tool(name="send_mail", input_schema={"type": "object"}),
                                handler=_handler,
                            )
                        ]
                    )
                ),
                0,
            )
        ]
    )
    index = ToolIndex(registry)

    def broken(ref: ElementRef, session: SessionInfo) -> bool:
        raise RuntimeError("rule down")

    with pytest.raises(RuntimeError, match="rule down"):
        await index.search("mail", SESSIONS[0], predicate(broken))
    assert [h.tool.name for h in await index.search("mail", SESSIONS[0])] == ["send_mail"]


async def test_a_search_whose_rows_change_while_the_rule_is_asked_starts_again() -> None:
    """The catalogue changes while one search awaits its rule: it answers from the new one."""

    def tool(name: str, description: str) -> Element:
        definition = Tool(name=name, description=description, input_schema={"type": "object"})
        return Element(definition=definition, handler=_handler)

    source = _Swappable(
        ElementCollection([tool("send_mail", "send mail"), tool("get_file", "get a file")])
    )
    registry = Registry([(source, 0)])
    index = ToolIndex(registry)
    await index.refresh()
    asked, release = anyio.Event(), anyio.Event()
    first = True

    async def slow(ref: ElementRef, session: SessionInfo) -> bool:
        nonlocal first
        if first:
            first = False
            asked.set()
            await release.wait()
        return True

    results: list[tuple[SearchHit, ...]] = []

    async def search() -> None:
        results.append(await index.search("mail", SESSIONS[0], predicate(slow)))

    async with anyio.create_task_group() as group:
        group.start_soon(search)
        await asked.wait()
        source.collection = ElementCollection(
            [tool("send_mail", "send mail now"), tool("read_mail", "read mail"), tool("x", "y")]
        )
        await registry.reload(source)
        await index.refresh()  # the rows change under the waiting search
        release.set()
    listed = [e for e in await registry.elements() if isinstance(e.definition, Tool)]
    _same(results[0], reference_ranking(listed, "mail"))
    assert {hit.tool.name for hit in results[0]} == {"send_mail", "read_mail"}


async def test_a_change_of_tags_alone_is_followed() -> None:
    """A winner replaced by one with the same definition and other tags is indexed anew.

    Registry change events cover what the lists show (definitions), so the index also follows
    which sources changed: the tags it indexes are not in the definition.
    """
    definition = Tool(name="report", description="a weekly report", input_schema={"type": "object"})
    tagged = Element(definition=definition, handler=_handler, tags=frozenset({"finance"}))
    plain = Element(definition=definition, handler=_handler)
    low, high = _Swappable(ElementCollection([tagged])), _Swappable(ElementCollection([]))
    registry = Registry([(high, 2), (low, 1)])
    index = ToolIndex(registry)
    await registry.load()
    assert [hit.tool.name for hit in await index.search("finance", SESSIONS[0])] == ["report"]
    high.collection = ElementCollection([plain])
    await registry.reload(high)
    assert await index.search("finance", SESSIONS[0]) == ()
    index.close()
