"""ServerMetrics' scrape-time state: stale and down sources, shared backends, before the load."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from mcp_core.elements import ElementKind
from mcp_core.registry import RegistryHealth, SourceHealth
from mcp_core.server._metrics import ServerMetrics
from mcp_core.stores import BackendHealth

NOW = 1_000_000.0


def source(name: str, state: str, *, stale_since: float | None = None) -> SourceHealth:
    """A source's health as the registry reports it."""
    return SourceHealth(
        source=name,
        priority=0,
        state=state,  # type: ignore[arg-type]
        elements=3 if state != "down" else None,
        last_success=NOW - 100 if state != "down" else None,
        last_error="boom" if state != "ok" else None,
        last_error_at=NOW - 30 if state != "ok" else None,
        stale_since=stale_since,
        failures=0 if state == "ok" else 4,
        next_retry=None,
    )


def scrape(metrics: ServerMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The exposition, parsed by prometheus-client's parser."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for sample in family.samples
    }


def test_stale_and_down_sources_and_a_down_backend() -> None:
    """Each source's state is one-hot; staleness grows; a backend's circuit state is reported."""
    report = RegistryHealth(
        loaded=True,
        sources=(
            source("fresh", "ok"),
            source("stale", "degraded", stale_since=0.0),
            source("gone", "down", stale_since=0.0),
        ),
        at=NOW,
        backends=(BackendHealth(backend="redis://store", state="down", failures=2),),
        worker="w1",
    )
    metrics = ServerMetrics(
        health=lambda: report,
        catalog=lambda: {ElementKind.TOOL: 6},
        sessions=lambda: 2,
        event_bytes=lambda: None,
    )
    found = scrape(metrics)
    states = {
        (dict(labels)["source"], dict(labels)["state"]): value
        for (name, labels), value in found.items()
        if name == "mcp_source_state"
    }
    assert {key for key, value in states.items() if value == 1} == {
        ("fresh", "ok"),
        ("stale", "degraded"),
        ("gone", "down"),
    }
    assert found[("mcp_source_staleness_seconds", (("source", "fresh"),))] == 0
    assert found[("mcp_source_staleness_seconds", (("source", "stale"),))] > 0
    assert found[("mcp_source_failures", (("source", "gone"),))] == 4
    assert ("mcp_source_elements", (("source", "gone"),)) not in found
    assert found[("mcp_backend_state", (("backend", "redis://store"), ("state", "down")))] == 1
    assert found[("mcp_backend_state", (("backend", "redis://store"), ("state", "ok")))] == 0
    assert found[("mcp_catalog_elements", (("kind", "tool"),))] == 6
    assert found[("mcp_catalog_elements", (("kind", "prompt"),))] == 0
    assert found[("mcp_sessions", ())] == 2
    assert ("mcp_event_store_bytes", ()) not in found


def test_before_the_first_load() -> None:
    """No catalogue sizes before the load; every source pending."""
    report = RegistryHealth(loaded=False, sources=(source("lazy", "pending"),), at=NOW)
    metrics = ServerMetrics(
        health=lambda: report, catalog=lambda: None, sessions=lambda: 0, event_bytes=lambda: 0
    )
    found = scrape(metrics)
    assert found[("mcp_registry_loaded", ())] == 0
    assert not any(name == "mcp_catalog_elements" for name, _ in found)
    assert found[("mcp_source_state", (("source", "lazy"), ("state", "pending")))] == 1
    assert found[("mcp_event_store_bytes", ())] == 0
