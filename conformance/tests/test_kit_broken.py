"""Each deliberately broken implementation FAILs exactly the law it breaks.

A kit that passes everything proves nothing. Every module in ``broken/`` breaks one law the way
real code does; the kit must report FAIL on that law, with a reproduction, and PASS on the laws
next to it (the ones a sloppier kit would confuse it with). Sources and wrappers are cheap and
get the whole table checked; for registries the broken law and its neighbours run, to keep this
suite quick (scripts/kit runs the whole table on the reference registry).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_conformance import LAWS, laws_for
from mcp_conformance._laws import TargetKind
from mcp_conformance.reference import KNOWN_FAILURES
from mcp_conformance.testing import run_kit

pytest_plugins = ("pytester",)

# Derandomized: this suite proves each law catches its broken implementation the same way on
# every run of it (a certification draws a new seed per run; this is the kit's own regression
# suite, which must not fail by chance).
BASE = (
    "-p",
    "no:asyncio",
    "-o",
    f"pythonpath={Path(__file__).resolve().parent}",
    "--mcp-conformance-seed=derandomized",
)
ALL: tuple[str, ...] = ()
# The reference target each broken server is a variant of: its known failures are no neighbours.
REFERENCE = {"server": "mcp_conformance.reference.server:make_server"}


@dataclass(frozen=True)
class Broken:
    """A broken target, the law it breaks, and the laws that must still PASS (ALL: every other)."""

    kind: TargetKind
    module: str
    breaks: str
    neighbours: tuple[str, ...] = ALL
    factory: str = ""  # the module's factory, if not the kind's usual name
    seed: str = "derandomized"  # the run's seed where the derandomized draw misses (see below)

    @property
    def spec(self) -> str:
        """The ``--mcp-<kind>`` value."""
        usual = {
            "registry": "make_registry",
            "source": "make_source",
            "wrapper": "wrap",
            "server": "make_server",
            "visibility": "make_visibility",
            "event-store": "make_event_store",
            "cache-store": "make_cache_store",
            "change-bus": "make_change_bus",
        }[self.kind]
        return f"broken.{self.module}:{self.factory or usual}"

    @property
    def name(self) -> str:
        """The test id."""
        return f"{self.module}.{self.factory}" if self.factory else self.module


_OPTIONAL = frozenset({"source.lookup-agrees", "source.handler-targets", "wrapper.isolates"})
"""The laws of optional capabilities and claims: N/A (declared) for a target without them."""

CASES = (
    Broken("source", "source_returns_collection", "source.returns-collection"),
    Broken("source", "source_idempotent", "source.idempotent"),
    Broken("source", "source_kinds_cover", "source.kinds-cover"),
    Broken("source", "source_kinds_without_provide", "source.kinds-without-provide"),
    Broken("source", "source_json_roundtrip", "source.json-roundtrip"),
    Broken("source", "source_handler_targets", "source.handler-targets"),
    Broken("wrapper", "wrapper_transparent", "wrapper.transparent"),
    Broken("wrapper", "wrapper_kinds", "wrapper.kinds"),
    Broken("wrapper", "wrapper_isolates", "wrapper.isolates"),
    Broken("wrapper", "wrapper_prefix_limit", "wrapper.transparent"),
    # The derandomized draw never pairs a name at the limit with another tool or prompt name the
    # renaming head is learnt from; seeds 0-2 all do. Pinned to one that finds it.
    Broken("wrapper", "wrapper_prefix_lookup", "source.lookup-agrees", seed="0"),
    Broken(
        "registry",
        "registry_precedence",
        "registry.precedence",
        ("registry.model", "registry.resolver-agrees", "registry.source-isolation"),
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
        "registry_lookup_isolation",
        "registry.source-isolation",
        ("registry.resolved-whole", "registry.resolver-agrees", "registry.first-read-complete"),
    ),
    Broken(
        "registry",
        "registry_unavailable_keeps_last_good",
        "registry.unavailable-keeps-last-good",
        ("registry.source-isolation",),
    ),
    # Caught 3 runs in 4 (seeds 1-4) in the fast profile; the derandomized draw misses it since
    # the vocabularies grew case twins. Pinned to a seed that finds it.
    Broken(
        "registry",
        "registry_register_inverse",
        "registry.register-inverse",
        ("registry.model", "registry.change-events"),
        seed="2",
    ),
    Broken("registry", "registry_templates", "registry.templates", ("registry.resolver-agrees",)),
    Broken(
        "registry",
        "registry_case_insensitive",
        "registry.resolver-agrees",
        ("registry.model", "registry.templates"),
    ),
    Broken(
        "registry",
        "registry_resolved_whole",
        "registry.resolved-whole",
        ("registry.resolver-agrees", "registry.first-read-complete", "registry.candidates"),
    ),
    Broken(
        "registry",
        "registry_resolved_undeclared",
        "registry.resolved-whole",
        ("registry.resolver-agrees", "registry.templates", "registry.candidates"),
    ),
    Broken("registry", "registry_honest_kinds", "registry.honest-kinds", ("registry.lazy",)),
    Broken("registry", "registry_kinds_read_once", "registry.honest-kinds", ("registry.lazy",)),
    Broken(
        "registry",
        "registry_change_events",
        "registry.change-events",
        ("registry.model", "registry.register-inverse"),
    ),
    Broken(
        "registry",
        "registry_change_events_identity",
        "registry.change-events",
        ("registry.model", "registry.register-inverse", "registry.unsubscribe"),
    ),
    Broken(
        "registry",
        "registry_change_events_preload",
        "registry.change-events",
        ("registry.listener-isolation", "registry.unsubscribe"),
    ),
    Broken(
        "registry",
        "registry_first_read_complete",
        "registry.first-read-complete",
        ("registry.single-flight", "registry.lazy"),
    ),
    Broken(
        "registry",
        "registry_write_during_load",
        "registry.first-read-complete",
        ("registry.single-flight", "registry.lazy"),
    ),
    Broken(
        "registry",
        "registry_reload_atomic",
        "registry.reload-atomic",
        ("registry.model", "registry.load-idempotent"),
    ),
    # Not registry.source-isolation as a neighbour: it compares reads past a failing source with
    # a registry over the same sources without the fault, and the fault changes the order the
    # sources finish in, which this registry's precedence wrongly depends on (a true FAIL too).
    Broken(
        "registry",
        "registry_precedence_completion",
        "registry.precedence",
        ("registry.model",),
    ),
    Broken(
        "registry",
        "registry_kinds_raise",
        "registry.undeclared-kinds",
        ("registry.model", "registry.honest-kinds", "registry.element-isolation"),
    ),
    Broken(
        "registry",
        "registry_undeclared_kinds",
        "registry.undeclared-kinds",
        ("registry.model", "registry.honest-kinds", "registry.element-isolation"),
    ),
    Broken(
        "registry",
        "registry_listener_isolation",
        "registry.listener-isolation",
        ("registry.change-events", "registry.unsubscribe"),
    ),
    Broken(
        "registry",
        "registry_listener_base_exception",
        "registry.listener-isolation",
        ("registry.change-events", "registry.unsubscribe"),
    ),
    Broken(
        "registry",
        "registry_unsubscribe",
        "registry.unsubscribe",
        ("registry.change-events", "registry.listener-isolation"),
    ),
    Broken(
        "registry",
        "registry_drops_elements",
        "registry.model",
        ("registry.resolver-agrees", "registry.source-isolation"),
        factory="drops_tagged",
    ),
    Broken(
        "registry",
        "registry_drops_elements",
        "registry.model",
        ("registry.resolver-agrees", "registry.source-isolation"),
        factory="drops_undescribed",
    ),
    Broken("source", "source_flaky", "source.idempotent"),
    Broken("wrapper", "wrapper_shared_state", "source.idempotent"),
    Broken("server", "server_capabilities", "server.capabilities"),
    Broken("server", "server_pagination", "server.pagination"),
    Broken("server", "server_visibility", "server.visibility-agrees"),
    Broken("server", "server_answers", "server.answers"),
    Broken("server", "server_errors", "server.errors"),
    Broken("server", "server_errors_unnamed", "server.errors"),
    Broken("server", "server_call_unresolved", "server.errors"),
    Broken("server", "server_list_changed", "server.list-changed"),
    Broken("server", "server_uri_visibility", "server.visibility-agrees"),
    Broken(
        "registry",
        "registry_candidates",
        "registry.candidates",
        ("registry.templates", "registry.resolver-agrees"),
    ),
    Broken("visibility", "visibility_uri_narrows", "visibility.uri-narrows"),
    Broken("visibility", "visibility_lists_only", "visibility.uri-narrows"),
    Broken("visibility", "visibility_parts", "visibility.parts"),
    Broken("event-store", "events_owned", "events.owned"),
    Broken("event-store", "events_after", "events.after"),
    Broken("event-store", "events_unguessable", "events.unguessable"),
    Broken("event-store", "events_ended", "events.ended"),
    Broken("event-store", "events_ended_room", "events.ended"),
    Broken("event-store", "events_bounded", "events.bounded"),
    Broken("event-store", "events_bounded_age_edge", "events.bounded"),
    Broken("event-store", "events_bounded_oversized", "events.bounded"),
    # The first set winning keeps the first TTL too: store.expiry sees that as well.
    Broken("cache-store", "store_roundtrip", "store.roundtrip", ("store.delete", "store.entries")),
    # Entries that never expire, or expired ones listed, break store.expiry as well.
    Broken("cache-store", "store_expiry", "store.roundtrip", ("store.delete", "store.entries")),
    Broken("cache-store", "store_delete", "store.delete"),
    Broken("cache-store", "store_expiry_boundary", "store.expiry"),
    Broken("cache-store", "store_expiry_counts", "store.expiry"),
    Broken("cache-store", "store_entries", "store.entries", ("store.roundtrip", "store.delete")),
    Broken("change-bus", "bus_versions", "bus.versions"),
    Broken("change-bus", "bus_delivers", "bus.delivers"),
    Broken("change-bus", "bus_back_pressure", "bus.delivers"),
    Broken("change-bus", "bus_blocks_publisher", "bus.delivers"),
    # Caught on every seed measured (1-2, 201-210, 301-310: scripts/kit_power.py); the
    # derandomized draw misses it since the scenarios have six steps or more. Pinned to one.
    Broken("change-bus", "bus_catch_up", "bus.catch-up", seed="1"),
    Broken("change-bus", "bus_catch_up_after_outage", "bus.catch-up"),
)


# Laws whose broken implementation is exercised by another test module, with that module.
ELSEWHERE = {"source.lookup-agrees": "test_kit_resolution.py"}


def test_every_law_has_a_broken_implementation() -> None:
    """No law goes unproven: each has a case here (or in the module ELSEWHERE names)."""
    assert {case.breaks for case in CASES} | ELSEWHERE.keys() == {entry.id for entry in LAWS}


def _checked(case: Broken) -> tuple[str, ...]:
    """The laws that must PASS: the neighbours, or every other law but the reference's known failures."""
    if case.neighbours:
        return case.neighbours
    known = KNOWN_FAILURES.get(REFERENCE.get(case.kind, ""), {})
    return tuple(law.id for law in laws_for(case.kind) if law.id not in {case.breaks, *known})


