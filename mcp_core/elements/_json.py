"""Deeply immutable JSON values.

Definitions carry JSON sub-documents (input schemas, ``_meta``). Freezing them on construction is
what makes a definition a real value: hashable, comparable, and impossible to mutate behind the
registry's back (a schema edited in place after registration would silently change what clients
see and what arguments validate against).
"""

from __future__ import annotations

import math
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Final, TypeAlias, final

__all__ = ["MAX_JSON_DEPTH", "FrozenDict", "JsonValue", "freeze", "shared_plain", "thaw"]

MAX_JSON_DEPTH: Final = 64
"""How deeply a decoded document's JSON values (schemas, ``_meta``) may nest.

Far deeper than any real schema, far shallower than what would exhaust Python's recursion
wherever the value is walked later (rendering, validation)."""

JsonValue: TypeAlias = "bool | int | float | str | tuple[JsonValue, ...] | FrozenDict | None"


@final
class FrozenDict(Mapping[str, "JsonValue"]):
    """An immutable, hashable JSON object; compares equal to any mapping with the same items."""

    __slots__ = ("_data", "_hash", "_plain")

    def __init__(self, data: Mapping[str, JsonValue] | None = None) -> None:
        self._data: dict[str, JsonValue] = dict(data) if data else {}
        self._hash: int | None = None
        self._plain: dict[str, Any] | None = None

    def __getitem__(self, key: str) -> JsonValue:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    # The Mapping mixins go through __getitem__ and views in Python; these are the dict's own.
    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key``, or ``default``."""
        return self._data.get(key, default)

    def keys(self) -> KeysView[str]:
        """The keys, in order."""
        return self._data.keys()

    def values(self) -> ValuesView[JsonValue]:
        """The values, in order."""
        return self._data.values()

    def items(self) -> ItemsView[str, JsonValue]:
        """The ``(key, value)`` pairs, in order."""
        return self._data.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def freeze(value: object, *, path: str = "$", max_depth: int | None = None) -> JsonValue:
    """Return an immutable copy of a JSON value: dicts become FrozenDict, lists become tuples.

    ``max_depth`` bounds how deeply objects and arrays may nest (None: as deep as Python's
    recursion allows); decoders of untrusted documents pass :data:`MAX_JSON_DEPTH`.

    Raises:
        TypeError: a value that JSON cannot carry (a set, an object, a non-string key), naming
            where it sits (``path`` is a JSONPath-like location used in the message).
        ValueError: a float that JSON cannot carry (NaN or infinity), or nesting deeper than
            ``max_depth``.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path}: {value!r} is not representable in JSON; use a finite number")
        return value
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        inner = _inner_depth(max_depth, path)
        frozen: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"{path}: JSON object keys must be strings, got {type(key).__name__} {key!r}"
                )
            frozen[key] = freeze(item, path=f"{path}.{key}", max_depth=inner)
        return FrozenDict(frozen)
    if isinstance(value, (list, tuple)):
        inner = _inner_depth(max_depth, path)
        return tuple(
            freeze(item, path=f"{path}[{index}]", max_depth=inner)
            for index, item in enumerate(value)
        )
    raise TypeError(
        f"{path}: {type(value).__name__} is not a JSON value; use dict, list, str, int, float, "
        "bool or None"
    )


def _inner_depth(max_depth: int | None, path: str) -> int | None:
    # One level used by the container at ``path``; kept out of line so that freezing costs no
    # extra stack frame per level (deep definitions are refused by admission, not by a crash).
    if max_depth is None:
        return None
    if max_depth < 1:
        raise ValueError(f"{path}: JSON nested too deeply; flatten it")
    return max_depth - 1


def thaw(value: object) -> Any:
    """Return a plain, mutable JSON copy (dicts and lists) of a frozen value."""
    if type(value) is FrozenDict:  # final: no subclass to miss, and no ABC check
        return {key: thaw(item) for key, item in value._data.items()}  # noqa: SLF001 -- its own module
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


def shared_plain(value: object) -> Any:
    """The plain form (dicts and lists) of a frozen value, made once per FrozenDict and shared.

    Every definition holding one frozen schema gets the same plain dict in its wire form, so a
    catalogue of ten thousand tools with two distinct schemas holds two plain copies, not twenty
    thousand. Read-only, like everything built from it; :func:`thaw` makes a copy of one's own.
    """
    if type(value) is FrozenDict:
        plain = value._plain  # noqa: SLF001 -- its own module
        if plain is None:
            plain = value._plain = {key: shared_plain(item) for key, item in value._data.items()}  # noqa: SLF001 -- same
        return plain
    if isinstance(value, tuple):
        return [shared_plain(item) for item in value]
    return value
