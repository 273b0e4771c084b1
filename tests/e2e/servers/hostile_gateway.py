"""A gateway with a local tool, a healthy backend and a hostile one (see ``hostile_backend.py``).

Served by ``mcp-core run ... --transport http`` in the hostile-backend tests. ``HEALTHY_URL`` and
``HOSTILE_URL`` say where the backends listen; with ``PIPED_PLAN``, a second hostile backend is
started over stdio with that plan, under the prefix ``piped``; ``HOSTILE_MAX_ELEMENTS``,
``HOSTILE_MAX_BYTES`` and ``HOSTILE_MAX_MESSAGE_BYTES`` set the hostile remote's bounds (the
defaults otherwise).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp_core.app import App
from mcp_core.bridges import RemoteSource
from mcp_core.sources import PrefixedSource

app = App("hostile-gateway")

bounds: dict[str, Any] = {}
for option in ("max_elements", "max_bytes", "max_message_bytes"):
    value = os.environ.get(f"HOSTILE_{option.upper()}")
    if value:
        bounds[option] = int(value)

# Each example starts another hostile backend on the same URL. In the 2026-07-28 era no session
# tells the gateway it is a new server, and a backend that announces no changes is seen at its
# next listing: every 2 s here rather than the default minute (which made a test wait a minute
# for each such example).
options: dict[str, Any] = {
    "health_interval": 0.2,
    "max_backoff": 1.0,
    "timeout": 30.0,
    "poll_interval": 2.0,
}
app.add_source(
    PrefixedSource(
        RemoteSource.http(os.environ["HEALTHY_URL"], name="weather", **options), "weather"
    )
)
# A call to the hostile backend (which may hang its calls, or freeze) is given 2 s.
app.add_source(
    PrefixedSource(
        RemoteSource.http(
            os.environ["HOSTILE_URL"], name="hostile", call_timeout=2.0, **options, **bounds
        ),
        "hostile",
    )
)

piped = os.environ.get("PIPED_PLAN")
if piped:
    command = [str(Path(__file__).with_name("hostile_backend.py")), "--stdio", piped]
    app.add_source(
        PrefixedSource(
            RemoteSource.stdio(sys.executable, command, name="piped", call_timeout=2.0, **options),
            "piped",
        )
    )


@app.tool
def echo(text: str) -> str:
    """The gateway's own tool: ``text`` back."""
    return text
