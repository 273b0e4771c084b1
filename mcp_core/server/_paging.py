"""Pagination: immutable per-list snapshots in key order, and opaque keyset cursors.

Why key order: a cursor must survive registrations and removals between two pages without
skipping or repeating an unchanged element. An index does not (a runtime registration enters the
catalogue at the front and shifts every index), and neither does the catalogue's own order (it
depends on which source won). Ordering every list by its key (tool name, resource URI, template,
prompt name) and resuming *after the last key served* does: an element that was there before and
is there after sits on the same side of that key both times.

Why snapshots: a list is served from a :class:`Snapshot` — the definitions' wire dicts sorted
once — reused for as long as the catalogue hands back the same sequence (the reference Registry
returns one tuple per change), so walking N pages costs N slices, not N rebuilds.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, final

import pydantic_core

from mcp_core._collector import collector_paused
from mcp_core._stretches import pause
from mcp_core.elements import Definition, ElementRef
from mcp_core.elements._definitions import shared_wire
from mcp_core.server._errors import InvalidCursorError

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "CursorCodec",
    "EncodedItems",
    "Page",
    "Snapshot",
    "SnapshotCache",
    "wire_json",
]

PREPARE_STRETCH: Final = 512
"""Items a list snapshot prepared in the background handles between two checkpoints."""

DEFAULT_PAGE_SIZE: Final = 500
"""Elements per list page by default.