def _selection(case: Broken) -> tuple[str, ...]:
    laws = (case.breaks, *_checked(case))
    if len(laws) == len(laws_for(case.kind)):
        return ()
    names = [f"test_{law.replace('.', '_').replace('-', '_')}" for law in laws]
    return ("-k", " or ".join(names))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_broken_law_fails_and_only_it(pytester: pytest.Pytester, case: Broken) -> None:
    """The broken law FAILs with a reproduction; every law next to it PASSes."""
    report = run_kit(
        pytester,
        *BASE,
        f"--mcp-conformance-seed={case.seed}",
        f"--mcp-{case.kind}={case.spec}",
        *_selection(case),
    )
    broken = report.law(case.breaks)
    assert broken.status == "FAIL", broken
    assert broken.detail.startswith(("LawViolation: ", "SourceError: "))
    for law_id in _checked(case):
        row = report.law(law_id)
        # N/A (inapplicable) only where the broken law left nothing to judge ("see ..."); an
        # optional capability the broken target does not implement (lookup, handler targets) is
        # N/A (declared).
        optional = row.why == "declared" and row.law in _OPTIONAL
        assert (
            optional
            or row.status == "PASS"
            or (row.why, case.breaks in row.detail)
            == (
                "inapplicable",
                True,
            )
        ), row


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
    detail = report.law("registry.precedence").detail
    assert "state.build(vocabulary=Vocabulary(" in detail
    assert "specs=[SourceSpec(" in detail


