"""adr/README.md indexes every decision record by layer, each once, each link resolving."""

from __future__ import annotations

import re
from pathlib import Path

ADR = Path(__file__).resolve().parents[2] / "adr"


def test_every_record_is_indexed_once() -> None:
    """Each ``adr/NNNN-*.md`` appears once in the index; every link names an existing record."""
    index = (ADR / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\((\d{4}-[^)]+\.md)\)", index)
    records = sorted(path.name for path in ADR.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert sorted(set(linked)) == records, (
        "adr/README.md must list every record under its layer: "
        f"missing {sorted(set(records) - set(linked))}, unknown {sorted(set(linked) - set(records))}"
    )
    assert len(linked) == len(set(linked)), "a record is listed twice"
