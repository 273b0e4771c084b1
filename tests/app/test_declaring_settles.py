"""Declaring thousands of functions settles them as it goes (ADR 0112).

Asserted by the collector's state, never by time; what a start imports is held by
``tests/package/test_serving_imports.py``.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Final

from mcp_core._collector import SETTLE_EVERY

ROOT: Final = Path(__file__).resolve().parents[2]


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
