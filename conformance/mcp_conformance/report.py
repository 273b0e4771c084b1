"""The conformance report: one row per law, as a table and as JSON.

The plugin builds a :class:`Report` at the end of a run, prints :meth:`Report.table` and, with
``--mcp-conformance-report=PATH``, writes :meth:`Report.to_json`. pytest itself exits non-zero
unless the run is certified; a stored report can be gated on again::

    python -m mcp_conformance.report report.json     # exit 1 unless certified

The verdict is one of:

- ``certified``: every law is ``PASS``, or ``N/A`` because the target declared it does not
  claim it (``Capabilities``) or, for ``source.json-roundtrip``, because the source provides live
  handlers; and at least one law passed. The report's scope says what the certificate covers.
- ``partial: not a certificate``: some law did not run (``-k``, ``-x``, an interrupted run).
- ``not certified``: some law failed, or is N/A for a reason that is no declaration (a role the
  target lacks without saying so, a law whose condition never held), or no law passed at all.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, final

from mcp_conformance._laws import LAWS

__all__ = [
    "CERTIFIED",
    "NOT_CERTIFIED",
    "PARTIAL",
    "REPORT_FORMAT",
    "CheckResult",
    "LawResult",
    "Report",
    "Status",
    "build_report",
    "load_report",
]

Status: TypeAlias = Literal["PASS", "FAIL", "N/A", "NOT RUN"]
REPORT_FORMAT: Final = "mcp-conformance/report"
_REPORT_VERSION: Final = 2
_SEVERITY: Final[dict[Status, int]] = {"NOT RUN": 0, "N/A": 1, "PASS": 2, "FAIL": 3}
# N/A reasons a certification accepts: the target said so, or (for serialization) provides live
# handlers, to which serialization does not apply.
_ACCEPTED_NA: Final = frozenset({"declared", "live-handlers"})
CERTIFIED: Final = "certified"
PARTIAL: Final = "partial: not a certificate"
NOT_CERTIFIED: Final = "not certified"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The outcome of one kit check (one pytest test), as shipped from an xdist worker."""

    law: str
    nodeid: str
    status: Status
    detail: str = ""
    why: str = ""  # for N/A: declared, live-handlers, absent or inapplicable
    examples: int = 0
    duration: float = 0.0

    def to_json(self) -> str:
        """A JSON object (what travels in a test report's ``user_properties``)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> CheckResult:
        """The inverse of :meth:`to_json`."""
        return cls(**json.loads(text))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LawResult:
    """One row of the report: a law and the outcome of its checks."""

    law: str
    statement: str
    status: Status
    detail: str = ""
    why: str = ""
    examples: int = 0

    @property
    def accepted(self) -> bool:
        """Whether this row is compatible with certification."""
        return self.status == "PASS" or (self.status == "N/A" and self.why in _ACCEPTED_NA)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """The whole report: what was certified, with what, and one row per law."""

    target: Mapping[str, str]
    profile: Mapping[str, Any]
    versions: Mapping[str, str]
    laws: tuple[LawResult, ...]
    covers: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """What the certificate implies downstream that its verdict does not show (e.g. an optional
    capability left out that a served registry with visibility needs)."""

    @property
    def counts(self) -> dict[str, int]:
        """How many laws have each status."""
        found = Counter(row.status for row in self.laws)
        return {status: found.get(status, 0) for status in ("PASS", "FAIL", "N/A", "NOT RUN")}

    @property
    def verdict(self) -> str:
        """``certified``, ``partial: not a certificate`` or ``not certified`` (see the module)."""
        if any(row.status == "FAIL" for row in self.laws):
            return NOT_CERTIFIED
        if not self.laws or any(row.status == "NOT RUN" for row in self.laws):
            return PARTIAL
        if not all(row.accepted for row in self.laws) or not self.counts["PASS"]:
            return NOT_CERTIFIED
        return CERTIFIED

    @property
    def certified(self) -> bool:
        """Whether the verdict is ``certified``."""
        return self.verdict == CERTIFIED

    @property
    def not_covered(self) -> tuple[str, ...]:
        """What the certificate does not cover: each N/A law and why."""
        return tuple(
            f"{row.law} ({row.why}): {row.detail.strip().splitlines()[0] if row.detail else ''}"
            for row in self.laws
            if row.status == "N/A"
        )

    def law(self, law_id: str) -> LawResult:
        """The row for ``law_id``."""
        for row in self.laws:
            if row.law == law_id:
                return row
        raise KeyError(f"the report has no row for {law_id!r}")

    def table(self) -> list[str]:
        """The report as text lines: one row per law, details indented under it."""
        width = max((len(row.law) for row in self.laws), default=10)
        lines = []
        for row in self.laws:
            detail = row.detail.strip().splitlines() or [""]
            if row.status == "N/A" and row.why:
                detail[0] = f"[{row.why}] {detail[0]}"
            lines.append(f"{row.law:<{width}}  {row.status:<7}  {detail[0]}".rstrip())
            lines.extend(f"{'':<{width}}  {'':<7}  {line}".rstrip() for line in detail[1:])
        counts = self.counts
        if self.covers:
            lines.append(f"covers: {', '.join(self.covers)}")
        if self.certified and self.not_covered:
            lines.append(
                f"does not cover: {'; '.join(law.split(':')[0] for law in self.not_covered)}"
            )
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        if self.profile.get("seed") is not None:
            lines.append(
                f"seed: {self.profile['seed']} (replay: --mcp-conformance-seed={self.profile['seed']})"
            )
        lines.append(
            f"{len(self.laws)} laws: {counts['PASS']} PASS, {counts['FAIL']} FAIL, "
            f"{counts['N/A']} N/A, {counts['NOT RUN']} NOT RUN - {self.verdict}" + self._why_not()
        )
        return lines

    def _why_not(self) -> str:
        if self.verdict == PARTIAL:
            return " (a run of some laws certifies nothing; run them all)"
        if self.verdict != NOT_CERTIFIED or any(row.status == "FAIL" for row in self.laws):
            return ""
        if not self.counts["PASS"]:
            return " (no law was checked)"
        unaccepted = [row.law for row in self.laws if not row.accepted]
        return (
            f" ({', '.join(unaccepted)} N/A without a declaration: implement the role, or declare "
            "what you do not claim in MCP_CONFORMANCE)"
        )

    def to_json(self) -> str:
        """The versioned JSON document."""
        document = {
            "format": REPORT_FORMAT,
            "version": _REPORT_VERSION,
            "target": dict(self.target),
            "profile": dict(self.profile),
            "versions": dict(self.versions),
            "counts": self.counts,
            "verdict": self.verdict,
            "certified": self.certified,
            "covers": list(self.covers),
            "not_covered": list(self.not_covered),
            "warnings": list(self.warnings),
            "laws": [asdict(row) for row in self.laws],
        }
        return json.dumps(document, indent=2)

    @classmethod
    def from_json(cls, text: str) -> Report:
        """Read a report written by :meth:`to_json`; ValueError if it is not one."""
        document = json.loads(text)
        if not isinstance(document, dict) or document.get("format") != REPORT_FORMAT:
            raise ValueError(f'not a conformance report: expected "format": {REPORT_FORMAT!r}')
        if document.get("version") != _REPORT_VERSION:
            raise ValueError(f"unsupported conformance report version {document.get('version')!r}")
        return cls(
            target=document["target"],
            profile=document["profile"],
            versions=document["versions"],
            laws=tuple(LawResult(**row) for row in document["laws"]),
            covers=tuple(document.get("covers", ())),
            warnings=tuple(document.get("warnings", ())),
        )


def build_report(
    *,
    target: Mapping[str, str],
    profile: Mapping[str, Any],
    versions: Mapping[str, str],
    law_ids: Sequence[str],
    results: Iterable[CheckResult],
    covers: Sequence[str] = (),
    warnings: Sequence[str] = (),
) -> Report:
    """One row per law in ``law_ids``: the worst outcome of its checks (NOT RUN if none ran)."""
    by_law: dict[str, list[CheckResult]] = {law_id: [] for law_id in law_ids}
    for result in results:
        by_law.setdefault(result.law, []).append(result)
    statements = {entry.id: entry.statement for entry in LAWS}
    rows = []
    for law_id, found in by_law.items():
        worst = max(found, key=lambda result: _SEVERITY[result.status], default=None)
        rows.append(
            LawResult(
                law=law_id,
                statement=statements.get(law_id, ""),
                status=worst.status if worst is not None else "NOT RUN",
                detail=worst.detail
                if worst is not None
                else "no check ran (deselected or interrupted)",
                why=worst.why if worst is not None else "",
                examples=sum(result.examples for result in found),
            )
        )
    return Report(
        target=target,
        profile=profile,
        versions=versions,
        laws=tuple(rows),
        covers=tuple(covers),
        warnings=tuple(warnings),
    )


def load_report(path: str | Path) -> Report:
    """Read a JSON report file."""
    return Report.from_json(Path(path).read_text(encoding="utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mcp_conformance.report PATH...``: print each report; 1 unless all certified."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_conformance.report",
        description="Print conformance reports and exit 1 unless every one is certified.",
    )
    parser.add_argument("reports", nargs="+", type=Path, help="JSON reports written by the kit")
    options = parser.parse_args(argv)
    certified = True
    for path in options.reports:
        report = load_report(path)
        target = report.target
        print(f"== {target.get('kind')} {target.get('spec')}")  # noqa: T201 -- a command-line tool
        for line in report.table():
            print(line)  # noqa: T201 -- a command-line tool
        certified = certified and report.certified
    return 0 if certified else 1


if __name__ == "__main__":
    raise SystemExit(main())
