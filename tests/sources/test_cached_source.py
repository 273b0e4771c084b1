"""CachedSource: keys, TTL, stale serving, clearing and corrupt entries."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping

import pytest

from mcp_core.elements import ElementCollection, ElementKind, HandlerRef
from mcp_core.errors import CacheStoreError, NotSerializableError, SourceUnavailableError
from mcp_core.sources import (
    CachedSource,
    FilteredSource,
    IsolatedSource,
    PrefixedSource,
    StaticSource,
    ValidatedSource,
    diagnostics_of,
    handler_targets_of,
)
from mcp_core.sources._entries import CLOCK_SKEW, DEFAULT_MAX_ENTRY_BYTES, EntryCodec
from mcp_core.sources._trust import collection_targets
from mcp_core.stores import MemoryStore
from tests.strategies import BrokenStore, CountingSource, tool_element


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class ConfiguredSource:
    """A DiscoverySource stand-in: its output depends on configuration it reports."""

    def __init__(self, *packages: str) -> None:
        self.packages = packages
        self.provides = 0

    def __repr__(self) -> str:
        return f"ConfiguredSource({list(self.packages)!r})"

    def kinds(self) -> ElementKind:
        """Tools only."""
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        """One tool per package."""
        self.provides += 1
        return ElementCollection(tool_element(package) for package in self.packages)

    def cache_inputs(self) -> Mapping[str, object]:
        """The packages, which decide the output."""
        return {"packages": list(self.packages)}


def collection(*names: str) -> ElementCollection:
    """Tools with the given names."""
    return ElementCollection(tool_element(name) for name in names)


class TestCachedSource:
    """CachedSource serves fresh entries, refreshes stale ones, and degrades safely."""

    async def test_a_fresh_entry_spares_the_inner_source(self) -> None:
        """Within the TTL, provide() decodes the stored JSON and never calls the inner source."""
        inner = CountingSource(collection("a", "b"))
        source = CachedSource(inner, MemoryStore(), ttl=60)
        assert await source.provide() == inner.collection
        assert await source.provide() == inner.collection
        assert inner.provides == 1

    async def test_entries_are_shared_across_instances(self) -> None:
        """A second CachedSource with the same configuration reads the first one's entry."""
        store = MemoryStore()
        await CachedSource(ConfiguredSource("pkg"), store).provide()
        again = ConfiguredSource("pkg")
        assert await CachedSource(again, store).provide() == collection("pkg")
        assert again.provides == 0

    async def test_an_expired_entry_is_refreshed(self) -> None:
        """Past the TTL the inner source provides again and its result replaces the entry."""
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, MemoryStore(), ttl=10, clock=clock)
        await source.provide()
        inner.collection = collection("b")
        clock.now += 11
        assert await source.provide() == collection("b")
        assert await source.provide() == collection("b")
        assert inner.provides == 2

    async def test_entries_are_versioned_json_not_pickles(self) -> None:
        """The stored bytes are a JSON header line (with the inner kinds) and the collection's JSON."""
        store = MemoryStore()
        source = CachedSource(StaticSource(collection("a")), store, clock=Clock(5.0))
        await source.provide()
        raw = await store.get(source.cache_key)
        assert raw is not None
        header, _, body = raw.partition(b"\n")
        meta = json.loads(header)
        assert re.fullmatch(r"[0-9a-f]{64}", meta.pop("mac"))  # an HMAC-SHA256 (see TestTrust)
        assert meta == {"entry": "mcp-core/cached-collection", "stored_at": 5.0, "kinds": ["tool"]}
        assert ElementCollection.from_json(body) == collection("a")

    def test_kinds_never_touch_the_store_or_the_inner_provide(self) -> None:
        """kinds() is the inner source's, answered without providing or reading."""
        inner = CountingSource(collection("a"), ElementKind.TOOL | ElementKind.PROMPT)
        assert CachedSource(inner, BrokenStore()).kinds() == ElementKind.TOOL | ElementKind.PROMPT
        assert inner.provides == 0


