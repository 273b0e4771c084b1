"""Docstrings split into a description and per-parameter descriptions.

Three conventions are recognised because users write all three: Google (``Args:`` sections),
NumPy (``Parameters`` underlined with dashes) and Sphinx (``:param name: text`` fields). The
parameter section is removed from the description (the schema carries it per property); every
other section (returns, raises, examples) stays, since it tells the model what to expect.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_HEADER = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$"
)
# The type in parentheses may hold parentheses of its own: ``children (Sequence(Layout)):``.
_GOOGLE_ITEM = re.compile(
    r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(\((?:[^()]|\([^()]*\))*\))?\s*:\s*(?P<text>.*)$"
)
_NUMPY_UNDERLINE = re.compile(r"^-{3,}\s*$")
_NUMPY_PARAM_HEADERS = frozenset(
    {"Parameters", "Arguments", "Other Parameters", "Keyword Arguments"}
)
_NUMPY_ITEM = re.compile(r"^\*{0,2}(?P<names>[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*)\s*(:.*)?$")
_SPHINX_PARAM = re.compile(
    r"^:(param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<text>.*)$"
)
_SPHINX_TYPE = re.compile(r"^:type\s+[A-Za-z_]\w*\s*:")
# A field list item starts a new field; a role (``:class:`x```) may start a continuation line.
_SPHINX_FIELD = re.compile(r"^:[^\s:`][^:`]*:(?!`)")
_EMPTY: Mapping[str, str] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """A docstring's description (parameter sections removed) and its parameter descriptions."""

    description: str | None
    params: Mapping[str, str]


_NOTHING = ParsedDocstring(None, _EMPTY)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split ``doc`` into a description and parameter descriptions (Google, NumPy or Sphinx)."""
    if not doc or not doc.strip():
        return _NOTHING
    if "\n" not in doc and not doc.lstrip().startswith(":"):
        # One line and no Sphinx field: a summary only (the common case for small tools).
        return ParsedDocstring(doc.strip(), _EMPTY)
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if _GOOGLE_HEADER.match(line):
            index = _google_section(lines, index + 1, params)
        elif (
            stripped in _NUMPY_PARAM_HEADERS
            and index + 1 < len(lines)
            and _NUMPY_UNDERLINE.match(lines[index + 1].strip())
        ):
            index = _numpy_section(lines, index + 2, params)
        elif _SPHINX_PARAM.match(stripped):
            index = _sphinx_field(lines, index, params)
        elif _SPHINX_TYPE.match(stripped):
            # ``:type x:`` restates the annotation, which the schema already carries.
            index += 1
        else:
            kept.append(line)
            index += 1
    description = "\n".join(kept).strip()
    # Sections removed from the middle leave runs of blank lines behind.
    description = re.sub(r"\n{3,}", "\n\n", description)
    return ParsedDocstring(description or None, MappingProxyType(params))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_section(lines: list[str], index: int, params: dict[str, str]) -> int:
    # The section ends at the first non-blank line indented no deeper than its header (column 0
    # after cleandoc); items sit one level deeper and continuation lines deeper still.
    item_indent: int | None = None
    name: str | None = None
    parts: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) == 0:
            break
        index += 1
        if not line.strip():
            continue
        if item_indent is None:
            item_indent = _indent(line)
        match = _GOOGLE_ITEM.match(line.strip()) if _indent(line) <= item_indent else None
        if match:
            _store(params, name, parts)
            name, parts = match["name"], [match["text"]]
        elif name is not None:
            parts.append(line.strip())
    _store(params, name, parts)
    return index


def _numpy_section(lines: list[str], index: int, params: dict[str, str]) -> int:
    # Items start at column 0 (``name : type``), descriptions are indented; the section ends at
    # the next underlined header.
    names: list[str] = []
    parts: list[str] = []
    while index < len(lines):
        line = lines[index]
        if (
            index + 1 < len(lines)
            and _NUMPY_UNDERLINE.match(lines[index + 1].strip())
            and line.strip()
        ):
            break
        index += 1
        if not line.strip():
            continue
        if _indent(line) == 0:
            match = _NUMPY_ITEM.match(line.strip())
            if match is None:
                # Prose at column 0 ends the section.
                index -= 1
                break
            for item in names:
                _store(params, item, parts)
            names = [n.strip() for n in match["names"].split(",")]
            parts = []
        elif names:
            parts.append(line.strip())
    for item in names:
        _store(params, item, parts)
    return index


def _sphinx_field(lines: list[str], index: int, params: dict[str, str]) -> int:
    match = _SPHINX_PARAM.match(lines[index].strip())
    assert match is not None  # noqa: S101 -- the caller matched this line already
    parts = [match["text"]]
    field_indent = _indent(lines[index])
    index += 1
    while index < len(lines):
        line = lines[index].strip()
        if not line:
            # A blank line ends the field, unless the field's body goes on indented after it.
            following = next((later for later in lines[index:] if later.strip()), "")
            if _indent(following) <= field_indent:
                break
            index += 1
            continue
        # Continuation lines are meant to be indented, yet are often not; an unindented
        # directive or doctest, or the next field, is not one of them.
        if _SPHINX_FIELD.match(line) or line.startswith(("..", ">>>")):
            break
        parts.append(line)
        index += 1
    _store(params, match["name"], parts)
    return index


def _store(params: dict[str, str], name: str | None, parts: list[str]) -> None:
    text = " ".join(part for part in parts if part).strip()
    if name is not None and text:
        params[name] = text
