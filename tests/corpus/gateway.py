"""A gateway over corpus servers (run by tests/corpus/test_gateway.py): one endpoint, five origins.

``mcp-core run tests/corpus/gateway.py --transport http --port N`` with ``CORPUS_GATEWAY`` (a
JSON object) in the environment: ``stdio``, the prefix and command (and environment) of each
backend started over stdio; ``http``, the prefix and URL of each backend over streamable HTTP;
``health_interval`` and ``max_backoff`` for every RemoteSource.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp_core import App
from mcp_core.bridges import RemoteSource
from mcp_core.sources import PrefixedSource

_spec = json.loads(os.environ["CORPUS_GATEWAY"])
_timing = {"health_interval": _spec["health_interval"], "max_backoff": _spec["max_backoff"]}

app = App("corpus-gateway")


@app.tool
def hello(name: str) -> str:
    """The gateway's own tool."""
    return f"hello {name}, from the gateway"


for _prefix, _backend in _spec["stdio"].items():
    _command: list[str] = _backend["command"]
    _remote = RemoteSource.stdio(
        _command[0], _command[1:], env=_backend["env"], name=Path(_command[0]).name, **_timing
    )
    app.add_source(PrefixedSource(_remote, _prefix))
for _prefix, _url in _spec["http"].items():
    app.add_source(PrefixedSource(RemoteSource.http(_url, name=_prefix, **_timing), _prefix))
