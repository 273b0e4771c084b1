"""A plain stdio start imports only what serving declared functions over stdio needs (ADR 0112).

Start-up time is what a user feels first, and every module imported before the first answer is
paid by every start. These tests assert what is imported, never how long anything takes: the
modules of HTTP, deployments, stores, search and the other sources stay out of a process that
serves declared tools over stdio, up to and including its first ``tools/call``.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Final

import pytest
from mcp import Client, StdioServerParameters

from mcp_core._collector import SETTLE_EVERY
from tests.clients import ok_text

ROOT: Final = Path(__file__).resolve().parents[2]

HEAVY: Final = (
    # Third-party modules the SDK does not import either: HTTP parsing, optional backends.
    "h11",
    "uvicorn.protocols.http.h11_impl",
    "redis",
    "sqlite3",
    "jsonschema",
    "prometheus_client",
    "opentelemetry.sdk",
    # mcp-core's own modules for HTTP, deployments, stores, search and the other sources.
    "mcp_core.server._deployment",
    "mcp_core.server._hotpath",
    "mcp_core.server._operator",
    "mcp_core.server._sessions",
    "mcp_core.stores._memory",
    "mcp_core.stores._redis",
    "mcp_core.stores._redis_bus",
    "mcp_core.stores._sqlite",
    "mcp_core.search",
    "mcp_core.sources._cached",
    "mcp_core.sources._discovery",
    "mcp_core.sources._entry_points",
    "mcp_core.sources._file",
    "mcp_core.sources._shared",
    "mcp_core.sources._wrappers",
)
"""Modules a plain stdio start must not import (each is imported where it is used)."""

APP: Final = textwrap.dedent(
    """
    import sys

    from mcp_core.app import App

    app = App("startup")
    HEAVY = {heavy!r}


    @app.tool
    def loaded() -> str:
        '''The heavy modules imported so far, as JSON.'''
        import json

        return json.dumps(sorted(name for name in HEAVY if name in sys.modules))


    app.run()
    """
)


@pytest.fixture
def app_script(tmp_path: Path) -> Path:
    """The app: one tool answering which of HEAVY the serving process has imported."""
    script = tmp_path / "startup_app.py"
    script.write_text(APP.format(heavy=HEAVY), encoding="utf-8")
    return script


@pytest.mark.parametrize("options", [{}, {"mode": "legacy"}], ids=["2026-07-28", "legacy"])
async def test_a_stdio_start_imports_no_heavy_module(
    app_script: Path, options: dict[str, Any]
) -> None:
    """Up to its first call, a served app has imported none of HEAVY (both protocol eras)."""
    # A real start: `python app.py`, the official client over the process's pipes.
    params = StdioServerParameters(
        command=sys.executable, args=[str(app_script)], cwd=str(ROOT), env=dict(os.environ)
    )
    async with Client(params, **options) as client:
        loaded = json.loads(ok_text(await client.call_tool("loaded", {})))
    assert loaded == [], f"a plain stdio start imported {loaded}"


def test_importing_an_http_module_still_works() -> None:
    """What the stdio start leaves out is imported where it is used: the public names resolve."""
    code = textwrap.dedent(
        """
        import sys
        import mcp_core.app, mcp_core.server, mcp_core.sources, mcp_core.stores
        assert "mcp_core.server._deployment" not in sys.modules
        assert mcp_core.server.Deployment.__module__ == "mcp_core.server._deployment"
        assert mcp_core.sources.CachedSource.__module__ == "mcp_core.sources._cached"
        assert mcp_core.stores.RedisStore.__module__ == "mcp_core.stores._redis"
        assert "Deployment" in dir(mcp_core.server) and "SqliteStore" in dir(mcp_core.stores)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)  # noqa: S603 -- our own code


def test_a_large_app_settles_its_declarations() -> None:
    """Every SETTLE_EVERY declarations leave the collector's sight (a small app: never)."""
    code = textwrap.dedent(
        f"""
        import gc
        import itertools
        from mcp_core.app import App

        names = itertools.count()

        app = App("large")
        frozen = gc.get_freeze_count()

        def declare(count):
            for i in range(count):
                def fn(x: int) -> int:
                    return x
                app.tool(name=f"t{{next(names)}}")(fn)

        declare({SETTLE_EVERY} - 1)
        assert gc.get_freeze_count() == frozen, "settled before SETTLE_EVERY declarations"
        declare(1)
        assert gc.get_freeze_count() > frozen, "not settled at SETTLE_EVERY declarations"
        assert gc.isenabled()
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)  # noqa: S603 -- our own code
    assert gc.isenabled()
