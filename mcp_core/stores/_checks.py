"""Argument checks shared by the stores, so every backend rejects the same mistakes alike."""

from __future__ import annotations

import math

__all__ = ["check_key", "check_ttl", "check_value"]


def check_key(key: object) -> str:
    """``key`` if it is a non-empty string; TypeError/ValueError otherwise."""
    if not isinstance(key, str):
        raise TypeError(f"cache keys are strings, got {type(key).__name__}")
    if not key:
        raise ValueError("cache keys must not be empty")
    try:
        key.encode()
    except UnicodeEncodeError as exc:  # a lone surrogate: no backend can store it
        raise ValueError(f"cache key {key!r} is not valid Unicode text") from exc
    return key


def check_value(value: object) -> bytes:
    """``value`` if it is bytes; TypeError otherwise (stores hold serialized JSON, not objects)."""
    if not isinstance(value, bytes):
        raise TypeError(
            f"cache values are bytes, got {type(value).__name__}; serialize first "
            "(e.g. ElementCollection.to_json().encode())"
        )
    return value


def check_ttl(ttl: float | None) -> float | None:
    """``ttl`` if it is None or a positive, finite number of seconds; ValueError otherwise."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        raise TypeError(f"ttl is a number of seconds or None, got {type(ttl).__name__}")
    if not math.isfinite(ttl) or ttl <= 0:
        raise ValueError(
            f"ttl must be a positive number of seconds (or None for no expiry), got {ttl!r}"
        )
    return float(ttl)
