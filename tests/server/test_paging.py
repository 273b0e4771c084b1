"""Pagination: keyset cursors over immutable snapshots (mcp_core.server._paging)."""

from __future__ import annotations

import base64
import json

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef, HandlerRef, Tool
from mcp_core.registry import Registry
from mcp_core.server import RequestHandlers
from mcp_core.server._errors import InvalidCursorError
from mcp_core.server._paging import CursorCodec, EncodedItems, Page, Snapshot, SnapshotCache
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, predicate

SESSION = SessionInfo(session_id="s")
NAMES = st.text(alphabet="abcdefgh", min_size=1, max_size=3)


def tool(name: str) -> Element:
    """A tool element named ``name``."""
    return Element(
        definition=Tool(name=name, input_schema={"type": "object"}), handler=HandlerRef("m:f")
    )


class _NoInvoker:
    """Lists never invoke anything."""


def handlers_over(registry: Registry, page_size: int | None) -> RequestHandlers:
    """Request handlers over ``registry`` (lists only)."""
    return RequestHandlers(registry, registry, invoker=_NoInvoker(), page_size=page_size)  # type: ignore[arg-type]  # lists never invoke


class TestCursorCodec:
    """Cursors are opaque, integrity-checked and tied to one list."""

    def test_round_trip(self) -> None:
        """A cursor decodes to the key it was made from, for its list."""
        codec = CursorCodec(b"secret")
        assert codec.decode("tools", codec.encode("tools", "näme/ü")) == "näme/ü"

    def test_foreign_list_is_refused(self) -> None:
        """A tools cursor is not a prompts cursor."""
        codec = CursorCodec(b"secret")
        with pytest.raises(InvalidCursorError, match="issued for tools"):
            codec.decode("prompts", codec.encode("tools", "a"))

    def test_other_server_is_refused(self) -> None:
        """A cursor signed with another secret is refused."""
        with pytest.raises(InvalidCursorError, match="another server"):
            CursorCodec(b"a").decode("tools", CursorCodec(b"b").encode("tools", "x"))

    @pytest.mark.parametrize("cursor", ["", "garbage", "a.b.c", "!!!.???", "e30.AAAA"])
    def test_malformed_is_refused(self, cursor: str) -> None:
        """Anything that is not an issued cursor is refused with InvalidCursorError."""
        with pytest.raises(InvalidCursorError):
            CursorCodec(b"s").decode("tools", cursor)

    def test_tampered_payload_is_refused(self) -> None:
        """Changing the key inside a cursor breaks its MAC."""
        codec = CursorCodec(b"s")
        body, mac = codec.encode("tools", "a").split(".")
        forged = (
            base64.urlsafe_b64encode(json.dumps([1, "tools", "z"]).encode()).rstrip(b"=").decode()
        )
        assert body != forged
        with pytest.raises(InvalidCursorError):
            codec.decode("tools", f"{forged}.{mac}")


class TestSnapshot:
    """Snapshots are sorted by key and reused while the catalogue answer is the same."""

    def test_sorted_by_key(self) -> None:
        """Wire dicts come in key order whatever the catalogue order."""
        snapshot = Snapshot([tool("b").definition, tool("a").definition])
        assert [w["name"] for w in snapshot.wires] == ["a", "b"]

    def test_cache_reuses_same_and_equal_sequences(self) -> None:
        """The same sequence, or an equal fresh one, gets the cached snapshot."""
        cache = SnapshotCache()
        definitions = (tool("a").definition,)
        first = cache.of(definitions)
        assert cache.of(definitions) is first
        assert cache.of([tool("a").definition]) is first
        assert cache.of((tool("b").definition,)) is not first

    @given(
        descriptions=st.lists(st.text(max_size=6) | st.none(), min_size=1, max_size=6),
        numbers=st.lists(
            st.floats(allow_nan=False, allow_infinity=False) | st.integers(), max_size=3
        ),
        prepared=st.booleans(),
    )
    @settings(max_examples=60)
    def test_dumped_items_read_as_json_dumps_writes_them(
        self, descriptions: list[str | None], numbers: list[float], prepared: bool
    ) -> None:
        """A page's ``dumped()`` is ``json.dumps`` of its items, whether or not they were encoded.

        Once the preload has encoded an item, its dumped form shares those bytes when they are
        the same (ASCII text, no float written differently).
        """
        definitions = [
            Tool(
                name=f"t{index}",
                description=description,
                input_schema={"type": "object", "examples": numbers},
            )
            for index, description in enumerate(descriptions)
        ]
        snapshot = Snapshot(definitions)
        if prepared:
            for index in range(len(snapshot)):
                snapshot.encoded(index)
        items = EncodedItems(snapshot, range(len(snapshot)))
        expected = json.dumps(list(items), separators=(",", ":"), allow_nan=False).encode()
        assert items.dumped() == expected
        assert items.dumped() == expected  # made once, the same again
        if prepared:
            for index in range(len(snapshot)):
                same = snapshot.dumped(index) == snapshot.encoded(index)
                assert (snapshot.dumped(index) is snapshot.encoded(index)) == same

    async def test_visible_page_stops_after_proof_of_more(self) -> None:
        """A filtered page checks its elements plus one to know a next page exists."""
        snapshot = Snapshot([tool(n).definition for n in "abcdef"])
        checked: list[str] = []

        async def visible(ref: ElementRef) -> bool:
            checked.append(ref.key)
            return ref.key != "b"

        page = await Page.read(snapshot, after=None, size=2, visible=visible)
        assert [w["name"] for w in page.items] == ["a", "c"]
        assert page.resume_after == "c"
        assert checked == ["a", "b", "c", "d"]


