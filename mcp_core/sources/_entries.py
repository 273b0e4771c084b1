"""Cache entries: a collection's JSON behind a one-line header, authenticated and bounded.

An entry is ``{"entry": "mcp-core/cached-collection", "stored_at": t, "kinds": [...], "mac": m}``
on one line, then the collection's JSON. ``kinds`` records the inner source's ``kinds()`` when the
entry was written (so a warm cache answers ``kinds()`` without asking an expensive inner source).
``mac`` is an HMAC-SHA256 over the cache key, ``stored_at``, the kinds and the
body, keyed by the ``CachedSource``'s secret, or, without one, by a key this process draws at
random: either way an entry is *authentic* only if it was written by someone holding the key.
Reading is bounded before anything is parsed: the entry's size, the header's length, and (in
``ElementCollection.from_json``) the body's nesting.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from dataclasses import dataclass
from typing import Final, final

from mcp_core.elements import SINGLE_KINDS, ElementKind
from mcp_core.errors import CollectionFormatError

__all__ = ["CLOCK_SKEW", "DEFAULT_MAX_ENTRY_BYTES", "Entry", "EntryCodec"]

_ENTRY_FORMAT: Final = "mcp-core/cached-collection"
_HEADER_LIMIT: Final = 1024

DEFAULT_MAX_ENTRY_BYTES: Final = 128 * 1024 * 1024
"""The largest entry a ``CachedSource`` writes or reads by default."""

CLOCK_SKEW: Final = 60.0
"""Seconds an entry's ``stored_at`` may lie in the future (clocks of hosts sharing a store
differ a little); further ahead, the entry is corrupt: it would never go stale."""

# Entries written without a configured secret are authenticated with this key: they are
# trusted by this process, and by no other.
_PROCESS_KEY: Final = secrets.token_bytes(32)


@final
@dataclass(frozen=True, slots=True)
class Entry:
    """A decoded entry: when it was stored, its body, whether its MAC verified, its kinds.

    ``kinds`` is the inner source's ``kinds()`` the entry recorded (None: none recorded).
    """

    stored_at: float
    body: bytes
    authentic: bool
    kinds: ElementKind | None = None


@final
class EntryCodec:
    """Writes and reads one ``CachedSource``'s entries.

    ``secret`` (bytes, shared by every process that shares the store) keys the MAC; without it
    the MAC is keyed per process. ``max_bytes`` bounds an entry's size both ways.
    """

    __slots__ = ("_key", "max_bytes")

    def __init__(self, secret: bytes | None, *, max_bytes: int) -> None:
        if secret is not None and (not isinstance(secret, bytes) or not secret):
            raise TypeError("a CachedSource secret must be non-empty bytes")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_entry_bytes must be a positive int, got {max_bytes!r}")
        material = _PROCESS_KEY if secret is None else secret
        self._key = hashlib.sha256(b"mcp-core cached-collection\x00" + material).digest()
        self.max_bytes = max_bytes

    def encode(
        self,
        cache_key: str,
        stored_at: float,
        collection_json: str,
        kinds: ElementKind | None = None,
    ) -> bytes:
        """The entry for ``collection_json`` stored at ``stored_at`` under ``cache_key``."""
        body = collection_json.encode()
        stored_at = float(stored_at)
        labels = None if kinds is None else [k.label for k in SINGLE_KINDS if k in kinds]
        meta: dict[str, object] = {"entry": _ENTRY_FORMAT, "stored_at": stored_at}
        if labels is not None:
            meta["kinds"] = labels
        meta["mac"] = self._mac(cache_key, stored_at, labels, body)
        header = json.dumps(meta, separators=(",", ":"))
        # to_json() without indent is one line, so a newline cleanly ends the header.
        return header.encode() + b"\n" + body

    def decode(self, cache_key: str, raw: bytes, *, now: float) -> Entry:
        """The entry in ``raw``; whether it is authentic is for the caller to weigh.

        Raises:
            CollectionFormatError: the entry is too large, its header is missing, too long or
                malformed, or its ``stored_at`` is not a time up to now (plus :data:`CLOCK_SKEW`).
        """
        if len(raw) > self.max_bytes:
            raise CollectionFormatError(
                f"cache entry is {len(raw)} bytes, more than max_entry_bytes={self.max_bytes}"
            )
        newline = raw.find(b"\n", 0, _HEADER_LIMIT + 1)
        if newline < 0:
            raise CollectionFormatError("cache entry has no header line (or a header too long)")
        try:
            meta = json.loads(raw[:newline])
        except (ValueError, RecursionError) as exc:
            raise CollectionFormatError(f"cache entry header is not JSON: {exc}") from None
        if not isinstance(meta, dict) or meta.get("entry") != _ENTRY_FORMAT:
            raise CollectionFormatError(f"not a {_ENTRY_FORMAT!r} cache entry")
        stored_at = meta.get("stored_at")
        if (
            isinstance(stored_at, bool)
            or not isinstance(stored_at, int | float)
            or not math.isfinite(stored_at)
        ):
            raise CollectionFormatError(f"cache entry has an invalid stored_at {stored_at!r}")
        if stored_at > now + CLOCK_SKEW:
            raise CollectionFormatError(
                f"cache entry claims to be stored at {stored_at}, in the future (now {now})"
            )
        body = raw[newline + 1 :]
        labels = meta.get("kinds")
        if labels is not None and (
            not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)
        ):
            raise CollectionFormatError(f"cache entry has invalid kinds {labels!r}")
        mac = meta.get("mac")
        authentic = isinstance(mac, str) and hmac.compare_digest(
            mac.encode(), self._mac(cache_key, float(stored_at), labels, body).encode()
        )
        return Entry(float(stored_at), body, authentic, _kinds_of(labels))

    def _mac(self, cache_key: str, stored_at: float, labels: list[str] | None, body: bytes) -> str:
        kinds = "-" if labels is None else ",".join(labels)
        signed = hmac.new(
            self._key, f"{cache_key}\n{stored_at!r}\n{kinds}\n".encode(), hashlib.sha256
        )
        signed.update(body)
        return signed.hexdigest()


def _kinds_of(labels: list[str] | None) -> ElementKind | None:
    """The kinds a header records; None when it records none or names an unknown kind."""
    if labels is None:
        return None
    kinds = ElementKind.NONE
    for label in labels:
        try:
            kinds |= ElementKind.from_label(label)
        except ValueError:
            return None
    return kinds
