"""Every promise is a law or is marked informative.

The contracts are stated twice: in the docstrings of the Protocols the kit certifies and in the
contract sections of ``docs/architecture.md``. A promise stated in prose that no law checks is
where broken implementations pass unnoticed, so every sentence of both either carries a law id
the kit checks (each item of a ``Laws:`` section starts with its id; a prose sentence may name
one) or is listed in ``promises.toml`` next to this file, with the law that checks it or, marked
informative, the reason it promises nothing a kit could check. The test holds the ledger to the
text: a new or reworded sentence fails it until it is classified, and an entry whose sentence is
gone fails it too.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from mcp_conformance import LAWS

_ROOT: Final = Path(__file__).resolve().parents[2]
_LEDGER: Final = Path(__file__).resolve().parent / "promises.toml"
_LAW_ID: Final = re.compile(r"`{1,2}([a-z]+\.[a-z-]+)`{1,2}")
_ITEM: Final = re.compile(r"^\s*\d+\.\s+``([a-z]+\.[a-z-]+)``:", re.MULTILINE)

PROTOCOLS: Final = (
    "mcp_core.sources._protocol.ElementSource",
    "mcp_core.sources._protocol.ElementLookup",
    "mcp_core.sources._protocol.KindsPrefetch",
    "mcp_core.sources._protocol.DiagnosticsReport",
    "mcp_core.sources._protocol.HandlerTargets",
    "mcp_core.sources._protocol.CacheInputs",
    "mcp_core.sources._protocol.RunningSource",
    "mcp_core.sources._protocol.ChangingSource",
    "mcp_core.sources._protocol.Repairable",
    "mcp_core.sources._protocol.WrappingSource",
    "mcp_core.registry._protocols.ElementCatalog",
    "mcp_core.registry._protocols.ElementResolver",
    "mcp_core.registry._protocols.ResourceCandidates",
    "mcp_core.registry._protocols.ElementWriter",
    "mcp_core.registry._protocols.DeferredRegistry",
    "mcp_core.registry._protocols.ChangeNotifier",
    "mcp_core.registry._protocols.ElementAtRef",
    "mcp_core.registry._protocols.CatalogCollection",
    "mcp_core.registry._protocols.ElementOrigin",
    "mcp_core.registry._protocols.HealthReport",
    "mcp_core.registry._protocols.BackgroundRecovery",
    "mcp_core.registry._protocols.ConfiguredSources",
    "mcp_core.registry._protocols.SourceChangeNotifier",
    "mcp_core.visibility._protocol.ElementVisibility",
    "mcp_core.visibility._protocol.UriVisibility",
    "mcp_core.server._events.SessionEventStore",
    "mcp_core.stores._protocol.CacheStore",
    "mcp_core.stores._protocol.ListingStore",
    "mcp_core.stores._bus.ChangeBus",
)
"""The Protocols of the kit's targets (a registry's roles, sources, visibility, the stores, the bus)
and the optional capabilities a source or registry may add."""

SECTIONS: Final = ("3.2", "3.3", "3.4", "3.7")
"""The contract sections of docs/architecture.md about what the kit certifies."""


def sentences(text: str) -> list[str]:
    """``text`` as sentences, whitespace folded (``e.g.``/``i.e.`` do not end one)."""
    folded = " ".join(text.split())
    for abbreviation in ("e.g.", "i.e.", "etc.", "vs."):
        folded = folded.replace(abbreviation, abbreviation.replace(".", "\0"))
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`(\d\"*])", folded)
    return [part.replace("\0", ".").strip() for part in parts if part.strip()]


def _protocol_prose(name: str) -> Iterator[str]:
    module, _, attribute = name.rpartition(".")
    doc = inspect.cleandoc(getattr(importlib.import_module(module), attribute).__doc__ or "")
    prose, _, laws = doc.partition("Laws:")
    yield from sentences(prose)
    items = _ITEM.split(laws)
    if items[0].strip():
        yield from sentences(items[0])  # text in Laws: before its first numbered item


def _architecture_prose() -> Iterator[tuple[str, str]]:
    text = (_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.MULTILINE)
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        number = title.lstrip("#").split()[0]
        if number not in SECTIONS:
            continue
        prose = re.sub(r"```.*?```", "", body, flags=re.DOTALL)
        for paragraph in prose.split("\n\n"):
            if paragraph.lstrip().startswith("|"):
                continue  # a table: its rows name methods and roles, the prose states the laws
            for sentence in sentences(paragraph):
                yield f"docs/architecture.md {number}", sentence


def prose_sentences() -> Iterator[tuple[str, str]]:
    """Every sentence of the contracts that does not name a law id itself: (where, sentence)."""
    for name in PROTOCOLS:
        for sentence in _protocol_prose(name):
            if not _LAW_ID.search(sentence):
                yield name, sentence
    for where, sentence in _architecture_prose():
        if not _LAW_ID.search(sentence):
            yield where, sentence


def _ledger() -> list[dict[str, str]]:
    entries: list[dict[str, str]] = tomllib.loads(_LEDGER.read_text(encoding="utf-8"))["sentence"]
    return entries


def test_every_law_item_starts_with_its_id() -> None:
    """Each numbered item of a Laws: section opens with a law id the kit checks."""
    kit = {entry.id for entry in LAWS}
    for name in PROTOCOLS:
        module, _, attribute = name.rpartition(".")
        doc = inspect.cleandoc(getattr(importlib.import_module(module), attribute).__doc__ or "")
        laws = doc.partition("Laws:")[2]
        numbered = re.findall(r"^\s*\d+\.\s", laws, flags=re.MULTILINE)
        ids = _ITEM.findall(laws)
        assert len(ids) == len(numbered), f"{name}: a Laws: item does not open with its ``id``:"
        assert set(ids) <= kit, f"{name}: {sorted(set(ids) - kit)} are not laws of the kit"


def test_every_sentence_is_a_law_or_informative() -> None:
    """Each prose sentence is in the ledger, once, with a kit law or a reason it is informative."""
    kit = {entry.id for entry in LAWS}
    entries = _ledger()
    unclassified = []
    used: dict[int, str] = {}
    for where, sentence in prose_sentences():
        matches = [
            number
            for number, entry in enumerate(entries)
            if entry["in"] == where and sentence.startswith(entry["starts"])
        ]
        if not matches:
            unclassified.append(f"{where}: {sentence}")
            continue
        assert len(matches) == 1, f"{where}: {sentence!r} matches ledger entries {matches}"
        used[matches[0]] = sentence
    assert not unclassified, (
        f"sentences of the contracts that are neither a law nor marked informative in "
        f"{_LEDGER.name} (add an entry with law = ... or informative = ...):\n"
        + "\n".join(unclassified)
    )
    stale = [entry for number, entry in enumerate(entries) if number not in used]
    assert not stale, f"ledger entries whose sentence is gone: {stale}"
    for entry in entries:
        law, informative = entry.get("law"), entry.get("informative")
        assert (law is None) != (informative is None), f"one of law/informative: {entry}"
        if law is not None:
            assert law in kit, f"{entry['starts']!r}: {law!r} is not a law of the kit"
        else:
            assert str(informative).strip(), f"{entry['starts']!r}: informative needs a reason"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two, e.g. three. ``x`` four.", ["One.", "Two, e.g. three.", "``x`` four."]),
        ("A (b). C", ["A (b).", "C"]),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    """The splitter the ledger is keyed by."""
    assert sentences(text) == expected
