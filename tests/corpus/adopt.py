"""A corpus server's own object served by mcp-core in this process (run by the corpus tests).

``mcp-core run tests/corpus/adopt.py`` with ``CORPUS_ADOPT`` (a JSON object) in the environment:
``site``, the server's environment's site-packages (searched after this one's, so the server's
own dependencies are found while mcp-core's SDK serves it); ``object``, a ``module:attribute``
naming the server object or a factory; ``arguments`` for the factory (those named in ``paths`` as
paths); ``unwrap``, the attribute holding the server in what the factory returns, if any; and
``how``: ``"adopted"`` puts it in an App through its bridge source (MCPServerSource
or FastMCPSource), ``"as-is"`` hands the object itself to the CLI.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from mcp_core import App
from mcp_core.bridges import FastMCPSource, MCPServerSource

_spec = json.loads(os.environ["CORPUS_ADOPT"])
sys.path.append(_spec["site"])
_module, _, _attribute = _spec["object"].partition(":")
_found: Any = getattr(importlib.import_module(_module), _attribute)
if callable(_found) and not hasattr(_found, "run"):
    _arguments = dict(_spec.get("arguments", {}))
    for _name in _spec.get("paths", ()):
        _arguments[_name] = Path(_arguments[_name])
    _found = _found(**_arguments)
if "unwrap" in _spec:  # the server object inside what the factory returns
    _found = getattr(_found, _spec["unwrap"])

app: Any
if _spec["how"] == "as-is":
    app = _found
else:
    app = App("corpus-adopted")
    source = MCPServerSource(_found) if isinstance(_found, MCPServer) else FastMCPSource(_found)
    app.add_source(source)
