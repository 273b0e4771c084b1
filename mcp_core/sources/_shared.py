"""SharedSource: runtime registrations that every worker of a deployment serves.

``registry.register(element)`` is process-local by design: it is the fastest write there is and
nothing else sees it. Registrations that every worker must serve live in a store that every worker
reads: a :class:`SharedSource` keeps one entry per element in a
:class:`~mcp_core.stores.ListingStore` (one Redis key each, so writers on different workers never
overwrite each other's elements) and is a :class:`~mcp_core.sources.ChangingSource`, so the worker
that wrote provides it again at once, and with a deployment's change bus every other worker does
too (ADR 0046).

Trust. A handler reference is code (``"subprocess:getoutput"`` imports and runs what it names),
and whoever can write the store can write entries. So elements are stored with their handlers as
:class:`~mcp_core.elements.HandlerRef` only, and an entry is served only if it is *authentic*
(its HMAC verifies with ``secret``, shared by every worker) and, with ``handlers``, names only
handlers on that allow-list. An entry that fails either check is never served: it is reported as
a ``skipped`` diagnostic.

Freshness (ADR 0068). An entry's time is its version: it is signed with the entry, and a writer
dates a new entry after every entry it knows at that key, so versions go up whatever the hosts'
clocks say. A worker holds the newest authentic entry it has seen at each key; an older one
found in the store (an old entry replayed, or the store rolled back) is refused, and the newer
one is written back. Unregistering writes a signed *tombstone*, never deletes, so an old entry
of an unregistered element cannot come back, and an entry deleted by someone without the secret
is written back. :meth:`SharedSource.repair` does the same without providing, for a deployment
to run periodically.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Final, final

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.errors import (
    CacheStoreError,
    CollectionFormatError,
    InvalidElementError,
    SourceUnavailableError,
)
from mcp_core.sources._diagnostics import SourceDiagnostic
from mcp_core.sources._entries import DEFAULT_MAX_ENTRY_BYTES, EntryCodec
from mcp_core.sources._running import ChangeListeners
from mcp_core.sources._trust import foreign_targets
from mcp_core.stores import ListingStore
from mcp_core.stores._refusals import Refusals

__all__ = ["SharedSource"]

_log = logging.getLogger("mcp_core.sources")

Listener = Callable[[ElementKind], object]


class _Refused(Exception):  # noqa: N818 -- internal: why an entry is not served
    """Why an entry may not be served (the message completes "entry K ...")."""

    @property
    def reason(self) -> str:
        """The kind of refusal, for rate-limited logging: the message's first words."""
        return " ".join(str(self).split()[:3])


# A held entry: its version (the signed time it was stored), its bytes, and its element (None
# for a tombstone).
_Held = tuple[float, bytes, Element | None]
_VERSION_STEP: Final = 0.001  # a new entry is dated at least this much after the newest known