Large enough that an ordinary server answers in one page (some clients never follow
``nextCursor``), small enough that a 100k-element catalogue is not one 50 MB response.
"""

_CURSOR_VERSION: Final = 1
_MAC_BYTES: Final = 12


@final
class CursorCodec:
    """Encodes "resume after this key of that list" as an opaque, integrity-checked string.

    The cursor is ``base64url(json([version, list, key])) "." base64url(mac)``. The MAC (HMAC-SHA256
    truncated to 96 bits) is keyed by ``secret``; with the default key, derived from the server
    name, it detects corruption and cursors from another list or another server; give every
    worker of a deployment the same real secret to make cursors unforgeable as well.
    """

    __slots__ = ("_key",)

    def __init__(self, secret: bytes) -> None:
        if not isinstance(secret, bytes) or not secret:
            raise TypeError("the cursor secret must be non-empty bytes")
        self._key = hashlib.sha256(b"mcp-core cursor\x00" + secret).digest()

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(self, list_name: str, last_key: str) -> str:
        """The cursor resuming ``list_name`` after ``last_key``."""
        payload = json.dumps(
            [_CURSOR_VERSION, list_name, last_key], ensure_ascii=False, separators=(",", ":")
        ).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def decode(self, list_name: str, cursor: object) -> str:
        """The last key a cursor for ``list_name`` names; raises :class:`InvalidCursorError`."""
        if not isinstance(cursor, str) or cursor.count(".") != 1:
            raise InvalidCursorError(
                f"Invalid cursor for {list_name}: not a cursor this server issued; "
                "pass nextCursor from the previous page unchanged, or omit it to start over"
            )
        body, mac = cursor.split(".")
        try:
            payload = _unb64(body)
            valid = hmac.compare_digest(self._mac(payload), _unb64(mac))
            decoded = json.loads(payload) if valid else None
        except (binascii.Error, ValueError):
            decoded = None
        match decoded:
            case [1, str() as name, str() as key] if name == list_name:
                return key
            case [1, str() as name, str()]:
                raise InvalidCursorError(
                    f"Invalid cursor for {list_name}: it was issued for {name}; "
                    "each list must be walked with its own cursors"
                )
            case _:
                raise InvalidCursorError(
                    f"Invalid cursor for {list_name}: malformed, altered or issued by another "
                    "server; pass nextCursor from the previous page unchanged, or omit it to start over"
                )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@final
class Snapshot:
    """One list's definitions as wire dicts, in key order, with their refs.

    The wire dicts are shared by every page served from the snapshot: treat them as read-only.
    A key is read from its ref (a list of the keys beside the refs took 0.8 MiB at 100k items).
    """

    __slots__ = ("_as_dumped", "_encoded", "refs", "source", "wires")

    def __init__(self, definitions: Sequence[Definition]) -> None:
        # The catalogue sequence itself is kept: it is how the cache recognises it next time.
        self.source: Final = definitions
        ordered = sorted(definitions, key=lambda d: d.ref.key)
        self.refs: Final[list[ElementRef]] = [d.ref for d in ordered]
        # Each definition's wire form is built once and shared (by pages, and by the next
        # snapshot when the definition is still there); see shared_wire.
        self.wires: Final[list[dict[str, Any]]] = [shared_wire(d) for d in ordered]
        # Each wire form's JSON, encoded when a transport first asks (see EncodedItems).
        self._encoded: list[bytes | None] = [None] * len(ordered)
        # The same as json.dumps writes it, made when a 2026-07-28 HTTP answer first asks.
        self._as_dumped: list[bytes | None] | None = None

    def __len__(self) -> int:
        return len(self.refs)

    def encoded(self, index: int) -> bytes:
        """The JSON of the wire form at ``index``, encoded once and kept."""
        found = self._encoded[index]
        if found is None:
            found = self._encoded[index] = wire_json(self.wires[index])
        return found

    def dumped(self, index: int) -> bytes:
        """The JSON of the wire form at ``index`` as ``json.dumps`` writes it, made once and kept.

        The SDK writes its 2026-07-28 HTTP bodies with ``json.dumps`` (non-ASCII characters
        escaped, floats in Python's notation), not with the models' encoder :meth:`encoded`
        follows. Most items read the same either way (ASCII text, no floats): those share the
        bytes of :meth:`encoded` rather than holding a second copy. (Definitions hold no
        non-finite float, which ``json.dumps`` would refuse here with a ValueError.)
        """
        table = self._as_dumped
        if table is None:
            table = self._as_dumped = [None] * len(self.refs)
        found = table[index]
        if found is None:
            data = dumps(self.wires[index]).encode()
            same = self._encoded[index]
            found = table[index] = same if same is not None and same == data else data
        return found

    def encoded_range(self, start: int, stop: int) -> list[bytes]:
        """The JSON of the wire forms from ``start`` to ``stop``: one slice once all are encoded."""
        part = self._encoded[start:stop]
        if None in part:
            return [self.encoded(index) for index in range(start, stop)]
        return part  # type: ignore[return-value]  # no None left in it

    def start_after(self, key: str | None) -> int:
        """The index of the first element whose key sorts after ``key`` (0 for None)."""
        return 0 if key is None else bisect.bisect_right(self.refs, key, key=_key_of)


def _key_of(ref: ElementRef) -> str:
    return ref.key


@final
class SnapshotCache:
    """The current snapshot of one list, rebuilt only when the catalogue's answer changes."""

    __slots__ = ("_snapshot",)

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None

    def of(self, definitions: Sequence[Definition]) -> Snapshot:
        """The snapshot of ``definitions``: the cached one when they are the same sequence."""
        snapshot = self._snapshot
        if snapshot is not None and (
            snapshot.source is definitions or _same(snapshot.source, definitions)
        ):
            return snapshot
        with collector_paused():  # the snapshot lives until the catalogue changes: see _collector
            snapshot = self._snapshot = Snapshot(definitions)
        return snapshot

    async def prepare(self, definitions: Sequence[Definition]) -> None:
        """Build the snapshot of ``definitions`` and encode every item, ahead of the first list.

        The work is done in stretches of :data:`PREPARE_STRETCH` items with a checkpoint between
        them, so requests arriving meanwhile wait a stretch at most; a list asked for before it
        finishes builds (or finishes) the same snapshot itself: each wire form and each item's
        JSON is made once, whoever asks first.
        """
        count = len(definitions)
        with collector_paused():  # wire forms and bytes live as long as the snapshot
            for start in range(0, count, PREPARE_STRETCH):
                for definition in definitions[start : start + PREPARE_STRETCH]:
                    shared_wire(definition)
                await pause(cancellable=True)
        snapshot = self.of(definitions)
        with collector_paused():
            for start in range(0, count, PREPARE_STRETCH):
                for index in range(start, min(start + PREPARE_STRETCH, count)):
                    snapshot.encoded(index)
                await pause(cancellable=True)
                if self._snapshot is not snapshot:
                    return  # the catalogue changed meanwhile: the next list builds the new one


def _same(a: Sequence[Definition], b: Sequence[Definition]) -> bool:
    # A catalogue that builds a fresh list per call still gets the cached snapshot when nothing
    # changed: comparing frozen definitions is much cheaper than re-rendering and sorting them.
    return len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))


