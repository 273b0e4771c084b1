"""Each deliberately broken implementation FAILs exactly the law it breaks.

A kit that passes everything proves nothing. Every module in ``broken/`` breaks one law the way
real code does; the kit must report FAIL on that law, with a reproduction, and PASS on the laws
next to it (the ones a sloppier kit would confuse it with). Sources and wrappers are cheap and
get the whole table checked; for registries the whole table is checked once (precedence), and
otherwise the broken law and its neighbours run, to keep this suite quick.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_conformance import laws_for
from mcp_conformance._laws import TargetKind
from mcp_conformance.testing import run_kit

pytest_plugins = ("pytester",)

BASE = ("-p", "no:asyncio", "-o", f"pythonpath={Path(__file__).resolve().parent}")
ALL: tuple[str, ...] = ()


@dataclass(frozen=True)
class Broken:
    """A broken target, the law it breaks, and the laws that must still PASS (ALL: every other)."""

    kind: TargetKind
    module: str
    breaks: str
    neighbours: tuple[str, ...] = ALL
    also_breaks: tuple[str, ...] = ()  # laws the same bug breaks by consequence: they FAIL too

    @property
    def spec(self) -> str:
        """The ``--mcp-<kind>`` value."""
        factory = {"registry": "make_registry", "source": "make_source", "wrapper": "wrap"}[
            self.kind
        ]
        return f"broken.{self.module}:{factory}"


CASES = (
    Broken("source", "source_returns_collection", "source.returns-collection"),
    Broken("source", "source_idempotent", "source.idempotent"),
    Broken("source", "source_kinds_cover", "source.kinds-cover"),
    Broken("source", "source_kinds_without_provide", "source.kinds-without-provide"),
    Broken("source", "source_json_roundtrip", "source.json-roundtrip"),
    Broken("wrapper", "wrapper_transparent", "wrapper.transparent"),
    Broken("wrapper", "wrapper_kinds", "wrapper.kinds"),
    # Inverted priorities also invert which of two equally specific templates answers.
    Broken(
        "registry",
        "registry_precedence",
        "registry.precedence",
        also_breaks=("registry.templates",),
    ),
    Broken(
        "registry",
        "registry_model",
        "registry.model",
        ("registry.precedence", "registry.register-inverse"),
    ),
    Broken(
        "registry",
        "registry_resolver_agrees",
        "registry.resolver-agrees",
        ("registry.templates", "registry.model"),
    ),
    Broken(
        "registry",
        "registry_load_idempotent",
        "registry.load-idempotent",
        ("registry.single-flight", "registry.lazy"),
    ),
    Broken(
        "registry",
        "registry_single_flight",
        "registry.single-flight",
        ("registry.load-idempotent", "registry.lazy"),
    ),
    Broken(
        "registry",
        "registry_lazy",
        "registry.lazy",
        ("registry.load-idempotent", "registry.honest-kinds"),
    ),
    Broken(
        "registry",
        "registry_element_isolation",
        "registry.element-isolation",
        ("registry.source-isolation", "registry.model"),
    ),
    Broken(
        "registry",
        "registry_source_isolation",
        "registry.source-isolation",
        ("registry.unavailable-keeps-last-good", "registry.element-isolation"),
    ),
    Broken(
        "registry",
        "registry_unavailable_keeps_last_good",
        "registry.unavailable-keeps-last-good",
        ("registry.source-isolation",),
    ),
    Broken(
        "registry",
        "registry_register_inverse",
        "registry.register-inverse",
        ("registry.model", "registry.change-events"),
    ),
    Broken("registry", "registry_templates", "registry.templates", ("registry.resolver-agrees",)),
    Broken("registry", "registry_honest_kinds", "registry.honest-kinds", ("registry.lazy",)),
    Broken(
        "registry",
        "registry_change_events",
        "registry.change-events",
        ("registry.model", "registry.register-inverse"),
    ),
)


def _selection(case: Broken) -> tuple[str, ...]:
    if not case.neighbours:
        return ()
    names = [
        f"test_{law.replace('.', '_').replace('-', '_')}" for law in (case.breaks, *case.neighbours)
    ]
    return ("-k", " or ".join(names))


@pytest.mark.parametrize("case", CASES, ids=[case.module for case in CASES])
def test_broken_law_fails_and_only_it(pytester: pytest.Pytester, case: Broken) -> None:
    """The broken law FAILs with a reproduction; its neighbours (or all others) PASS or are N/A."""
    report = run_kit(pytester, *BASE, f"--mcp-{case.kind}={case.spec}", *_selection(case))
    broken = report.law(case.breaks)
    assert broken.status == "FAIL", broken
    assert broken.detail.startswith(("LawViolation: ", "SourceError: "))
    for law_id in case.also_breaks:
        assert report.law(law_id).status == "FAIL", report.law(law_id)
    checked = case.neighbours or tuple(
        law.id for law in laws_for(case.kind) if law.id not in {case.breaks, *case.also_breaks}
    )
    for law_id in checked:
        row = report.law(law_id)
        assert row.status in {"PASS", "N/A"}, row
        # An optional capability the broken target does not implement (lookup) is N/A (declared).
        optional = row.law == "source.lookup-agrees" and row.why == "declared"
        assert row.status == "PASS" or row.why in {"unsupported", "inapplicable"} or optional, row


def test_hypothesis_driven_failures_carry_a_reproduction(pytester: pytest.Pytester) -> None:
    """A state-machine FAIL shows the minimal steps; a property FAIL the minimal example."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-registry=broken.registry_precedence:make_registry",
        "-k",
        "precedence",
    )
    assert "state = RegistryMachine()" in report.law("registry.precedence").detail
    assert "state.build(specs=[" in report.law("registry.precedence").detail


