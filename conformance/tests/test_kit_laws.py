"""The law table and Capabilities: the written half of the specification and the kit agree."""

from __future__ import annotations

import importlib
import pkgutil
import re
import typing
from pathlib import Path
from typing import Final

import pytest

import mcp_conformance
import mcp_core
from mcp_conformance import LAWS, Capabilities, laws_for
from mcp_conformance._laws import TargetKind, law
from mcp_conformance._session import LAW_MARK
from mcp_conformance.plugin import check_files
from mcp_conformance.report import CheckResult, build_report

_CHECKS: Final = Path(mcp_conformance.__file__).resolve().parent / "_checks"
_TARGET_KINDS: Final[tuple[TargetKind, ...]] = typing.get_args(TargetKind)
_LAW_ID: Final = re.compile(r"``([a-z]+\.[a-z-]+)``")


def _protocols_with_laws() -> dict[str, type]:
    """Every Protocol of mcp_core whose own docstring has a ``Laws:`` section, by qualified name.

    Every module is imported (an import error fails the test: a module the walk cannot see would
    hide its laws), so a new Protocol with laws is found wherever it is written.
    """
    found: dict[str, type] = {}
    for module_info in pkgutil.walk_packages(mcp_core.__path__, "mcp_core."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                # typing.is_protocol is 3.13+; _is_protocol is what it reads.
                and getattr(value, "_is_protocol", False)
                and value.__module__.startswith("mcp_core.")
                and "Laws:" in (value.__dict__.get("__doc__") or "")
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def _docstring_laws() -> dict[str, str]:
    """The law ids the Protocol docstrings' ``Laws:`` sections name, each with its Protocol."""
    found: dict[str, str] = {}
    for name, protocol in _protocols_with_laws().items():
        laws = (protocol.__doc__ or "").partition("Laws:")[2]
        for law_id in _LAW_ID.findall(laws):
            found.setdefault(law_id, name)
    return found


def _checks_by_law() -> dict[str, list[str]]:
    """Each law id to the kit checks (``module.function``) marked as certifying it."""
    found: dict[str, list[str]] = {}
    for path in sorted(_CHECKS.glob("*_laws.py")):
        module = importlib.import_module(f"mcp_conformance._checks.{path.stem}")
        for name, value in vars(module).items():
            for mark in getattr(value, "pytestmark", ()):
                if name.startswith("test_") and mark.name == LAW_MARK:
                    found.setdefault(mark.args[0], []).append(f"{path.stem}.{name}")
    return found


class TestLawTable:
    """The kit's law ids are the docstrings' ids, and each has a check that runs."""

    def test_ids_are_unique(self) -> None:
        """No law is listed twice."""
        ids = [entry.id for entry in LAWS]
        assert len(ids) == len(set(ids))

    def test_the_walk_finds_every_protocol_with_laws(self) -> None:
        """The discovery is no empty loop: the Protocols known to carry laws are all found."""
        assert {
            "mcp_core.sources._protocol.ElementSource",
            "mcp_core.sources._protocol.ElementLookup",
            "mcp_core.registry._protocols.ResourceCandidates",
            "mcp_core.visibility._protocol.UriVisibility",
            "mcp_core.server._events.SessionEventStore",
            "mcp_core.stores._protocol.CacheStore",
            "mcp_core.stores._protocol.ListingStore",
            "mcp_core.stores._bus.ChangeBus",
        } <= set(_protocols_with_laws())

    def test_every_docstring_law_is_a_law_of_the_kit(self) -> None:
        """Each id in any Protocol's Laws: section is a row of the kit's law table."""
        kit = {entry.id for entry in LAWS}
        unknown = {
            law_id: protocol for law_id, protocol in _docstring_laws().items() if law_id not in kit
        }
        assert not unknown, f"laws written in docstrings but unknown to the kit: {unknown}"

    def test_every_kit_law_is_written_down(self) -> None:
        """Each kit law is in some Protocol's Laws:, but those of targets that have no Protocol."""
        unwritten = {entry.id for entry in LAWS} - set(_docstring_laws())
        # A server is certified at the wire, as the MCP specification describes it, and a
        # wrapper is an ElementSource made over another: mcp-core has no Protocol for either to
        # be written on. The server's law about visibility is written on ElementVisibility,
        # where the author of a rule reads it.
        assert unwritten == {
            "server.capabilities",
            "server.pagination",
            "server.answers",
            "server.errors",
            "server.list-changed",
            "wrapper.transparent",
            "wrapper.kinds",
            "wrapper.isolates",
        }

    def test_every_law_has_a_check(self) -> None:
        """Each law, docstring laws included, has a @checks function; each check names a law."""
        checks = _checks_by_law()
        assert set(checks) == {entry.id for entry in LAWS}
        assert set(_docstring_laws()) <= set(checks)

    @pytest.mark.parametrize("kind", _TARGET_KINDS)
    def test_each_law_is_checked_for_its_targets(self, kind: TargetKind) -> None:
        """The check module of every law a target answers to is among the files the plugin runs."""
        modules = {path.stem for path in check_files(kind)}
        checks = _checks_by_law()
        assert {
            entry.id
            for entry in laws_for(kind)
            if not {name.split(".")[0] for name in checks[entry.id]} <= modules
        } == set()

    def test_visibility_law_is_written_on_the_visibility_protocol(self) -> None:
        """The server law a visibility rule's author must know is in ElementVisibility's Laws."""
        assert (
            _docstring_laws()["server.visibility-agrees"]
            == "mcp_core.visibility._protocol.ElementVisibility"
        )

    def test_laws_for_each_target(self) -> None:
        """A wrapper answers to the source laws too; registries and servers to their own."""
        assert {entry.about for entry in laws_for("source")} == {"source"}
        assert {entry.about for entry in laws_for("wrapper")} == {"source", "wrapper"}
        assert {entry.about for entry in laws_for("registry")} == {"registry"}
        assert {entry.about for entry in laws_for("server")} == {"server"}
        assert {entry.about for entry in laws_for("visibility")} == {"visibility"}
        assert {entry.about for entry in laws_for("event-store")} == {"events"}
        assert {entry.about for entry in laws_for("cache-store")} == {"store"}
        assert {entry.about for entry in laws_for("change-bus")} == {"bus"}

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