class TestCachedSourceKeys:
    """Regression: the cache key covers every input that changes the output."""

    async def test_two_configurations_never_share_an_entry(self) -> None:
        """Same inner type, different cache_inputs(): each gets its own entry and its own content."""
        store = MemoryStore()
        first = CachedSource(ConfiguredSource("alpha"), store)
        second = CachedSource(ConfiguredSource("beta"), store)
        assert first.cache_key != second.cache_key
        assert await first.provide() == collection("alpha")
        assert await second.provide() == collection("beta")

    async def test_the_explicit_key_separates_entries(self) -> None:
        """Sources that look alike (no cache_inputs) are told apart by an explicit key."""
        store = MemoryStore()
        one = CachedSource(CountingSource(collection("one")), store, key="one")
        two = CachedSource(CountingSource(collection("two")), store, key="two")
        assert await one.provide() == collection("one")
        assert await two.provide() == collection("two")

    def test_the_inner_type_is_part_of_the_key(self) -> None:
        """Two inner types with equal cache_inputs() still get different keys."""
        store = MemoryStore()
        static = StaticSource(collection("a"))
        assert (
            CachedSource(static, store).cache_key
            != CachedSource(ValidatedSource(static), store).cache_key
        )

    def test_wrapper_configuration_reaches_the_key(self) -> None:
        """A wrapper's inner configuration is part of the key (no collision through nesting)."""
        store = MemoryStore()
        alpha = CachedSource(ValidatedSource(ConfiguredSource("alpha")), store)
        beta = CachedSource(ValidatedSource(ConfiguredSource("beta")), store)
        assert alpha.cache_key != beta.cache_key

    def test_the_versions_are_part_of_the_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Another mcp-core version reads another key under the same source prefix."""
        source = CachedSource(ConfiguredSource("pkg"), MemoryStore())
        before = source.cache_key
        monkeypatch.setattr("mcp_core.sources._cached.VERSION", "99.0.0")
        assert source.cache_key != before
        assert source.cache_key.startswith(source.key_prefix)
        assert before.startswith(source.key_prefix)

    def test_the_namespace_heads_the_key(self) -> None:
        """Keys start with the namespace, so a store can be shared with other users."""
        source = CachedSource(ConfiguredSource("pkg"), MemoryStore(), namespace="myapp")
        assert source.key_prefix.startswith("myapp:")

    def test_unjsonable_cache_inputs_are_refused_clearly(self) -> None:
        """cache_inputs() must be JSON-able; anything else raises a TypeError saying so."""

        class Odd(ConfiguredSource):
            def cache_inputs(self) -> Mapping[str, object]:
                return {"when": object()}

        with pytest.raises(TypeError, match="must be JSON-able"):
            _ = CachedSource(Odd("pkg"), MemoryStore()).cache_key


class TestCachedSourceClear:
    """Regression: clear() removes this source's entries and nobody else's."""

    async def test_clear_spares_other_users_of_a_shared_store(self) -> None:
        """Another configuration's entry, another namespace's and foreign keys all survive."""
        store = MemoryStore()
        mine = CachedSource(ConfiguredSource("alpha"), store)
        sibling = CachedSource(ConfiguredSource("beta"), store)
        neighbour = CachedSource(ConfiguredSource("alpha"), store, namespace="other-app")
        await mine.provide()
        await sibling.provide()
        await neighbour.provide()
        await store.set("unrelated", b"keep me")
        assert await mine.clear() == 1
        assert await store.get(mine.cache_key) is None
        assert await store.get(sibling.cache_key) is not None
        assert await store.get(neighbour.cache_key) is not None
        assert await store.get("unrelated") == b"keep me"

    async def test_clear_removes_entries_of_every_version(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An entry an older mcp-core version wrote for this source is removed too."""
        store = MemoryStore()
        source = CachedSource(ConfiguredSource("pkg"), store)
        await source.provide()
        monkeypatch.setattr("mcp_core.sources._cached.VERSION", "99.0.0")
        await source.provide()
        assert await source.clear() == 2

    async def test_clear_reports_store_failures(self) -> None:
        """Clearing is explicit, so a failing store raises rather than pretending."""
        with pytest.raises(CacheStoreError):
            await CachedSource(ConfiguredSource("pkg"), BrokenStore()).clear()


