r"""Whether a result can be sent at all: UTF-8 JSON that the peer's parser accepts.

A handler's return value is normalised into a wire dict (:mod:`mcp_core.handlers._results`), but
normalising cannot make every value sendable: a string holding a lone surrogate (``"\\ud800"``)
has no UTF-8 encoding, ``NaN`` and infinities are not JSON numbers (some encoders silently turn
them into ``null``), an object of an unknown type has no JSON form at all, and a value nested
deeper than the client's JSON parser allows is refused on arrival. Sent as is, such a result
fails inside the transport's writer, after the request handler has returned: on stdio that ends
the connection, on HTTP it leaves the request unanswered. The invoker checks every result here
first, so the failure is an error answer to that one request.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

__all__ = ["MAX_RESULT_DEPTH", "repaired", "unencodable"]

MAX_RESULT_DEPTH: Final = 128
"""The deepest nesting of objects and arrays a result may have.

The official SDK parses JSON with a parser that refuses documents nested more than about 200
levels; a result sits two levels inside its JSON-RPC envelope, so 128 leaves a wide margin.
"""

# A path is built only when a problem is found: each stacked value carries its parent's link.
_Link = tuple["_Link | None", str]


# A path longer than this is shown by its head and tail: a message stays one readable line.
_PATH_PARTS: Final = 12


def _path(link: _Link | None) -> str:
    parts: list[str] = []
    while link is not None:
        link, part = link
        parts.append(part)
    parts.reverse()
    if len(parts) > _PATH_PARTS:
        half = _PATH_PARTS // 2
        parts = [*parts[:half], f"...({len(parts) - 2 * half} more)...", *parts[-half:]]
    return "$" + "".join(parts)


def unencodable(value: object, *, max_depth: int = MAX_RESULT_DEPTH) -> str | None:
    """Why ``value`` cannot be sent as UTF-8 JSON, naming where (``"$.content[0].text: ..."``).

    ``None`` when it can. The value must be made of ``dict`` (string keys), ``list``/``tuple``,
    ``str``, ``int``, finite ``float``, ``bool`` and ``None``; the message never quotes the
    offending value, only its place and what is wrong with it.
    """
    stack: list[tuple[object, int, _Link | None]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, str):
            problem = _text_problem(item)
        elif isinstance(item, float):
            problem = None if math.isfinite(item) else f"{item!r} is not a JSON number"
        elif isinstance(item, Mapping | list | tuple):
            problem = _deeper(depth, max_depth) or _push_members(item, depth, link, stack)
        else:
            problem = f"a value of type {type(item).__name__} is not JSON"
        if problem is not None:
            return f"{_path(link)}: {problem}"
    return None


def _push_members(
    item: Mapping[object, object] | list[object] | tuple[object, ...],
    depth: int,
    link: _Link | None,
    stack: list[tuple[object, int, _Link | None]],
) -> str | None:
    if not isinstance(item, Mapping):
        stack.extend((member, depth + 1, (link, f"[{index}]")) for index, member in enumerate(item))
        return None
    for key, member in item.items():
        if not isinstance(key, str):
            return f"an object key of type {type(key).__name__} (keys must be strings)"
        key_problem = _text_problem(key)
        if key_problem is not None:
            return f"an object key: {key_problem}"
        stack.append((member, depth + 1, (link, f".{key}")))
    return None


def _text_problem(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"the string holds a lone surrogate at index {exc.start}, which has no UTF-8 "
            "encoding; use valid Unicode text"
        )
    return None


def _deeper(depth: int, max_depth: int) -> str | None:
    if depth >= max_depth:
        return f"nested more than {max_depth} levels deep; flatten the value"
    return None


def repaired(value: object) -> object:
    """A copy of the JSON ``value`` with every lone surrogate replaced by U+FFFD.

    For text mcp-core writes itself around a client's input (error messages naming what the
    client sent): the client's text may hold escaped lone surrogates that JSON parsers accept but
    UTF-8 cannot carry back. Values that are already sendable come back as they are.
    """
    if isinstance(value, str):
        return value if _text_problem(value) is None else _SURROGATES.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {repaired(key): repaired(member) for key, member in value.items()}
    if isinstance(value, list | tuple):
        return [repaired(member) for member in value]
    return value


_SURROGATES: Final = re.compile("[\ud800-\udfff]")
