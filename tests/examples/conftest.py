"""Fixtures for the consumer examples: each served as its documented command runs it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from tests.clients import ROOT
from tests.e2e.conftest import free_port, serving, serving_http

EXAMPLES = ROOT / "examples"

MODES = ("auto", "legacy")
"""The official client's default mode (negotiates 2026-07-28) and its legacy mode (2025-11-25)."""


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each test runs once per client mode."""
    value: str = request.param
    return value


@pytest.fixture
def serve_http() -> Callable[..., AbstractContextManager[str]]:
    """``mcp-core run TARGET --transport http`` on a free loopback port (a fresh server per use)."""
    return serving_http


@contextmanager
def running_script(
    script: Path, *arguments: str, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``python SCRIPT --port N ARGUMENTS`` on a free loopback port, as its docs page says; yields its URL."""
    port = free_port()
    command = [sys.executable, str(script), "--port", str(port), *arguments]
    with serving(command, port, env):
        yield f"http://127.0.0.1:{port}"
