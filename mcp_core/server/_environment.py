"""The environment variables that describe a deployment's worker (no SDK, no stores).

Apart from :mod:`mcp_core.server._deployment` so that ``mcp-core run`` can tell a worker's start
from a plain one without importing what a deployment needs (ADR 0115).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = ["ENVIRONMENT", "describes_deployment"]

ENVIRONMENT: Final = {
    "worker": "MCP_CORE_WORKER_ID",
    "redis": "MCP_CORE_DEPLOYMENT_REDIS",
    "secret": "MCP_CORE_DEPLOYMENT_SECRET",
    "secret_file": "MCP_CORE_DEPLOYMENT_SECRET_FILE",
    "namespace": "MCP_CORE_DEPLOYMENT_NAMESPACE",
}
"""The environment variables :meth:`Deployment.from_environment` reads (``mcp-core run`` flags set them)."""


def describes_deployment(environ: Mapping[str, str] | None = None) -> bool:
    """Whether any of :data:`ENVIRONMENT`'s variables is set (to anything but empty)."""
    env = os.environ if environ is None else environ
    return any(env.get(variable) for variable in ENVIRONMENT.values())
