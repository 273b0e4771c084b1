"""SharedSource: registrations every worker serves, and what whoever writes the store cannot do.

An attacker who can write the shared store (Redis) writes entries: forged without the secret,
copied under another element's key, naming a handler off the allow-list. None is served; each is
a diagnostic. A writer that cannot reach the store is told so; nothing is silently dropped.
"""

from __future__ import annotations

import time

import pytest

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    Tool,
)
from mcp_core.errors import CacheStoreError, InvalidElementError, SourceUnavailableError
from mcp_core.sources import SharedSource, lookup_in
from mcp_core.sources._entries import EntryCodec
from mcp_core.stores import MemoryStore

SECRET = b"k" * 32


def tool(name: str, target: str = "greetings:Template") -> Element:
    """A tool named ``name`` whose handler is ``target``."""
    return Element(
        definition=Tool(name=name, input_schema={"type": "object"}), handler=HandlerRef(target)
    )


class BrokenStore:
    """A listing store whose every call fails, as an unreachable Redis does."""

    async def get(self, key: str) -> bytes | None:
        raise CacheStoreError("Redis is not answering", key=key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        raise CacheStoreError("Redis is not answering", key=key)

    async def delete(self, key: str) -> bool:
        raise CacheStoreError("Redis is not answering", key=key)

    async def delete_prefix(self, prefix: str) -> int:
        raise CacheStoreError("Redis is not answering", key=prefix)

    async def entries(self, prefix: str) -> dict[str, bytes]:
        raise CacheStoreError("Redis is not answering", key=prefix)


async def test_registrations_are_shared_through_the_store() -> None:
    """What one object registers, another over the same store provides; unregister removes it."""
    store = MemoryStore()
    writer = SharedSource(store, secret=SECRET)
    reader = SharedSource(store, secret=SECRET)
    await writer.register(tool("one"))
    await writer.register(tool("two"))
    listed = [e.ref.key for e in await reader.provide()]
    assert await writer.unregister(ElementRef.tool("one")) is True
    assert await writer.unregister(ElementRef.tool("one")) is False
    assert listed == ["one", "two"]
    assert [e.ref.key for e in await reader.provide()] == ["two"]
    assert reader.diagnostics() == ()


async def test_listeners_hear_each_write_and_are_awaited() -> None:
    """register/unregister announce the kind and wait for what the listener returns."""
    shared = SharedSource(MemoryStore(), secret=SECRET)
    heard: list[ElementKind] = []

    async def taken_in() -> None:
        heard.append(ElementKind.NONE)

    def listener(kinds: ElementKind) -> object:
        heard.append(kinds)
        return taken_in()

    shared.subscribe(listener)
    await shared.register(tool("one"))
    await shared.unregister(ElementRef.tool("one"))
    assert heard == [ElementKind.TOOL, ElementKind.NONE, ElementKind.TOOL, ElementKind.NONE]


async def test_an_entry_forged_without_the_secret_is_not_served() -> None:
    """An attacker writing Redis without the secret gets nothing served, and a diagnostic."""
    store = MemoryStore()
    shared = SharedSource(store, secret=SECRET)
    await shared.register(tool("good"))
    key = shared._key(ElementRef.tool("evil"))
    body = ElementCollection([tool("evil", "subprocess:getoutput")]).to_json()
    forged = EntryCodec(b"x" * 32, max_bytes=1 << 20).encode(key, 0.0, body, ElementKind.TOOL)
    await store.set(key, forged)
    served = [e.ref.key for e in await shared.provide()]
    assert served == ["good"]
    assert [d.kind for d in shared.diagnostics()] == ["skipped"]
    assert "is not authenticated by the secret" in shared.diagnostics()[0].message


async def test_an_entry_copied_under_another_key_is_not_served() -> None:
    """A genuine entry moved to another element's key fails its MAC (the key is signed)."""
    store = MemoryStore()
    shared = SharedSource(store, secret=SECRET)
    await shared.register(tool("good"))
    original = shared._key(ElementRef.tool("good"))
    await store.set(shared._key(ElementRef.tool("other")), await store.get(original) or b"")
    assert [e.ref.key for e in await shared.provide()] == ["good"]
    assert len(shared.diagnostics()) == 1


async def test_the_allow_list_holds_on_write_and_on_read() -> None:
    """A handler off the allow-list is refused by register, and not served if found in the store."""
    store = MemoryStore()
    strict = SharedSource(store, handlers={"greetings:Template"})
    open_writer = SharedSource(store, handlers={"greetings:Template", "os:system"})
    with pytest.raises(InvalidElementError, match="not on the allow-list"):
        await strict.register(tool("bad", "os:system"))
    await open_writer.register(tool("bad", "os:system"))
    await strict.register(tool("fine"))
    assert [e.ref.key for e in await strict.provide()] == ["fine"]
    assert "not on the allow-list" in strict.diagnostics()[0].message


async def test_refuses_live_handlers_and_undeclared_kinds() -> None:
    """Shared elements name their handlers; a kind outside ``kinds`` is refused."""
    shared = SharedSource(MemoryStore(), secret=SECRET, kinds=ElementKind.TOOL)
    with pytest.raises(InvalidElementError, match="never hold them"):
        await shared.register(
            Element(definition=Tool(name="t", input_schema={"type": "object"}), handler=print)
        )
    with pytest.raises(InvalidElementError, match="kind prompt"):
        await shared.register(Element(definition=Prompt(name="p"), handler=HandlerRef("m:f")))


async def test_an_unreachable_store_is_never_silent() -> None:
    """Reading: SourceUnavailableError (a registry keeps what it had); writing: CacheStoreError."""
    shared = SharedSource(BrokenStore(), secret=SECRET)
    with pytest.raises(SourceUnavailableError, match="cannot read its registrations"):
        await shared.provide()
    with pytest.raises(CacheStoreError):
        await shared.register(tool("lost"))


async def test_lookup_agrees_with_provide() -> None:
    """lookup(ref) reads one entry and answers exactly what provide() holds at ref, forgeries too."""
    store = MemoryStore()
    shared = SharedSource(store, secret=SECRET, handlers={"greetings:Template"})
    await shared.register(tool("good"))
    key = shared._key(ElementRef.tool("evil"))
    body = ElementCollection([tool("evil", "subprocess:getoutput")]).to_json()
    forged = EntryCodec(b"x" * 32, max_bytes=1 << 20).encode(key, 0.0, body, ElementKind.TOOL)
    await store.set(key, forged)
    await store.set(
        shared._key(ElementRef.tool("copy")),
        await store.get(shared._key(ElementRef.tool("good"))) or b"",
    )
    provided = await shared.provide()
    for name in ("good", "evil", "copy", "absent"):
        ref = ElementRef.tool(name)
        assert await shared.lookup(ref) == provided.get(ref)
        assert await lookup_in(shared, ref) == provided.get(ref)
    assert (await shared.lookup(ElementRef.tool("good"))) is not None


async def test_lookup_on_an_unreachable_store_is_never_silent() -> None:
    """A lookup the store cannot answer is SourceUnavailableError, never a missing element."""
    shared = SharedSource(BrokenStore(), secret=SECRET)
    with pytest.raises(SourceUnavailableError, match="cannot read its registration"):
        await shared.lookup(ElementRef.tool("any"))


def test_needs_a_secret_or_an_allow_list() -> None:
    """Without either, anyone who can write the store could name any code: refused."""
    with pytest.raises(ValueError, match="needs a secret"):
        SharedSource(MemoryStore())
    with pytest.raises(TypeError, match="ListingStore"):
        SharedSource(object(), secret=SECRET)  # type: ignore[arg-type]


class TestRedisWriterWithoutTheSecret:
    """Attacker: a Redis writer without the secret, who can copy, replay and delete entries.

    Signatures held, freshness did not: before, a replayed old entry resurrected an unregistered
    tool on every worker and rolled a replaced one back.
    """

    async def test_a_replayed_entry_does_not_resurrect_an_unregistered_tool(self) -> None:
        """Unregister writes a tombstone; the old entry put back is older, refused, overwritten."""
        store = MemoryStore()
        writer = SharedSource(store, secret=SECRET)
        reader = SharedSource(store, secret=SECRET)
        await writer.register(tool("one"))
        key = writer._key(ElementRef.tool("one"))
        recorded = await store.get(key)
        assert recorded is not None
        assert [e.ref.key for e in await reader.provide()] == ["one"]
        assert await writer.unregister(ElementRef.tool("one")) is True
        assert list(await reader.provide()) == []
        await store.set(key, recorded)  # the replay
        served = [list(await source.provide()) for source in (reader, writer)]
        looked_up = await lookup_in(reader, ElementRef.tool("one"))
        assert served == [[], []]
        assert looked_up is None
        assert await store.get(key) != recorded  # the tombstone was written back
        assert any(
            "older than the one this worker holds" in d.message for d in reader.diagnostics()
        )

    async def test_a_replayed_entry_does_not_roll_a_replaced_one_back(self) -> None:
        """Register twice; the first entry put back: every holder serves the second."""
        store = MemoryStore()
        writer = SharedSource(store, secret=SECRET)
        reader = SharedSource(store, secret=SECRET)
        await writer.register(tool("one", "greetings:First"))
        key = writer._key(ElementRef.tool("one"))
        first = await store.get(key)
        assert first is not None
        await reader.provide()
        await writer.register(tool("one", "greetings:Second"))
        await reader.provide()
        await store.set(key, first)
        served = await reader.provide()
        looked_up = await lookup_in(writer, ElementRef.tool("one"))
        assert served.get(ElementRef.tool("one")) == tool("one", "greetings:Second")
        assert looked_up == tool("one", "greetings:Second")

    async def test_a_deleted_entry_is_written_back_by_repair(self) -> None:
        """DEL of an entry: repair() writes back the one held and says so (True)."""
        store = MemoryStore()
        writer = SharedSource(store, secret=SECRET)
        await writer.register(tool("one"))
        key = writer._key(ElementRef.tool("one"))
        assert await writer.repair() is False
        await store.delete(key)
        assert await writer.repair() is True
        joined = SharedSource(store, secret=SECRET)  # a worker that joins later
        assert [e.ref.key for e in await joined.provide()] == ["one"]

    async def test_versions_go_up_whatever_the_clock_says(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A writer whose clock is behind dates its entry after the newest one it finds."""
        store = MemoryStore()
        ahead, behind = SharedSource(store, secret=SECRET), SharedSource(store, secret=SECRET)
        await ahead.register(tool("one", "greetings:First"))
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() - 30)
        await behind.register(tool("one", "greetings:Second"))
        monkeypatch.setattr(time, "time", real)
        served = await ahead.provide()
        assert served.get(ElementRef.tool("one")) == tool("one", "greetings:Second")

    async def test_a_flood_of_junk_is_one_log_line(self, caplog: pytest.LogCaptureFixture) -> None:
        """500 forged entries: 500 diagnostics, one warning line."""
        store = MemoryStore()
        shared = SharedSource(store, secret=SECRET)
        for n in range(500):
            await store.set(f"shared:shared:{n:032x}", b"junk")
        with caplog.at_level("WARNING", "mcp_core.sources"):
            await shared.provide()
            await shared.provide()
        assert len(shared.diagnostics()) == 500
        assert len(caplog.records) == 1
