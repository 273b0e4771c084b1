"""The law table and Capabilities: the written half of the specification and the kit agree."""

from __future__ import annotations

import re

import pytest

from mcp_conformance import LAWS, Capabilities, laws_for
from mcp_conformance._laws import law
from mcp_conformance.report import CheckResult, build_report
from mcp_core.registry import (
    ChangeNotifier,
    DeferredRegistry,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
)
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

_PROTOCOLS = (
    ElementSource,
    ElementCatalog,
    ElementResolver,
    ElementWriter,
    DeferredRegistry,
    ChangeNotifier,
    ElementVisibility,
)


def _docstring_law_ids() -> set[str]:
    """The law ids the Protocol docstrings' ``Laws:`` sections name."""
    found: set[str] = set()
    for protocol in _PROTOCOLS:
        laws = (protocol.__doc__ or "").partition("Laws:")[2]
        found.update(re.findall(r"``([a-z]+\.[a-z-]+)``", laws))
    return found


class TestLawTable:
    """The kit's law ids are the docstrings' ids."""

    def test_ids_are_unique(self) -> None:
        """No law is listed twice."""
        ids = [entry.id for entry in LAWS]
        assert len(ids) == len(set(ids))

    def test_every_docstring_law_has_a_check(self) -> None:
        """Each id in a Protocol's Laws: section is a law of the kit."""
        assert _docstring_law_ids() <= {entry.id for entry in LAWS}

    def test_every_source_and_registry_law_is_written_down(self) -> None:
        """Each source and registry law of the kit appears in some Protocol's Laws: section."""
        kit = {entry.id for entry in LAWS if entry.about in {"source", "registry"}}
        assert kit == _docstring_law_ids() - {"server.visibility-agrees"}

    def test_visibility_law_is_written_on_the_visibility_protocol(self) -> None:
        """The server law a visibility rule's author must know is in ElementVisibility's Laws."""
        assert "server.visibility-agrees" in _docstring_law_ids()

    def test_laws_for_each_target(self) -> None:
        """A wrapper answers to the source laws too; registries and servers to their own."""
        assert {entry.about for entry in laws_for("source")} == {"source"}
        assert {entry.about for entry in laws_for("wrapper")} == {"source", "wrapper"}
        assert {entry.about for entry in laws_for("registry")} == {"registry"}
        assert {entry.about for entry in laws_for("server")} == {"server"}

    def test_unknown_id_names_the_known_ones(self) -> None:
        """A misspelt law id is an error listing the real ones."""
        with pytest.raises(KeyError, match=r"registry\.precedence"):
            law("registry.precendence")


class TestCapabilities:
    """What a target may declare, and the reason it must give."""

    def test_default_claims_everything(self) -> None:
        """Nothing is withdrawn by default."""
        assert Capabilities().withdrawn == ()
        assert Capabilities().describe() == "claims every law"

    def test_withdrawing_needs_a_reason(self) -> None:
        """composes_sources=False without a reason is refused, naming the field."""
        with pytest.raises(ValueError, match="composes_sources"):
            Capabilities(composes_sources=False)

    def test_withdrawal_with_reason_is_described(self) -> None:
        """The header shows the withdrawn claim and why."""
        capabilities = Capabilities(writer=False, reason="read-only catalogue")
        assert capabilities.withdrawn == ("writer",)
        assert capabilities.describe() == "writer=False (read-only catalogue)"

    def test_relation_requires_transparent_false(self) -> None:
        """A declared relation replaces transparency explicitly."""
        with pytest.raises(ValueError, match="transparent=False"):
            Capabilities(relation=lambda collection: collection)

    def test_claims_are_booleans(self) -> None:
        """A truthy string is not a claim."""
        with pytest.raises(TypeError, match="writer"):
            Capabilities(writer="yes")  # type: ignore[arg-type]  # the mistake under test


class TestVerdict:
    """The report's verdict, from its rows alone."""

    @staticmethod
    def verdict(*rows: tuple[str, str]) -> str:
        """The verdict of a report whose laws have these (status, why) rows."""
        results = [
            CheckResult(law=f"source.law-{index}", nodeid="", status=status, why=why)  # type: ignore[arg-type]  # statuses as written in the table
            for index, (status, why) in enumerate(rows)
            if status != "NOT RUN"
        ]
        report = build_report(
            target={},
            profile={},
            versions={},
            law_ids=[f"source.law-{index}" for index in range(len(rows))],
            results=results,
        )
        return report.verdict

    def test_every_law_passing_or_declared_away_certifies(self) -> None:
        """PASS, N/A declared and N/A live-handlers certify; the rows say what is left out."""
        assert self.verdict(("PASS", ""), ("N/A", "declared"), ("N/A", "live-handlers")) == (
            "certified"
        )

    def test_a_failure_is_not_certified(self) -> None:
        """One FAIL, whatever else."""
        assert self.verdict(("PASS", ""), ("FAIL", ""), ("NOT RUN", "")) == "not certified"

    def test_a_law_not_run_is_partial(self) -> None:
        """A subset is no certificate."""
        assert self.verdict(("PASS", ""), ("NOT RUN", "")) == "partial: not a certificate"

    def test_undeclared_not_applicable_is_not_certified(self) -> None:
        """Absent (a role missing without a word) and inapplicable (never judged) do not certify."""
        assert self.verdict(("PASS", ""), ("N/A", "absent")) == "not certified"
        assert self.verdict(("PASS", ""), ("N/A", "inapplicable")) == "not certified"

    def test_nothing_checked_is_not_certified(self) -> None:
        """Every law declared away: nothing was certified."""
        assert self.verdict(("N/A", "declared"), ("N/A", "declared")) == "not certified"