class TestCachedSourceStale:
    """Regression: an expired entry is served when the inner source fails, and only then."""

    async def test_serves_stale_after_ttl_when_inner_fails(self) -> None:
        """Past the TTL, an unavailable inner source yields the old collection and a diagnostic."""
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, MemoryStore(), ttl=10, clock=clock)
        await source.provide()
        clock.now += 3600
        inner.fail_with = SourceUnavailableError("database down")
        assert await source.provide() == collection("a")
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "stale"
        assert "database down" in diagnostic.message
        assert "3600s ago" in diagnostic.message

    async def test_any_exception_falls_back_to_stale(self) -> None:
        """Not only SourceUnavailableError: any Exception from the inner source falls back."""
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, MemoryStore(), ttl=10, clock=clock)
        await source.provide()
        clock.now += 11
        inner.fail_with = RuntimeError("bug")
        assert await source.provide() == collection("a")

    async def test_recovery_clears_the_stale_diagnostic(self) -> None:
        """Once the inner source provides again, the diagnostic goes and the entry is fresh."""
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, MemoryStore(), ttl=10, clock=clock)
        await source.provide()
        clock.now += 11
        inner.fail_with = SourceUnavailableError("down")
        await source.provide()
        inner.fail_with = None
        inner.collection = collection("b")
        assert await source.provide() == collection("b")
        assert source.diagnostics() == ()

    async def test_without_serve_stale_the_error_propagates(self) -> None:
        """serve_stale_on_error=False re-raises the inner source's error."""
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, MemoryStore(), ttl=10, serve_stale_on_error=False, clock=clock)
        await source.provide()
        clock.now += 11
        inner.fail_with = SourceUnavailableError("down")
        with pytest.raises(SourceUnavailableError):
            await source.provide()

    async def test_without_an_entry_the_error_propagates(self) -> None:
        """With nothing cached, the inner source's error reaches the caller unchanged."""
        inner = CountingSource(collection("a"))
        inner.fail_with = SourceUnavailableError("down")
        with pytest.raises(SourceUnavailableError, match="down"):
            await CachedSource(inner, MemoryStore(), ttl=10).provide()


