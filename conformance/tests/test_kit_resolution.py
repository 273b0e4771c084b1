"""Per-name resolution in the kit: lookup agrees with provide; template ties follow precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_conformance import laws_for
from mcp_conformance.testing import run_kit

pytest_plugins = ("pytester",)

BASE = ("-p", "no:asyncio", "-o", f"pythonpath={Path(__file__).resolve().parent}")
LAW = "source.lookup-agrees"


def test_lookup_by_name_alone_fails_only_that_law(pytester: pytest.Pytester) -> None:
    """A lookup that confuses kinds FAILs source.lookup-agrees; every other source law holds."""
    report = run_kit(pytester, *BASE, "--mcp-source=broken.source_lookup_agrees:make_source")
    row = report.law(LAW)
    assert row.status == "FAIL", row
    assert row.detail.startswith("LawViolation: lookup(")
    assert "answered" in row.detail
    for law in laws_for("source"):
        if law.id != LAW:
            assert report.law(law.id).status in {"PASS", "N/A"}, report.law(law.id)


@pytest.mark.parametrize(
    "target",
    [
        "--mcp-source=mcp_conformance.reference.static:source",
        "--mcp-source=mcp_conformance.reference.lazy:source",
        "--mcp-source=mcp_conformance.reference.collection_file:source",
        "--mcp-source=mcp_conformance.reference.function:source",
        "--mcp-source=mcp_conformance.reference.discovery:source",
        "--mcp-wrapper=mcp_conformance.reference.prefixed:wrap",
        "--mcp-wrapper=mcp_conformance.reference.cached:wrap",
        "--mcp-wrapper=mcp_conformance.reference.filtered:wrap",
    ],
)
def test_built_in_lookups_pass(pytester: pytest.Pytester, target: str) -> None:
    """The built-in sources and wrappers that answer lookup(ref) agree with their provide()."""
    report = run_kit(pytester, *BASE, target, "-k", "lookup")
    assert report.law(LAW).status == "PASS", report.law(LAW)


def test_a_source_without_lookup_is_not_applicable_and_still_certified(
    pytester: pytest.Pytester,
) -> None:
    """No lookup(ref): the law is N/A (declared: the capability is optional), certification stands."""
    report = run_kit(pytester, *BASE, "--mcp-source=plain_source:make_source")
    row = report.law(LAW)
    assert (row.status, row.why) == ("N/A", "declared"), row
    assert "optional capability" in row.detail
    assert report.certified


def test_template_ties_by_text_fail_registry_templates(pytester: pytest.Pytester) -> None:
    """Ties broken by template text instead of source precedence FAIL registry.templates."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-registry=broken.registry_template_ties:make_registry",
        "-k",
        "templates or resolver_agrees",
    )
    row = report.law("registry.templates")
    assert row.status == "FAIL", row
    assert "equally specific" in row.detail
    assert report.law("registry.resolver-agrees").status == "PASS"
