"""A metadata-driven API: 10,000 operations from model metadata, one container service behind them.

    mcp-core run examples/metadata_api/bookstore_api.py --transport http --port 8000

The API Platform case (``docs/examples/metadata-api.md``):

- the operations (``book_get``, ``ledger_00042_update``...) are generated from the resources'
  metadata (``bookstore_metadata.py``): five per resource, ``API_RESOURCES`` resources
  (default 2,000, so 10,000 tools);
- every operation's handler is the container id ``"api.operations"``: a dependency-injector
  container builds that one service (with its repository) and mcp-core resolves it through the
  ``Container`` protocol (``DependencyInjectorContainer``); the service learns which operation was
  called from ``gateway.element``;
- a call does not build the catalogue: the operations' source answers one name by building that
  operation alone (``LazySource(..., lookup=...)``); listing builds them all, once;
- with ``API_CACHE_DIR`` set, the built catalogue is kept in SQLite across restarts
  (``CachedSource`` + ``SqliteStore``): a restart lists and calls without building an operation,
  and a change to the metadata (its fingerprint is part of the cache key) builds it afresh. The
  cache is authenticated with ``API_CACHE_SECRET``, else a key file made beside it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from bookstore_metadata import bookstore_metadata
from bookstore_services import OperationBuilder, OperationService, Repository
from dependency_injector import containers, providers

from mcp_core import App
from mcp_core.elements import ElementKind
from mcp_core.handlers.containers import DependencyInjectorContainer
from mcp_core.sources import CachedSource, ElementSource, LazySource
from mcp_core.stores import SqliteStore

RELEASE = "1"  # part of the cache key: bump it when OperationBuilder's code changes


class ApiServices(containers.DeclarativeContainer):
    """The API's services, as the framework's container declares them."""

    metadata = providers.Singleton(bookstore_metadata)
    repository = providers.Singleton(Repository)
    builder = providers.Singleton(OperationBuilder, index=metadata)
    operations = providers.Singleton(OperationService, index=metadata, repository=repository)


class Services(containers.DeclarativeContainer):
    """The application's container: the API's services mounted as ``api``."""

    api = providers.Container(ApiServices)


services = Services()
builder: OperationBuilder = services.api.builder()

app = App(
    "bookstore-api",
    version="1.0.0",
    instructions="A bookstore's REST API as MCP tools: <resource>_<list|get|create|update|delete>.",
    container=DependencyInjectorContainer(services),
    # Answered per name: a call builds its one operation; the 10,000 are built only for a list.
    preload=False,
)


def cache_secret(folder: Path) -> bytes:
    """API_CACHE_SECRET, else a key file readable by this user only, made on first use."""
    configured = os.environ.get("API_CACHE_SECRET")
    if configured:
        return configured.encode()
    key = folder / "cache.key"
    try:
        with key.open("xb") as created:  # exclusive: never overwrite another process's key
            key.chmod(0o600)
            created.write(secrets.token_bytes(32))
    except FileExistsError:
        pass
    return key.read_bytes()


def operations() -> ElementSource:
    """The operations' source; with API_CACHE_DIR, cached there under the metadata's fingerprint."""
    source = LazySource(builder.everything, lookup=builder.one, kinds=ElementKind.TOOL)
    cache_dir = os.environ.get("API_CACHE_DIR")
    if not cache_dir:
        return source
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    fingerprint = services.api.metadata().fingerprint()
    return CachedSource(
        source,
        SqliteStore(folder / "operations.db"),
        key=f"bookstore-operations-{RELEASE}-{fingerprint}",
        secret=cache_secret(folder),
    )


app.add_source(operations())


@app.tool
def api_stats() -> dict[str, int]:
    """How many operations the API declares, and how many were built since start-up."""
    return {
        "operations_declared": services.api.metadata().operation_count,
        "operations_built": builder.built,
    }