class TestCachedSourceFaults:
    """Corrupt entries, failing stores and live handlers are handled without surprises."""

    @pytest.mark.parametrize(
        "garbage",
        [
            b"\x80\x81 not even text",
            b"no header line",
            b'{"entry": "something-else", "stored_at": 1}\n{}',
            b'{"entry": "mcp-core/cached-collection", "stored_at": "yesterday"}\n{}',
            b'{"entry": "mcp-core/cached-collection", "stored_at": 1e300}\n{"format": 1}',
        ],
    )
    async def test_a_corrupt_entry_is_a_miss_and_is_overwritten(
        self, garbage: bytes, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Regression: a corrupt entry never crashes; it is reported, skipped and replaced."""
        store = MemoryStore()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, store, ttl=60)
        await store.set(source.cache_key, garbage)
        with caplog.at_level(logging.WARNING, logger="mcp_core.sources"):
            assert await source.provide() == collection("a")
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "skipped"
        assert "corrupt" in diagnostic.message
        assert "corrupt" in caplog.text
        assert inner.provides == 1
        assert await source.provide() == collection("a")
        assert inner.provides == 1  # the entry was overwritten with a good one

    async def test_a_corrupt_stale_entry_does_not_hide_the_error(self) -> None:
        """If the inner source fails and the only entry is corrupt, its error propagates."""
        store = MemoryStore()
        clock = Clock()
        inner = CountingSource(collection("a"))
        inner.fail_with = SourceUnavailableError("down")
        source = CachedSource(inner, store, ttl=10, clock=clock)
        await store.set(
            source.cache_key, b'{"entry": "mcp-core/cached-collection", "stored_at": 0}\n{'
        )
        with pytest.raises(SourceUnavailableError):
            await source.provide()
        assert [d.kind for d in source.diagnostics()] == ["skipped"]

    async def test_a_failing_store_degrades_to_the_inner_source(self) -> None:
        """A store that is down costs the cache, not the source: provide() still answers."""
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, BrokenStore(), ttl=60)
        assert await source.provide() == collection("a")
        kinds = [d.kind for d in source.diagnostics()]
        assert kinds == ["unavailable", "unavailable"]  # the read, then the write

    async def test_live_handlers_cannot_be_cached(self) -> None:
        """A collection with a live handler raises NotSerializableError explaining CachedSource's need."""

        def handler() -> str:
            return "live"

        live = ElementCollection([tool_element("live", handler=handler)])
        with pytest.raises(
            NotSerializableError, match="needs elements whose handlers are references"
        ) as info:
            await CachedSource(StaticSource(live), MemoryStore()).provide()
        assert info.value.refs == (live.refs[0],)

    async def test_diagnostics_include_the_inner_sources(self) -> None:
        """The diagnostics list the cache's own notes, then the inner source's."""
        broken = tool_element(
            "bad", input_schema={"type": "object", "properties": {"x": {"type": 1}}}
        )
        inner = ValidatedSource(StaticSource(ElementCollection([broken, tool_element("ok")])))
        source = CachedSource(inner, MemoryStore())
        await source.provide()
        assert [d.kind for d in diagnostics_of(source)] == ["skipped"]

    def test_rejects_a_bad_ttl_or_namespace(self) -> None:
        """The ttl must be positive; the namespace non-empty without spaces."""
        static = StaticSource(ElementCollection())
        with pytest.raises(ValueError, match="ttl"):
            CachedSource(static, MemoryStore(), ttl=0)
        with pytest.raises(ValueError, match="namespace"):
            CachedSource(static, MemoryStore(), namespace="my app")

    def test_repr_nests_the_inner_source(self) -> None:
        """The repr reads like the expression, with non-default options."""
        source = CachedSource(ConfiguredSource("pkg"), MemoryStore(), key="v2", ttl=30)
        assert repr(source) == "CachedSource(ConfiguredSource(['pkg']), key='v2', ttl=30)"


class FailingStatic:
    """A source that could produce a collection's handlers, but is down."""

    def __init__(self, collection: ElementCollection) -> None:
        self.collection = collection

    def kinds(self) -> ElementKind:
        """The collection's kinds."""
        return self.collection.kinds

    def handler_targets(self) -> frozenset[str]:
        """The collection's handlers."""
        return collection_targets(self.collection)

    async def provide(self) -> ElementCollection:
        """Fails."""
        raise SourceUnavailableError("down")


def foreign_entry(source: CachedSource, collection: ElementCollection, stored_at: float) -> bytes:
    """An entry for ``source``'s key as another process (another key) would write it."""
    return EntryCodec(b"someone else", max_bytes=DEFAULT_MAX_ENTRY_BYTES).encode(
        source.cache_key, stored_at, collection.to_json()
    )


def planted(handler: str, *, name: str = "a") -> ElementCollection:
    """A one-tool collection whose handler is ``handler``."""
    return ElementCollection([tool_element(name, handler=HandlerRef(handler))])


class TestTrust:
    """An entry is used only if it is authentic, or names only handlers the inner can produce."""

    async def test_foreign_entry_in_scope_is_used(self) -> None:
        """No secret: another process's entry whose handlers the inner source can produce is a hit."""
        store = MemoryStore()
        inner = FailingStatic(collection("a"))  # were it asked, it would fail
        source = CachedSource(inner, store, clock=Clock())
        assert handler_targets_of(source) == collection_targets(collection("a"))
        await store.set(source.cache_key, foreign_entry(source, collection("a"), Clock().now))
        assert await source.provide() == collection("a")
        assert source.diagnostics() == ()

    @pytest.mark.parametrize("handler", ["subprocess:getoutput", "tests.handlers:a.os.system"])
    async def test_foreign_entry_out_of_scope_is_refused(self, handler: str) -> None:
        """A handler the inner source cannot produce: a miss, a diagnostic naming it, overwritten."""
        store = MemoryStore()
        clock = Clock()
        source = CachedSource(StaticSource(collection("a")), store, clock=clock)
        await store.set(source.cache_key, foreign_entry(source, planted(handler), clock.now))
        assert await source.provide() == collection("a")
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "skipped"
        assert "cannot produce" in diagnostic.message
        assert handler in diagnostic.message
        raw = await store.get(source.cache_key)
        assert raw is not None
        assert handler.encode() not in raw

    async def test_an_inner_that_cannot_say_trusts_only_its_own_entries(self) -> None:
        """No handler_targets() and no secret: another process's entry is refused, saying why."""
        store = MemoryStore()
        inner = ConfiguredSource("a")
        source = CachedSource(inner, store)
        await store.set(source.cache_key, foreign_entry(source, collection("a"), 1.0))
        assert await source.provide() == collection("a")
        [diagnostic] = source.diagnostics()
        assert "give CachedSource a secret" in diagnostic.message
        assert inner.provides == 1
        again = CachedSource(ConfiguredSource("a"), store)  # this process wrote it: authentic
        assert await again.provide() == collection("a")
        assert again.diagnostics() == ()

    async def test_a_secret_makes_only_authentic_entries_count(self) -> None:
        """With a secret, even an in-scope entry without the right MAC is refused."""
        store = MemoryStore()
        clock = Clock()
        source = CachedSource(StaticSource(collection("a")), store, secret=b"k", clock=clock)
        renamed = ElementCollection([tool_element("b", handler=HandlerRef("tests.handlers:a"))])
        await store.set(source.cache_key, foreign_entry(source, renamed, clock.now))
        assert await source.provide() == collection("a")
        assert "not authenticated" in source.diagnostics()[0].message
        writer = CachedSource(
            StaticSource(collection("a")), store, secret=b"k", key="shared", clock=clock
        )
        await writer.provide()
        reader = CachedSource(
            StaticSource(collection("a")), store, secret=b"k", key="shared", clock=clock
        )
        assert await reader.provide() == collection("a")
        assert reader.diagnostics() == ()

    async def test_a_future_entry_is_corrupt(self) -> None:
        """stored_at beyond a small clock skew would never go stale: it is corrupt, and replaced."""
        store = MemoryStore()
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, store, ttl=60, clock=clock)
        future = clock.now + CLOCK_SKEW + 1
        await store.set(
            source.cache_key,
            EntryCodec(None, max_bytes=1024 * 1024).encode(
                source.cache_key, future, collection("x").to_json()
            ),
        )
        assert await source.provide() == collection("a")
        assert "in the future" in source.diagnostics()[0].message
        assert inner.provides == 1
        near = clock.now + CLOCK_SKEW - 1  # within the skew: accepted
        await store.set(
            source.cache_key,
            EntryCodec(None, max_bytes=1024 * 1024).encode(
                source.cache_key, near, collection("a").to_json()
            ),
        )
        assert await source.provide() == collection("a")
        assert inner.provides == 1

    async def test_a_refused_entry_is_never_served_stale(self) -> None:
        """An expired entry out of scope does not stand in for a failing inner source."""
        store = MemoryStore()
        clock = Clock()
        inner = FailingStatic(collection("a"))
        source = CachedSource(inner, store, ttl=10, clock=clock)
        stale = foreign_entry(source, planted("subprocess:getoutput"), clock.now - 100)
        await store.set(source.cache_key, stale)
        with pytest.raises(SourceUnavailableError):
            await source.provide()
        assert [d.kind for d in source.diagnostics()] == ["skipped"]

    @pytest.mark.parametrize(
        "body",
        [
            b"[" * 200_000,
            b'{"format": "mcp-core/element-collection", "version": 1, "elements": ' + b"[" * 5000,
        ],
    )
    async def test_a_deeply_nested_entry_is_a_miss(self, body: bytes) -> None:
        """Regression: deep nesting is corrupt, never a RecursionError that fails the source."""
        store = MemoryStore()
        clock = Clock()
        inner = CountingSource(collection("a"))
        source = CachedSource(inner, store, clock=clock)
        header = json.dumps({"entry": "mcp-core/cached-collection", "stored_at": clock.now})
        await store.set(source.cache_key, header.encode() + b"\n" + body)
        assert await source.provide() == collection("a")
        assert [d.kind for d in source.diagnostics()] == ["skipped"]
        assert await source.provide() == collection("a")
        assert inner.provides == 1  # replaced by a good entry

    async def test_entry_size_is_bounded_both_ways(self) -> None:
        """Too large to read: corrupt. Too large to write: served uncached, with a diagnostic."""
        store = MemoryStore()
        big = ElementCollection(tool_element(f"t{n}") for n in range(50))
        source = CachedSource(StaticSource(big), store, max_entry_bytes=1000)
        assert await source.provide() == big
        assert "max_entry_bytes" in source.diagnostics()[0].message
        assert await store.get(source.cache_key) is None
        await store.set(source.cache_key, b"x" * 2000)
        assert await source.provide() == big
        assert "more than max_entry_bytes" in source.diagnostics()[0].message

    def test_bad_secrets_and_bounds_are_refused(self) -> None:
        """A secret must be non-empty bytes; max_entry_bytes a positive int."""
        static = StaticSource(collection("a"))
        with pytest.raises(TypeError, match="non-empty bytes"):
            CachedSource(static, MemoryStore(), secret="text")  # type: ignore[arg-type]  # noqa: S106 -- the slip under test
        with pytest.raises(TypeError, match="non-empty bytes"):
            CachedSource(static, MemoryStore(), secret=b"")
        with pytest.raises(ValueError, match="max_entry_bytes"):
            CachedSource(static, MemoryStore(), max_entry_bytes=0)

    def test_wrappers_pass_the_scope_through(self) -> None:
        """Handler-keeping wrappers answer their inner source's handler_targets()."""
        static = StaticSource(planted("pkg.mod:f"))
        for wrapper in (
            IsolatedSource(static),
            FilteredSource(static, lambda element: True),
            PrefixedSource(static, "p"),
            ValidatedSource(static),
            CachedSource(static, MemoryStore()),
        ):
            assert handler_targets_of(wrapper) == frozenset({"pkg.mod:f"})
        assert handler_targets_of(ConfiguredSource("a")) is None


