"""An mcp-core server proxying one corpus server through RemoteSource (run by the corpus tests).

``mcp-core run tests/corpus/proxy.py`` with ``CORPUS_SERVER`` (a JSON object: the server's
``command`` list, its ``env`` and the RemoteSource ``mode``) in the environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp_core import App
from mcp_core.bridges import RemoteSource

_spec = json.loads(os.environ["CORPUS_SERVER"])
_command: list[str] = _spec["command"]

app = App("corpus-proxy")
app.add_source(
    RemoteSource.stdio(
        _command[0],
        _command[1:],
        env=_spec["env"],
        name=Path(_command[0]).name,
        mode=_spec["mode"],
    )
)