class TestPrepare:
    """A snapshot prepared ahead of the first list is the one lists serve, every item encoded."""

    async def test_prepared_lists_serve_the_same_pages(self) -> None:
        """prepare_lists() lays out and encodes each list; walking it gives what a cold walk gives."""
        registry = Registry([(StaticSource(ElementCollection(tool(n) for n in "cab")), 0)])
        cold = await walk(handlers_over(registry, 2))
        handlers = handlers_over(registry, 2)
        await handlers.prepare_lists()
        snapshot = handlers._snapshots[ElementKind.TOOL].of(await registry.tools())
        assert all(snapshot._encoded)
        assert await walk(handlers) == cold == ["a", "b", "c"]

    async def test_a_change_while_preparing_is_what_the_next_list_serves(self) -> None:
        """A registration during preparation is listed: a prepared snapshot never hides a change."""
        registry = Registry(
            [(StaticSource(ElementCollection(tool(f"t{i:04}") for i in range(1500))), 0)]
        )
        handlers = handlers_over(registry, 500)
        async with anyio.create_task_group() as group:
            group.start_soon(handlers.prepare_lists)
            await anyio.lowlevel.checkpoint()  # preparation is under way
            await registry.register(tool("a-new-one"))
        names = await walk(handlers)
        assert names[0] == "a-new-one"
        assert len(names) == 1501


async def walk(handlers: RequestHandlers) -> list[str]:
    """Every tool name over all pages of tools/list."""
    names: list[str] = []
    cursor = None
    while True:
        page = await handlers.list_tools(cursor, SESSION)
        names.extend(t["name"] for t in page["tools"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return names


class TestWalk:
    """Walking every page yields every element exactly once."""

    @pytest.mark.parametrize("page_size", [1, 2, 3, 7, None])
    async def test_every_element_once(self, page_size: int | None) -> None:
        """Pages of any size cover the catalogue exactly once, in key order."""
        registry = Registry([(StaticSource(ElementCollection(tool(n) for n in "gfedcba")), 0)])
        assert await walk(handlers_over(registry, page_size)) == list("abcdefg")

    @settings(max_examples=60, deadline=None)
    @given(
        initial=st.sets(NAMES, min_size=1, max_size=12),
        changes=st.lists(st.tuples(st.booleans(), NAMES), max_size=8),
        page_size=st.integers(1, 4),
    )
    async def test_changes_between_pages_never_skip_or_repeat_unchanged(
        self, initial: set[str], changes: list[tuple[bool, str]], page_size: int
    ) -> None:
        """Registrations and removals between pages cost no unchanged element a miss or a repeat."""
        registry = Registry(
            [(StaticSource(ElementCollection(tool(n) for n in sorted(initial))), 0)]
        )
        handlers = handlers_over(registry, page_size)
        touched: set[str] = set()
        seen: list[str] = []
        cursor = None
        pending = list(changes)
        while True:
            page = await handlers.list_tools(cursor, SESSION)
            seen.extend(t["name"] for t in page["tools"])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
            if pending:
                add, name = pending.pop(0)
                touched.add(name)
                if add:
                    await registry.register(tool(name))
                else:
                    await registry.unregister(tool(name).ref)
        for name in initial - touched:
            assert seen.count(name) == 1, (name, seen)
        assert len(seen) == len(set(seen))

    async def test_visibility_filtered_walk(self) -> None:
        """With a visibility rule, pages hold only visible elements and still cover them once."""
        registry = Registry([(StaticSource(ElementCollection(tool(n) for n in "abcdefgh")), 0)])
        handlers = handlers_over(registry, 2)
        handlers.visibility = predicate(lambda ref, _session: ref.key in "aceg")
        assert await walk(handlers) == list("aceg")

    async def test_stale_cursor_after_last_key_removed_still_resumes(self) -> None:
        """A cursor whose key was removed resumes at the next key."""
        registry = Registry()
        for name in "abcd":
            await registry.register(tool(name))
        handlers = handlers_over(registry, 2)
        first = await handlers.list_tools(None, SESSION)
        await registry.unregister(tool("b").ref)
        second = await handlers.list_tools(first["nextCursor"], SESSION)
        assert [t["name"] for t in second["tools"]] == ["c", "d"]
        assert "nextCursor" not in second
