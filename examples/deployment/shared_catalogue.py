r"""One worker of a deployment: a catalogue every worker serves alike, changed through any of them.

    python examples/deployment/cluster.py            # Redis, two workers, HAProxy: one command

or one worker by hand (every worker the same, but its id)::

    mcp-core run examples/deployment/shared_catalogue.py --transport http --port 8001 \\
        --worker-id w1 --redis redis://127.0.0.1:6379/0 --secret-file secret

Run alone (no ``--redis``), it is an ordinary single-process server. In a deployment
(``docs/deployment.md``):

- the catalogue (``CATALOGUE_FILE``, ``catalogue.json`` here by default) is cached in the shared
  Redis, so a worker that joins serves it from there without reading the file;
  ``reload_catalogue`` on any worker reads the file again, and every worker follows;
- ``add_greeting`` registers a tool for every worker (a shared registration in Redis, naming
  only handlers on this server's allow-list); every worker's clients hear ``list_changed``;
- ``whoami`` says which worker answered, ``pause`` does too after a wait; ``countdown``
  streams a few log messages and closes its stream after the first, so the client resumes it
  (``Last-Event-ID``) through the load balancer, which sends it back to the session's worker.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Final

import anyio

from mcp_core import App, ClientGateway, ToolError
from mcp_core.elements import Element, ElementRef, HandlerRef, Tool
from mcp_core.errors import CacheStoreError
from mcp_core.registry import Priority
from mcp_core.server import Deployment, ServerGateway
from mcp_core.sources import CachedSource, CollectionFileSource, ElementSource

HERE: Final = Path(__file__).resolve().parent
CATALOGUE: Final = Path(os.environ.get("CATALOGUE_FILE") or HERE / "catalogue.json")
HANDLERS: Final = frozenset({"greetings:Template"})
"""What a shared registration may name: the allow-list of this server's handlers."""

deployment = Deployment.from_environment()  # None when run alone
app = App("catalogue", deployment=deployment)

catalogue: ElementSource = CollectionFileSource(CATALOGUE)
if deployment is not None:
    # Kept in the shared Redis: a joining worker reads the catalogue from there, not the file.
    catalogue = CachedSource(catalogue, deployment.store, secret=deployment.cache_secret)
    shared = deployment.shared_source(handlers=HANDLERS)
    app.add_source(shared, Priority.MANUAL)
app.add_source(catalogue)


@app.tool
async def add_greeting(name: str, template: str) -> str:
    """Register a greeting tool for every worker; ``template`` uses ``{name}``."""
    if deployment is None:
        return "not deployed: run this server as a worker (docs/deployment.md)"
    tool = Tool(
        name=name,
        description=f"Greets: {template}",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        meta={"template": template},
    )
    try:
        await shared.register(Element(definition=tool, handler=HandlerRef("greetings:Template")))
    except CacheStoreError as exc:
        raise ToolError(f"{name} is not registered: {exc}") from exc
    return f"{name} registered for every worker (through {whoami()})"


@app.tool
async def remove_greeting(name: str) -> str:
    """Remove a greeting tool registered with ``add_greeting``, from every worker."""
    if deployment is None:
        return "not deployed"
    removed = await shared.unregister(ElementRef.tool(name))
    return f"{name} removed" if removed else f"no greeting {name!r} was registered"


@app.tool
async def reload_catalogue() -> str:
    """Read the catalogue file again; every worker of the deployment follows."""
    if isinstance(catalogue, CachedSource):
        # What is cached is what the file said: read the file itself. While Redis is down the
        # file is read all the same; the other workers follow once it is back.
        with contextlib.suppress(CacheStoreError):
            await catalogue.clear()
    await app.registry.reload(catalogue)
    return f"catalogue reloaded through {whoami()}"


@app.tool
def whoami() -> str:
    """The id of the worker that answers."""
    return deployment.worker if deployment is not None else "a single process"


@app.tool
async def pause(seconds: float) -> str:
    """Wait ``seconds`` (at most 10), then say which worker answered."""
    await anyio.sleep(min(max(seconds, 0.0), 10.0))
    return whoami()


@app.tool
async def countdown(count: int, gateway: ClientGateway) -> str:
    """Log ``count`` messages a tenth of a second apart, then answer.

    After the first message the server closes the response stream, as a server polled over SSE
    does to free its connection: the client resumes it (``Last-Event-ID``) and gets the rest.
    """
    for left in range(count, 0, -1):
        await gateway.log("info", f"{left}...")
        if left == count and isinstance(gateway, ServerGateway):
            await gateway.close_sse_stream()
        await anyio.sleep(0.1)
    return f"lift-off on {whoami()}"
