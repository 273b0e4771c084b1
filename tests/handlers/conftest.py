"""Shared fixtures for the handler tests: a recording gateway, an invoker, the fixture packages."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_core.handlers import Invoker
from mcp_core.handlers.testing import RecordingGateway

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def gateway() -> RecordingGateway:
    """A fresh recording gateway."""
    return RecordingGateway()


@pytest.fixture
def invoker() -> Invoker:
    """An invoker without a container."""
    return Invoker()


@pytest.fixture
def fixture_packages(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Put tests/fixtures on sys.path, and forget its modules afterwards (imports stay per test)."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    yield
    for name in [n for n in sys.modules if n.split(".")[0].startswith("discovery_pkg")]:
        del sys.modules[name]