class EditedCatalogue:
    """A catalogue file stand-in whose content the test edits (its configuration stays)."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def kinds(self) -> ElementKind:
        """Tools only."""
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        """The tools it lists now."""
        return collection(*self.names)

    def cache_inputs(self) -> Mapping[str, object]:
        """Always the same file."""
        return {"path": "catalogue.json"}


class TestRedisWriterWithoutTheSecret:
    """Attacker: a Redis writer without the secret, who copies an entry and puts it back later.

    Signatures held, freshness did not: before, a replayed old catalogue entry made every worker
    (and every worker that joined later) serve a tool the new catalogue removed.
    """

    async def test_a_replayed_entry_is_refused_and_the_newer_written_back(self) -> None:
        """Worker b held the new catalogue: it serves it, writes it back, and repair() says so."""
        store, clock, catalogue = MemoryStore(), Clock(), EditedCatalogue("keep", "removed")
        a, b = (CachedSource(catalogue, store, secret=b"s" * 32, clock=clock) for _ in range(2))
        await a.provide()
        await b.provide()
        old = await store.get(a.cache_key)
        assert old is not None
        clock.now += 10
        catalogue.names = ("keep",)
        await a.clear()
        await a.provide()
        assert [e.ref.key for e in await b.provide()] == ["keep"]
        await store.set(a.cache_key, old)  # the replay

        joined = CachedSource(catalogue, store, secret=b"s" * 32, clock=clock)
        fooled = [e.ref.key for e in await joined.provide()]  # it never held the newer one
        assert await b.repair() is True
        assert await b.repair() is False
        healed = [
            e.ref.key
            for e in await CachedSource(catalogue, store, secret=b"s" * 32, clock=clock).provide()
        ]
        await store.set(a.cache_key, old)
        served = [e.ref.key for e in await b.provide()]
        assert fooled == ["keep", "removed"]
        assert healed == ["keep"]
        assert served == ["keep"]
        assert any("replayed or rolled back" in d.message for d in b.diagnostics())
        stored = await store.get(a.cache_key)
        assert stored is not None
        assert stored != old

    async def test_a_writer_behind_in_time_still_writes_a_newer_entry(self) -> None:
        """An entry is dated after the one held, so a host whose clock is behind is not refused."""
        store, catalogue = MemoryStore(), EditedCatalogue("one")
        ahead, behind = Clock(1_030.0), Clock(1_000.0)  # within CLOCK_SKEW
        a = CachedSource(catalogue, store, secret=b"s" * 32, clock=ahead)
        b = CachedSource(catalogue, store, secret=b"s" * 32, clock=behind)
        await a.provide()
        await b.provide()  # holds a's entry
        catalogue.names = ("two",)
        await b.clear()
        await b.provide()
        assert [e.ref.key for e in await a.provide()] == ["two"]
