"""CachedSource: an inner source's collection kept as versioned JSON in a CacheStore."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, final

from mcp_core._version import VERSION
from mcp_core.elements import (
    COLLECTION_FORMAT,
    COLLECTION_VERSION,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
)
from mcp_core.errors import CacheStoreError, CollectionFormatError, NotSerializableError
from mcp_core.sources._diagnostics import DiagnosticKind, SourceDiagnostic, describe_source
from mcp_core.sources._entries import DEFAULT_MAX_ENTRY_BYTES, Entry, EntryCodec
from mcp_core.sources._protocol import (
    ElementSource,
    handler_targets_of,
    lookup_of,
    prefetch_kinds,
    source_identity,
)
from mcp_core.sources._trust import foreign_targets
from mcp_core.stores import CacheStore

__all__ = ["CachedSource"]

_log = logging.getLogger("mcp_core.sources")

MAX_EXPANSION: Final = 8
"""How many times its size an entry nobody authenticated may expand to (shared schemas)."""
EXPANSION_FLOOR: Final = 32 * 1024 * 1024
"""Bytes any such entry may expand to however small it is (a real catalogue shares schemas)."""


def _canonical_json(value: object, *, what: str) -> str:
    def plain(item: object) -> object:
        if isinstance(item, Mapping):
            return dict(item)
        if isinstance(item, AbstractSet) and all(isinstance(member, str) for member in item):
            return sorted(item)
        raise TypeError(f"{type(item).__name__} is not JSON")

    try:
        return json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=plain,
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must be JSON-able (dicts, lists, strings, numbers, booleans, None): {exc}"
        ) from exc


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


@final
class CachedSource:
    """Serves ``inner``'s collection from ``store`` while it is fresh; re-provides when it is not.

    Law (``wrapper.transparent``): over a healthy inner source, ``provide()`` returns what the
    inner source provides, either directly or through its lossless JSON form
    (``ElementCollection.from_json(c.to_json()) == c``); ``kinds()`` is the inner source's.

    Entries are the collection's versioned JSON (never pickles) after a one-line header holding
    the wall-clock time it was stored (``clock``, seconds since the epoch: entries outlive the
    process and are shared across hosts) and an HMAC over key, time and body.

    Trust. A handler reference is code, so an entry read back must be as trustworthy as the
    code that wrote it (see ``docs/security.md``). An entry is used when it is *authentic*: its
    HMAC verifies with ``secret`` (bytes shared by every process that shares the store) or,
    without a secret, with a key this process drew at random (an entry it wrote itself).
    Without a secret, an entry from another process or an earlier run is used only if every
    handler and completion reference in it is one the inner source can produce
    (``handler_targets()``: a ``DiscoverySource`` scans, without deriving, to say; wrappers pass
    their inner's answer through); an inner source that cannot say has its foreign entries
    refused. With a secret, only authentic entries are used. A refused entry is a miss with a
    ``skipped`` diagnostic and is overwritten. Configure a secret for any store that anyone but
    this program can write (a shared Redis, a SQLite file on a shared volume).

    Bounds: an entry larger than ``max_entry_bytes`` is neither written (``unavailable``
    diagnostic: served uncached) nor read; a header claiming to be stored in the future (beyond
    a small clock skew) is corrupt; decoding bounds nesting depth, and a document too deep is
    corrupt like any other, never a ``RecursionError``. An entry read without authentication
    (no secret, another process's) may expand, with its shared schemas written out where they
    are used, to :data:`MAX_EXPANSION` times its size or :data:`EXPANSION_FLOOR` bytes,
    whichever is more; beyond, it is corrupt (ADR 0072).

    Key: ``"{namespace}:{source hash}:{version hash}"``. The source hash covers the explicit
    ``key``, the inner source's qualified type name and, when it has one, its
    ``cache_inputs()`` (a JSON-able mapping of the configuration that determines its output:
    packages, filters, prefixes; wrappers nest their inner source's). The version hash covers
    the collection format version and the mcp-core version, so an upgrade never reads an entry
    another version wrote. ``cache_inputs()`` describes configuration, not the backend's current
    content: content changes are what ``ttl`` is for. Two inner sources of one type that differ
    in a way their ``cache_inputs()`` does not show (two closures, two lambdas) need distinct
    ``key`` values.

    ``provide()``:

    1. a fresh entry (younger than ``ttl``; ``ttl=None``: never expires) is decoded and returned;
    2. otherwise the inner source provides, the result is stored, and returned;
    3. if the inner source raises (anything, including
       :class:`~mcp_core.errors.SourceUnavailableError`), ``serve_stale_on_error`` is set and an
       expired entry is present, that stale collection is returned and a ``stale`` diagnostic is
       recorded; otherwise the error propagates.

    Freshness: the entry this process last served or stored is *held* (its time, which the MAC
    covers, and its collection); an authentic entry older than it (an old entry replayed, the
    store rolled back) is refused with a ``skipped`` diagnostic, and the held one is served and
    written back. :meth:`repair` does the same without providing, for a deployment to run
    periodically (ADR 0068).

    A collection that could not be stored (the store failed) is served; until one is stored
    again, an entry stored before it counts as expired here, so this process never goes back to
    something older than what it served once the store answers again.

    A collection with live handlers cannot be cached: ``provide()`` raises
    :class:`~mcp_core.errors.NotSerializableError` rather than silently not caching. A corrupt
    entry is a miss (``skipped`` diagnostic) and is overwritten. A failing store
    (:class:`~mcp_core.errors.CacheStoreError`) degrades to providing from the inner source
    (``unavailable`` diagnostic): the cache is an optimisation, never a new way to go down.

    With ``serve_stale_on_error``, entries are written without a store TTL so that they can
    outlive ``ttl`` and be served stale; each is overwritten by the next successful refresh and
    removed by :meth:`clear`. Without it, the store expires them after ``ttl``.
    """

    __slots__ = (  # noqa: RUF023 -- the inner source comes first, as in every wrapper
        "_inner",
        "_clock",
        "_codec",
        "_decoded",
        "_diagnostics",
        "_held",
        "_key",
        "_known_kinds",
        "_newer_than",
        "_namespace",
        "_secret",
        "_serve_stale",
        "_store",
        "_ttl",
    )

    def __init__(
        self,
        inner: ElementSource,
        store: CacheStore,
        *,
        key: str | None = None,
        ttl: float | None = None,
        serve_stale_on_error: bool = True,
        namespace: str = "mcp-core",
        secret: bytes | None = None,
        max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl is not None and not (math.isfinite(ttl) and ttl > 0):
            raise ValueError(
                f"CachedSource ttl must be a positive number of seconds or None, got {ttl!r}"
            )
        if not namespace or any(ch.isspace() for ch in namespace):
            raise ValueError(
                f"CachedSource namespace must be non-empty without spaces, got {namespace!r}"
            )
        self._inner = inner
        self._store = store
        self._key = key
        self._ttl = ttl
        self._serve_stale = serve_stale_on_error
        self._namespace = namespace
        self._secret = secret is not None
        self._codec = EntryCodec(secret, max_bytes=max_entry_bytes)
        self._clock = clock
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()
        # The inner source's kinds() as recorded with the last entry read or written: answering
        # kinds() from it keeps an expensive inner kinds() (a DiscoverySource's import scan) off
        # the path of a warm cache.
        self._known_kinds: ElementKind | None = None
        # The last entry body decoded and its collection: lookups before a registry's full load
        # decode a large entry once, not once per call.
        self._decoded: tuple[bytes, ElementCollection] | None = None
        # When this process last served what its inner source provided but could not store it:
        # an entry stored before that is older than what was served, and never fresh again here.
        self._newer_than: float | None = None
        # The newest authentic entry this process served or stored: its time, kinds, collection.
        self._held: tuple[float, ElementKind | None, ElementCollection] | None = None

    def __repr__(self) -> str:
        options = "" if self._key is None else f", key={self._key!r}"
        options += "" if self._ttl is None else f", ttl={self._ttl!r}"
        return f"CachedSource({describe_source(self._inner)}{options})"

    @property
    def inner(self) -> ElementSource:
        """The source whose collection is cached."""
        return self._inner

    @property
    def key_prefix(self) -> str:
        """The prefix of every key this source writes: what :meth:`clear` removes."""
        identity = {"key": self._key, "source": source_identity(self._inner)}
        text = _canonical_json(identity, what=f"cache_inputs() of {describe_source(self._inner)}")
        return f"{self._namespace}:{_digest(text, 32)}:"

    @property
    def cache_key(self) -> str:
        """The key of the entry for the current configuration and versions."""
        versions = {
            "format": COLLECTION_FORMAT,
            "format_version": COLLECTION_VERSION,
            "mcp_core": VERSION,
        }
        return self.key_prefix + _digest(_canonical_json(versions, what="versions"), 16)

    def kinds(self) -> ElementKind:
        """The inner source's kinds, never provides, never reads the store.

        Once an entry has been read or written (by ``provide()``, ``lookup()`` or
        :meth:`prefetch_kinds`), the inner source's kinds recorded with it answer, so a warm cache
        of a ``DiscoverySource`` imports nothing to advertise capabilities; before that, the
        inner source is asked.
        """
        known = self._known_kinds
        return known if known is not None else self._inner.kinds()

    async def prefetch_kinds(self) -> None:
        """Read the kinds recorded with the cache entry, so ``kinds()`` answers from them.

        Without an entry that records them, the inner source is given the same chance. A store
        failure or a corrupt entry only leaves ``kinds()`` asking the inner source. A server calls
        this before answering ``initialize`` (see ``Registry.prefetch_kinds``).
        """
        key = self.cache_key
        try:
            raw = await self._store.get(key)
            entry = self._codec.decode(key, raw, now=self._clock()) if raw is not None else None
        except (CacheStoreError, CollectionFormatError) as exc:
            _log.info(
                "%r: cannot read the cached kinds (%s); kinds() asks the inner source", self, exc
            )
            entry = None
        # Only an entry written by a holder of the key says what the inner source declares.
        if entry is not None and entry.authentic and entry.kinds is not None:
            self._known_kinds = entry.kinds
        else:
            await prefetch_kinds(self._inner)

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element ``provide()`` would hold at ``ref``, touching as little as it can.

        A fresh entry answers from the cache; otherwise the inner source's ``lookup`` answers
        when it has one (nothing is stored: one element is not the collection), falling back to
        a stale entry on failure as ``provide()`` does; otherwise ``provide()`` runs and answers.
        """
        key = self.cache_key
        entry, collection = await self._lookup(key, [])
        if collection is not None:
            return collection.get(ref)
        lookup = lookup_of(self._inner)
        if lookup is None:
            return (await self.provide()).get(ref)
        try:
            return await lookup(ref)
        except Exception as exc:
            stale = self._stale(entry, key, exc, []) if self._serve_stale else None
            if stale is None:
                raise
            return stale.get(ref)

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """What the last ``provide()`` reported (stale, corrupt entry, store down)."""
        return self._diagnostics

    async def clear(self) -> int:
        """Remove this source's entries (every version of them), and nobody else's; return how many.

        Raises :class:`~mcp_core.errors.CacheStoreError` if the store fails: clearing is an
        explicit request, so its failure is not hidden.
        """
        return await self._store.delete_prefix(self.key_prefix)

    async def provide(self) -> ElementCollection:
        """The cached collection if fresh, else the inner source's (stored), else a stale one."""
        key = self.cache_key
        notes: list[SourceDiagnostic] = []
        try:
            entry, collection = await self._lookup(key, notes)
            if collection is not None:
                return collection
            try:
                collection = await self._inner.provide()
            except Exception as exc:
                stale = self._stale(entry, key, exc, notes) if self._serve_stale else None
                if stale is None:
                    raise
                return stale
            await self._store_entry(key, collection, notes)
            return collection
        finally:
            self._diagnostics = tuple(notes)

    async def _lookup(
        self, key: str, notes: list[SourceDiagnostic]
    ) -> tuple[Entry | None, ElementCollection | None]:
        """The entry at ``key`` (None if absent, corrupt or refused) and its collection if fresh."""
        try:
            raw = await self._store.get(key)
        except CacheStoreError as exc:
            self._note(notes, "unavailable", f"cache store read failed ({exc}); providing directly")
            return None, None
        if raw is None:
            return None, None
        try:
            entry = self._codec.decode(key, raw, now=self._clock())
        except CollectionFormatError as exc:
            self._corrupt(notes, key, exc)
            return None, None
        held = self._held
        if held is not None and entry.authentic and entry.stored_at < held[0]:
            self._refuse(
                notes,
                key,
                f"was stored at {entry.stored_at:.3f}, before the one this process holds "
                f"({held[0]:.3f}): replayed or rolled back; the newer one is served and written back",
            )
            entry = await self._write_back(key, held)
        if entry.kinds is not None and entry.authentic:
            # Only an entry written by a holder of the key says what the inner source declares.
            self._known_kinds = entry.kinds
        outdated = self._newer_than is not None and entry.stored_at < self._newer_than
        if outdated or (self._ttl is not None and self._clock() - entry.stored_at >= self._ttl):
            return entry, None  # trusted or not, it is weighed only if it is ever served stale
        collection = self._trusted(entry, key, notes)
        if collection is not None and entry.authentic:
            self._hold(entry, collection)
        return (entry if collection is not None else None), collection

    def _hold(self, entry: Entry, collection: ElementCollection) -> None:
        if self._held is None or entry.stored_at >= self._held[0]:
            self._held = (entry.stored_at, entry.kinds, collection)

    async def _write_back(
        self, key: str, held: tuple[float, ElementKind | None, ElementCollection]
    ) -> Entry:
        """Write the held entry back at ``key`` (a store failure is only logged); it, decoded."""
        stored_at, kinds, collection = held
        raw = self._codec.encode(key, stored_at, collection.to_json(), kinds)
        try:
            await self._store.set(key, raw, ttl=None if self._serve_stale else self._ttl)
        except CacheStoreError as exc:
            _log.warning("%r: cannot write the newer entry back (%s)", self, exc)
        self._decoded = (raw[raw.index(b"\n") + 1 :], collection)
        return self._codec.decode(key, raw, now=self._clock())

    async def repair(self) -> bool:
        """Write back the entry held if the store holds an older authentic one; whether it did.

        Whoever can write the store can put back an old entry it copied (a replay), which a
        process that never held the newer one would serve; a deployment calls this
        periodically, and announces the source again when it returns True. Raises
        :class:`~mcp_core.errors.CacheStoreError` when the store cannot be read.
        """
        held = self._held
        if held is None:
            return False
        key = self.cache_key
        raw = await self._store.get(key)
        if raw is None:
            return False
        try:
            entry = self._codec.decode(key, raw, now=self._clock())
        except CollectionFormatError:
            return False  # corrupt: whoever reads it refuses it and provides again
        if not entry.authentic or entry.stored_at >= held[0]:
            return False
        self._refuse(
            [],
            key,
            "is older than the one this process holds: replayed or rolled back; written back",
        )
        await self._write_back(key, held)
        return True

    def _trusted(
        self, entry: Entry, key: str, notes: list[SourceDiagnostic]
    ) -> ElementCollection | None:
        """The entry's collection if it may be served (see Trust above), else None with a note."""
        allowed: frozenset[str] | None = None
        if not entry.authentic:
            if self._secret:
                self._refuse(notes, key, "is not authenticated by the configured secret")
                return None
            allowed = handler_targets_of(self._inner)
            if allowed is None:
                self._refuse(
                    notes,
                    key,
                    f"was not written by this process, and {describe_source(self._inner)} cannot "
                    "say which handlers it produces (handler_targets()); give CachedSource a "
                    "secret shared by the processes that share the store",
                )
                return None
        try:
            collection = self._decode(entry.body, trusted=allowed is None)
        except CollectionFormatError as exc:
            self._corrupt(notes, key, exc)
            return None
        foreign = foreign_targets(collection, allowed) if allowed is not None else []
        if foreign:
            shown = ", ".join(f"{ref} -> {target!r}" for ref, target in foreign[:5])
            self._refuse(
                notes,
                key,
                f"names handlers {describe_source(self._inner)} cannot produce ({shown})",
            )
            return None
        return collection

    def _decode(self, body: bytes, *, trusted: bool) -> ElementCollection:
        decoded = self._decoded
        if decoded is not None and decoded[0] == body:
            return decoded[1]
        collection = ElementCollection.from_json(
            body,
            max_bytes=self._codec.max_bytes,
            # An entry nobody authenticated may not amplify through shared schemas (ADR 0072).
            max_expanded_bytes=None if trusted else max(MAX_EXPANSION * len(body), EXPANSION_FLOOR),
        )
        self._decoded = (body, collection)
        return collection

    def _stale(
        self, entry: Entry | None, key: str, error: Exception, notes: list[SourceDiagnostic]
    ) -> ElementCollection | None:
        if entry is None:
            return None
        collection = self._trusted(entry, key, notes)
        if collection is None:
            return None
        age = self._clock() - entry.stored_at
        self._note(
            notes,
            "stale",
            f"{describe_source(self._inner)} failed ({type(error).__name__}: {error}); serving the "
            f"cached collection stored {age:.0f}s ago, past its ttl of {self._ttl}s",
        )
        return collection

    async def _store_entry(
        self, key: str, collection: ElementCollection, notes: list[SourceDiagnostic]
    ) -> None:
        try:
            text = collection.to_json()
        except NotSerializableError as exc:
            raise NotSerializableError(
                f"{self!r} cannot cache {describe_source(self._inner)}: {exc} CachedSource stores "
                "collections as JSON, so it needs elements whose handlers are references "
                "(HandlerRef); cache only sources that declare handlers by reference",
                refs=exc.refs,
            ) from exc
        ttl = None if self._serve_stale else self._ttl
        try:
            kinds: ElementKind | None = self._inner.kinds()  # cheap now: the inner has provided
        except Exception:  # noqa: BLE001 -- a broken kinds() only means none are recorded
            _log.warning(
                "%r: the inner source's kinds() raised; none recorded", self, exc_info=True
            )
            kinds = None
        self._known_kinds = kinds
        # Dated after the entry held, whatever this host's clock says: versions only go up.
        stored_at = self._clock()
        if self._held is not None:
            stored_at = max(stored_at, self._held[0] + 0.001)
        entry = self._codec.encode(key, stored_at, text, kinds)
        if len(entry) > self._codec.max_bytes:
            self._note(
                notes,
                "unavailable",
                f"not cached: the entry would be {len(entry)} bytes, more than "
                f"max_entry_bytes={self._codec.max_bytes}; served uncached",
            )
            return
        try:
            await self._store.set(key, entry, ttl=ttl)
        except CacheStoreError as exc:
            self._newer_than = self._clock()
            self._note(notes, "unavailable", f"cache store write failed ({exc}); served uncached")
        else:
            self._newer_than = None
            self._held = (stored_at, kinds, collection)

    def _corrupt(self, notes: list[SourceDiagnostic], key: str, error: Exception) -> None:
        self._note(notes, "skipped", f"cache entry {key!r} is corrupt ({error}); treated as a miss")

    def _refuse(self, notes: list[SourceDiagnostic], key: str, why: str) -> None:
        self._note(notes, "skipped", f"cache entry {key!r} {why}; treated as a miss")

    def _note(self, notes: list[SourceDiagnostic], kind: DiagnosticKind, message: str) -> None:
        diagnostic = SourceDiagnostic(source=describe_source(self), kind=kind, message=message)
        _log.warning("%s", diagnostic)
        notes.append(diagnostic)