def test_missing_roles_are_not_applicable_not_passed(pytester: pytest.Pytester) -> None:
    """A registry with only a catalogue and a resolver: the other roles' laws are N/A (absent)."""
    report = run_kit(pytester, *BASE, "--mcp-registry=broken.registry_catalog_only:make_registry")
    absent = {
        "registry.load-idempotent",
        "registry.unavailable-keeps-last-good",
        "registry.reload-atomic",
        "registry.register-inverse",
        "registry.honest-kinds",
        "registry.change-events",
        "registry.listener-isolation",
        "registry.unsubscribe",
    }
    for row in report.laws:
        if row.law in absent:
            assert (row.status, row.why) == ("N/A", "absent"), row
        elif row.law == "registry.candidates":
            # An optional capability (ResourceCandidates) it does not implement: no role missing.
            assert (row.status, row.why) == ("N/A", "declared"), row
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
        "registry.first-read-complete",
        "registry.lazy",
        "registry.precedence",
        "registry.undeclared-kinds",
        "registry.source-isolation",
        "registry.unavailable-keeps-last-good",
        "registry.reload-atomic",
        "registry.resolved-whole",
    }
    for row in report.laws:
        if row.law in sourced:
            assert (row.status, row.why) == ("N/A", "declared"), row
        elif row.law.startswith("registry."):
            assert row.status == "PASS", row
    assert report.certified


