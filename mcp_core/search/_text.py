"""What is searched in a tool, and the words a text is made of.

One tokenizer serves the documents and the queries, so a query word finds exactly the documents
holding that word: text is NFKC-normalised, split into runs of letters and digits (``_``, ``-``,
``.`` and every other separator split, as do camelCase boundaries) and case-folded. There is no
stemming and no stop-word list: a word matches itself, which keeps a ranking explainable and
lets a test hold it equal to SQLite's own over the same words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, final

from mcp_core.elements import Element, Tool

__all__ = [
    "COLUMNS",
    "MAX_QUERY_LENGTH",
    "MAX_QUERY_TERMS",
    "WEIGHTS",
    "Fields",
    "query_terms",
    "words",
]

_WORD: Final = re.compile(r"[^\W_]+")
_UPPER: Final = re.compile(r"[A-Z]")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

COLUMNS: Final = ("name", "title", "description", "params", "tags")
"""The fields of a tool that are searched, in the index's column order."""

WEIGHTS: Final = (4.0, 3.0, 1.0, 1.0, 2.0)
"""How much a word counts in each column (BM25's weighted term frequency): a word in a tool's
name says more about it than one in its description."""

MAX_QUERY_LENGTH: Final = 1000
"""Characters a query may have."""

MAX_QUERY_TERMS: Final = 32
"""Distinct words a query may have."""


def words(text: str) -> list[str]:
    """The words of ``text``, in order: ``"getWeather_forecast"`` is ``get weather forecast``."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if _UPPER.search(text) is not None:
        text = _CAMEL.sub(" ", text)
    return _WORD.findall(text.casefold())


def query_terms(query: object) -> tuple[str, ...]:
    """The distinct words of a query, in order.

    Raises:
        TypeError: the query is not a string.
        ValueError: the query is longer than ``MAX_QUERY_LENGTH`` characters
            or has more than ``MAX_QUERY_TERMS`` distinct words (the message says which).
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if len(query) > MAX_QUERY_LENGTH:
        raise ValueError(
            f"query is {len(query)} characters long; at most {MAX_QUERY_LENGTH} are searched: "
            "ask with a few words describing the tool"
        )
    terms = tuple(dict.fromkeys(words(query)))
    if len(terms) > MAX_QUERY_TERMS:
        raise ValueError(
            f"query has {len(terms)} distinct words; at most {MAX_QUERY_TERMS} are searched: "
            "ask with fewer words"
        )
    return terms


@final
@dataclass(frozen=True, slots=True)
class Fields:
    """A tool's searched text, one tuple of words per column of :data:`COLUMNS`."""

    columns: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, element: Element) -> Fields:
        """The searched words of a tool element (its definition and tags)."""
        tool = element.definition
        if not isinstance(tool, Tool):
            raise TypeError(f"only tools are searched, got {element.ref}")
        return cls(
            (
                tuple(words(tool.name)),
                tuple(words(tool.title or "")),
                tuple(words(tool.description or "")),
                tuple(_parameter_words(tool.input_schema)),
                tuple(w for tag in sorted(element.tags) for w in words(tag)),
            )
        )

    @property
    def length(self) -> int:
        """Words in all columns (BM25's document length)."""
        return sum(len(column) for column in self.columns)

    def texts(self) -> tuple[str, ...]:
        """Each column as the text SQLite indexes: its words joined by spaces."""
        return tuple(" ".join(column) for column in self.columns)


def _parameter_words(schema: Mapping[str, Any]) -> list[str]:
    """Each top-level parameter's name, title and description."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found: list[str] = []
    for name, spec in properties.items():
        found.extend(words(str(name)))
        if isinstance(spec, Mapping):
            for key in ("title", "description"):
                text = spec.get(key)
                if isinstance(text, str):
                    found.extend(words(text))
    return found