@final
class SharedSource:
    """Elements registered at run time and served by every process that reads ``store``.

    - ``store``: a listing store every worker shares (a ``RedisStore``; ``MemoryStore`` within
      one process); entries are kept under ``"shared:{name}:"``.
    - ``secret``: bytes shared by every worker; an entry is served only if its HMAC verifies
      with it. ``handlers``: the handler targets an entry may name (an allow-list). At least one
      of the two is required; give both where you can.
    - ``kinds``: the kinds that may be registered (every kind by default), which is what the
      source declares, so what a server advertises does not change as elements come and go.

    ``register`` and ``unregister`` (which writes a tombstone, see Freshness in the module
    documentation) write the store and then tell the source's listeners, and
    wait until they have taken the change in (a served ``App`` provides this source again):
    when they return, this worker serves the change. A store that cannot be written raises
    :class:`~mcp_core.errors.CacheStoreError`: a registration is never silently dropped.
    ``provide()`` raises :class:`~mcp_core.errors.SourceUnavailableError` when the store cannot
    be read, so a registry keeps serving what it had.
    """

    __slots__ = (
        "_codec",
        "_diagnostics",
        "_handlers",
        "_held",
        "_kinds",
        "_listeners",
        "_name",
        "_prefix",
        "_refusals",
        "_secret",
        "_store",
        "_written_back",
    )

    def __init__(
        self,
        store: ListingStore,
        *,
        name: str = "shared",
        secret: bytes | None = None,
        handlers: Collection[str] | None = None,
        kinds: ElementKind = ElementKind.ALL,
        max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
    ) -> None:
        if not isinstance(store, ListingStore):
            raise TypeError(
                f"SharedSource needs a store that can list its entries (a ListingStore: "
                f"MemoryStore, SqliteStore, RedisStore), got {type(store).__name__}"
            )
        if not name or any(ch.isspace() or ch == ":" for ch in name):
            raise ValueError(
                f"SharedSource name must be non-empty, without spaces or ':', got {name!r}"
            )
        if secret is None and handlers is None:
            raise ValueError(
                "SharedSource needs a secret (shared by every worker: entries are authenticated "
                "with it) or an allow-list of handlers, and preferably both: whoever can write the "
                "store could otherwise make every worker import and run any code"
            )
        if handlers is not None and (
            isinstance(handlers, str) or not all(isinstance(h, str) for h in handlers)
        ):
            raise TypeError("handlers must be a collection of HandlerRef targets (strings)")
        if not isinstance(kinds, ElementKind) or not kinds:
            raise ValueError(f"kinds must name at least one ElementKind, got {kinds!r}")
        self._store = store
        self._name = name
        self._prefix = f"shared:{name}:"
        self._secret = secret is not None
        self._codec = EntryCodec(secret, max_bytes=max_entry_bytes)
        self._handlers = frozenset(handlers) if handlers is not None else None
        self._kinds = kinds
        self._listeners = ChangeListeners()
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()
        self._held: dict[str, _Held] = {}  # the newest authentic entry seen at each key
        self._written_back = 0  # entries written back so far
        self._refusals = Refusals(_log, repr(self))

    def __repr__(self) -> str:
        return f"SharedSource({self._name!r}, {self._store!r})"

    @property
    def name(self) -> str:
        """The name its entries are kept under (several shared sources may share a store)."""
        return self._name

    # -- ElementSource ----------------------------------------------------------------------

    def kinds(self) -> ElementKind:
        """The kinds that may be registered here."""
        return self._kinds

    async def provide(self) -> ElementCollection:
        """Every authentic, allowed registration in the store, oldest first."""
        try:
            entries = await self._store.entries(self._prefix)
        except CacheStoreError as exc:
            raise SourceUnavailableError(
                f"{self!r} cannot read its registrations: {exc}", source=self
            ) from exc
        notes: list[SourceDiagnostic] = []
        current = await self._newest(entries, notes)
        found = sorted(
            (stored_at, str(element.ref), element)
            for stored_at, _, element in current.values()
            if element is not None
        )
        self._diagnostics = tuple(notes)
        return ElementCollection(element for _, _, element in found)

    async def repair(self) -> bool:
        """Write back the newest entry held at each key where the store holds an older one or none.

        Whoever can write the store without the secret can delete an entry or put back an old one
        (a replay); a deployment calls this periodically, and announces the source again when it
        returns True, so every worker provides it from what was written back. Raises
        :class:`~mcp_core.errors.CacheStoreError` when the store cannot be read.
        """
        if not self._held:
            return False
        entries = await self._store.entries(self._prefix)
        written = self._written_back
        await self._newest(entries, [])
        return self._written_back != written

    async def _newest(
        self, entries: Mapping[str, bytes], notes: list[SourceDiagnostic]
    ) -> dict[str, _Held]:
        """The newest authentic entry at each key, from ``entries`` and what this worker holds.

        An entry older than the one held (or missing while one is held) is refused and the held
        one written back.
        """
        now = time.time()
        current: dict[str, _Held] = {}
        for key, raw in entries.items():
            try:
                element, stored_at = self._read(key, raw, now)
            except _Refused as refused:
                notes.append(self._note(f"entry {key!r} {refused}; not served", refused.reason))
                continue
            current[key] = (stored_at, raw, element)
        for key, held in list(self._held.items()):
            found = current.get(key)
            if found is not None and found[0] >= held[0]:
                continue
            why = "is missing" if found is None else "is older than the one this worker holds"
            notes.append(
                self._note(
                    f"entry {key!r} {why} (replayed, rolled back or deleted without the secret); "
                    "the newer one is served and written back",
                    "entries older than the ones held",
                )
            )
            current[key] = held
            await self._write_back(key, held[1])
        for key, entry in current.items():
            self._hold(key, entry)
        return current

    async def _write_back(self, key: str, raw: bytes) -> None:
        try:
            await self._store.set(key, raw)
        except CacheStoreError as exc:
            _log.warning("%r: cannot write entry %r back (%s)", self, key, exc)
        else:
            self._written_back += 1

    def _hold(self, key: str, entry: _Held) -> None:
        held = self._held.get(key)
        if held is None or entry[0] > held[0]:
            self._held[key] = entry

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The registration at ``ref`` as ``provide()`` would serve it, read with one ``get``.

        The per-name path (:class:`~mcp_core.sources.ElementLookup`): a call to a shared tool
        reads its one entry instead of listing the store. An entry that ``provide()`` would
        refuse is refused here too (None, and a warning naming it).
        """
        key = self._key(ref)
        try:
            raw = await self._store.get(key)
        except CacheStoreError as exc:
            raise SourceUnavailableError(
                f"{self!r} cannot read its registration {ref}: {exc}", source=self
            ) from exc
        found: _Held | None = None
        if raw is not None:
            try:
                element, stored_at = self._read(key, raw, time.time())
            except _Refused as refused:
                self._note(f"entry {key!r} {refused}; not served", refused.reason)
            else:
                found = (stored_at, raw, element)
        held = self._held.get(key)
        if held is not None and (found is None or found[0] < held[0]):
            self._note(
                f"entry {key!r} is older than the one this worker holds, or missing (replayed, "
                "rolled back or deleted without the secret); the newer one is served and "
                "written back",
                "entries older than the ones held",
            )
            await self._write_back(key, held[1])
            return held[2]
        if found is None:
            return None
        self._hold(key, found)
        return found[2]

    def _read(self, key: str, raw: bytes, now: float) -> tuple[Element | None, float]:
        """The element an entry holds (None: a tombstone) and when it was stored (its version).

        Raises _Refused saying why it may not be served.
        """
        try:
            entry = self._codec.decode(key, raw, now=now)
            authentic = entry.authentic
            if not authentic and self._secret:
                raise _Refused("is not authenticated by the secret")
            collection = ElementCollection.from_json(entry.body, max_bytes=self._codec.max_bytes)
        except CollectionFormatError as exc:
            raise _Refused(f"is corrupt ({exc})") from None
        elements = list(collection)
        if not elements:
            return None, entry.stored_at  # a tombstone: its key is signed, so it is this key's
        if len(elements) != 1 or self._key(elements[0].ref) != key:
            raise _Refused("does not hold the one element its key names")
        refusal = self._refusal(elements[0])
        if refusal is not None:
            raise _Refused(f"is refused: {refusal}")
        return elements[0], entry.stored_at

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The entries the last ``provide()`` refused, and why."""
        return self._diagnostics

    def handler_targets(self) -> frozenset[str] | None:
        """The allow-list of handler targets, or None without one."""
        return self._handlers

    def cache_inputs(self) -> Mapping[str, object]:
        """What names this source across workers: its name (the store is the deployment's)."""
        return {"shared": self._name}

    # -- ChangingSource ---------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kinds)`` after each ``register``/``unregister`` made through this object."""
        return self._listeners.subscribe(listener)

    # -- writing ----------------------------------------------------------------------------

    async def register(self, element: Element) -> None:
        """Store ``element`` for every worker (replacing one at its ref), then announce it.

        Raises:
            InvalidElementError: its kind is not one of ``kinds``, a handler is not a
                ``HandlerRef`` or not on the allow-list.
            CacheStoreError: the store cannot be written (nothing was registered).
        """
        if not isinstance(element, Element):
            raise TypeError(f"register() takes an Element, got {type(element).__name__}")
        refusal = self._refusal(element)
        if refusal is not None:
            raise InvalidElementError(f"{element.ref}: {refusal}", ref=element.ref)
        key = self._key(element.ref)
        await self._write(key, ElementCollection([element]).to_json(), element.ref.kind, element)
        await self._announce(element.ref.kind)

    async def unregister(self, ref: ElementRef) -> bool:
        """Remove the registration at ``ref`` for every worker; return whether there was one.

        Writes a signed tombstone in its place (never deletes it), so an old entry of it put
        back in the store is older than the tombstone and refused. Raises
        :class:`~mcp_core.errors.CacheStoreError` when the store cannot be written.
        """
        key = self._key(ref)
        current = await self._current(key)
        if current is None or current[2] is None:
            return False
        await self._write(key, ElementCollection([]).to_json(), ref.kind, None)
        await self._announce(ref.kind)
        return True

    async def _current(self, key: str) -> _Held | None:
        """The newest authentic entry at ``key``: the store's or the one held, if newer."""
        raw = await self._store.get(key)
        found: _Held | None = None
        if raw is not None:
            try:
                element, stored_at = self._read(key, raw, time.time())
            except _Refused:
                pass  # junk, or off the allow-list now: written over
            else:
                found = (stored_at, raw, element)
        held = self._held.get(key)
        if held is not None and (found is None or held[0] > found[0]):
            return held
        return found

    async def _write(self, key: str, body: str, kind: ElementKind, element: Element | None) -> None:
        """Write an entry dated after every entry known at ``key`` (its version goes up)."""
        current = await self._current(key)
        stored_at = time.time()
        if current is not None:
            stored_at = max(stored_at, current[0] + _VERSION_STEP)
        raw = self._codec.encode(key, stored_at, body, kind)
        await self._store.set(key, raw)
        self._hold(key, (stored_at, raw, element))

    async def _announce(self, kinds: ElementKind) -> None:
        for applied in self._listeners.announce(kinds):
            if not inspect.isawaitable(applied):
                continue
            try:
                await applied
            except Exception:  # noqa: BLE001 -- the write happened; one listener's failure is logged
                _log.exception("%r: a listener failed to take in a change", self)

    def _refusal(self, element: Element) -> str | None:
        if not element.ref.kind & self._kinds:
            return f"kind {element.ref.kind.label} is not one of {self._kinds.label}"
        foreign = foreign_targets(ElementCollection([element]), self._handlers or frozenset())
        live = [target for _, target in foreign if target.startswith("<live ")]
        if live:
            return (
                "shared elements name their handlers (HandlerRef('pkg.mod:function') or a "
                f"container id), never hold them ({live[0]})"
            )
        if self._handlers is not None and foreign:
            return f"handler {foreign[0][1]!r} is not on the allow-list"
        return None

    def _key(self, ref: ElementRef) -> str:
        return self._prefix + hashlib.sha256(str(ref).encode()).hexdigest()[:32]

    def _note(
        self, message: str, reason: str = "entries that may not be served"
    ) -> SourceDiagnostic:
        # A diagnostic each time; a log line per reason at most once a minute (a flood of junk
        # entries is not a flood of log lines).
        self._refusals.refuse(reason, message)
        return SourceDiagnostic(source=repr(self), kind="skipped", message=message, at=time.time())