def test_a_server_resolving_only_visible_elements_is_certified(pytester: pytest.Pytester) -> None:
    """server.visibility-agrees can be met: resolution that skips hidden elements passes it."""
    report = run_kit(pytester, *BASE, "--mcp-server=broken.server_resolves_visible:make_server")
    assert report.law("server.visibility-agrees").status == "PASS"
    assert report.certified


def test_a_registry_without_candidates_is_named_as_the_likely_cause(
    pytester: pytest.Pytester,
) -> None:
    """A hidden winner with no runners-up to make way for: the failure hints at ResourceCandidates."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-server=broken.server_no_candidates:make_server",
        "-k",
        "visibility_agrees",
    )
    row = report.law("server.visibility-agrees")
    assert row.status == "FAIL", row
    assert "hint: the served Forwarding has no resource_candidates(uri)" in row.detail


def test_a_registry_without_candidates_carries_a_warning(pytester: pytest.Pytester) -> None:
    """Certified without ResourceCandidates, the certificate warns what serving it with visibility costs."""
    report = run_kit(
        pytester,
        *BASE,
        "--mcp-registry=broken.registry_without_candidates:make_registry",
        "-k",
        "candidates or templates",
    )
    assert report.law("registry.candidates").why == "declared"
    (warning,) = report.warnings
    assert "no resource_candidates(uri)" in warning
    assert "server.visibility-agrees" in warning
    assert f"warning: {warning}" in report.table()
    reference = run_kit(
        pytester, *BASE, "--mcp-registry=mcp_core.registry:Registry", "-k", "candidates"
    )
    assert reference.warnings == ()


def test_a_store_without_entries_is_certified_without_the_listing_law(
    pytester: pytest.Pytester,
) -> None:
    """A CacheStore that is no ListingStore: store.entries N/A (declared), still certified."""
    report = run_kit(
        pytester, *BASE, "--mcp-cache-store=broken.store_without_entries:make_cache_store"
    )
    row = report.law("store.entries")
    assert (row.status, row.why) == ("N/A", "declared"), row
    assert "entries(prefix) (ListingStore)" in row.detail
    assert report.law("store.roundtrip").status == report.law("store.delete").status == "PASS"
    assert report.certified
    assert report.covers == ("CacheStore",)


def test_a_bus_the_kit_cannot_take_down_is_certified_on_an_uninterrupted_bus(
    pytester: pytest.Pytester,
) -> None:
    """A bus without take_down/bring_back: every bus law is checked, the certificate says so."""
    report = run_kit(pytester, *BASE, "--mcp-change-bus=broken.bus_uninterruptible:make_change_bus")
    assert report.certified
    assert report.covers == ("ChangeBus",)