def test_missing_roles_are_not_applicable_not_passed(pytester: pytest.Pytester) -> None:
    """A registry with only a catalogue and a resolver: the other roles' laws are N/A (absent)."""
    report = run_kit(pytester, *BASE, "--mcp-registry=broken.registry_catalog_only:make_registry")
    absent = {
        "registry.load-idempotent",
        "registry.unavailable-keeps-last-good",
        "registry.register-inverse",
        "registry.honest-kinds",
        "registry.change-events",
    }
    for row in report.laws:
        if row.law in absent:
            assert (row.status, row.why) == ("N/A", "absent"), row
        elif row.law.startswith("registry."):
            assert row.status == "PASS", row
    assert not report.certified


def test_declared_capability_makes_its_law_not_applicable(pytester: pytest.Pytester) -> None:
    """validates_elements=False, with its reason, makes element isolation N/A (declared)."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-registry=broken.registry_declares:make_registry",
        "-k",
        "element_isolation or source_isolation",
    )
    row = report.law("registry.element-isolation")
    assert (row.status, row.why) == ("N/A", "declared")
    assert "checked by the framework's container" in row.detail
    assert report.law("registry.source-isolation").status == "PASS"


def test_claimed_role_that_is_missing_fails(pytester: pytest.Pytester) -> None:
    """writer=True with misspelt methods is a FAIL, so a typo cannot turn into N/A."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-registry=broken.registry_claims_writer:make_registry",
        "-k",
        "register_inverse",
    )
    row = report.law("registry.register-inverse")
    assert row.status == "FAIL"
    assert "claims ElementWriter (register/unregister), but _Misspelt has no" in row.detail


def test_writer_only_registry_is_certified_with_declared_not_applicable(
    pytester: pytest.Pytester,
) -> None:
    """composes_sources=False: the source laws are N/A (declared), the rest PASS through writes."""
    report = run_kit(pytester, *BASE, "--mcp-registry=broken.registry_writer_only:make_registry")
    sourced = {
        "registry.load-idempotent",
        "registry.single-flight",
        "registry.lazy",
        "registry.precedence",
        "registry.source-isolation",
        "registry.unavailable-keeps-last-good",
    }
    for row in report.laws:
        if row.law in sourced:
            assert (row.status, row.why) == ("N/A", "declared"), row
        elif row.law.startswith("registry."):
            assert row.status == "PASS", row
    assert report.certified