@final
class Page:
    """One page of a list: the wire dicts and the key to resume after (None on the last page)."""

    __slots__ = ("items", "resume_after")

    def __init__(self, items: EncodedItems, resume_after: str | None) -> None:
        self.items: Final = items
        self.resume_after: Final = resume_after

    @classmethod
    async def read(
        cls,
        snapshot: Snapshot,
        *,
        after: str | None,
        size: int | None,
        visible: Callable[[ElementRef], Awaitable[bool]] | None,
    ) -> Page:
        """The page of at most ``size`` elements after key ``after``, keeping the ``visible`` ones.

        With no visibility rule a page is one slice. With one, elements are checked in order until
        the page is full and one more visible element proves there is a next page, so a walk
        checks each element about once rather than once per page.
        """
        start = snapshot.start_after(after)
        total = len(snapshot)
        if visible is None:
            end = total if size is None else min(total, start + size)
            more = end < total
            items = EncodedItems(snapshot, range(start, end))
            return cls(items, snapshot.refs[end - 1].key if more else None)
        indices: list[int] = []
        refs = snapshot.refs
        last = start
        for index in range(start, total):
            if not await visible(refs[index]):
                continue
            if size is not None and len(indices) == size:
                return cls(EncodedItems(snapshot, indices), refs[last].key)
            indices.append(index)
            last = index
        return cls(EncodedItems(snapshot, indices), None)


@final
class EncodedItems(list[dict[str, Any]]):
    """A page's items: the wire dicts, and, for a transport that asks, their JSON.

    To everything else this is the list of the page's wire dicts (read-only, shared with the
    snapshot). A transport that writes JSON itself (the stdio transport) asks :meth:`encoded`
    instead of encoding the dicts again: each item is encoded once per snapshot and kept, so a
    page of a list that did not change costs one join.
    """

    __slots__ = ("_indices", "_snapshot")

    def __init__(self, snapshot: Snapshot, indices: Sequence[int]) -> None:
        wires = snapshot.wires
        if type(indices) is range:  # a page without visibility rules: one slice
            start, stop = indices.start, indices.stop
            # A page of the whole list (no page size) is copied once, not sliced and copied.
            super().__init__(wires if start == 0 and stop == len(wires) else wires[start:stop])
        else:
            super().__init__(wires[index] for index in indices)
        self._snapshot = snapshot
        self._indices = indices

    def encoded(self) -> bytes:
        """The JSON array of the items, as :func:`wire_json` writes it."""
        snapshot = self._snapshot
        indices = self._indices
        if type(indices) is range:
            return b"[" + b",".join(snapshot.encoded_range(indices.start, indices.stop)) + b"]"
        encoded = snapshot.encoded
        return b"[" + b",".join([encoded(index) for index in indices]) + b"]"

    def dumped(self) -> bytes:
        """The JSON array of the items as ``json.dumps`` writes it (see :meth:`Snapshot.dumped`)."""
        dumped = self._snapshot.dumped
        return b"[" + b",".join([dumped(index) for index in self._indices]) + b"]"


dumps: Final = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
"""``json.dumps(value, separators=(",", ":"), allow_nan=False)``, as the SDK's 2026-07-28 HTTP
entry writes its bodies (one encoder, not one built per call as ``json.dumps`` does)."""


def wire_json(value: object) -> bytes:
    """``value`` as JSON, exactly as the SDK's models write it (non-finite floats as ``null``).

    pydantic-core's own default writes ``Infinity`` and ``NaN``, which no JSON parser accepts;
    the SDK's ``model_dump_json`` writes ``null`` for them.
    """
    return pydantic_core.to_json(value, inf_nan_mode="null")


_RESPONSE_HEAD: Final = b'{"jsonrpc":"2.0","id":'


def encode_response(request_id: str | int, result: dict[str, Any]) -> bytes:
    """The JSON of the response ``result`` to ``request_id``, as its SDK model writes it."""
    return b"".join(
        (_RESPONSE_HEAD, wire_json(request_id), b',"result":', _encode_result(result), b"}")
    )


def _encode_result(result: dict[str, Any]) -> bytes:
    for value in result.values():
        if type(value) is EncodedItems:
            break
    else:
        return wire_json(result)
    parts = [
        wire_json(key)
        + b":"
        + (value.encoded() if type(value) is EncodedItems else wire_json(value))
        for key, value in result.items()
    ]
    return b"{" + b",".join(parts) + b"}"
