"""A helpdesk server: tools discovered in a package, a manual override, the scan cached in SQLite.

    mcp-core run examples/discovery/helpdesk_server.py                  # stdio
    mcp-core run examples/discovery/helpdesk_server.py --transport http # or HTTP

The PHP SDK's file-discovery case (``docs/examples/discovery.md``):

- every function marked with ``@tool``, ``@prompt``, ``@resource_template``... in the
  ``helpdesk_tools`` package is served (``DiscoverySource``); a module that cannot be imported
  (``reports.py`` needs a library that is not installed) is skipped with a diagnostic;
- what the server declares itself beats what is discovered, whatever the kind: its
  ``close_ticket`` tool, ``helpdesk://contact`` resource, ``helpdesk://tickets/{number}``
  template and ``polite_reply`` prompt replace the package's (``Priority.MANUAL`` over
  ``Priority.DISCOVERY``, each reported as shadowed; the package's completion of ticket numbers
  follows the server's template);
- what is discovered beats the product's built-in defaults (``helpdesk_defaults``, served at
  ``BUILT_IN``, below discovery): the package's ``helpdesk://hours`` resource,
  ``helpdesk://articles/{topic}`` template and ``escalation_note`` prompt replace them;
- the scan's result is cached in SQLite (``CachedSource`` + ``SqliteStore``), so a restart
  skips the scan: it imports no tool module until one of its tools is called, and its first
  capabilities come from the cache;
- the cache is authenticated with a secret (``HELPDESK_CACHE_SECRET``, else a key file made
  beside the cache), so an entry nobody with the secret wrote is refused and rescanned.

Configuration: ``HELPDESK_CACHE_DIR`` (default ``~/.cache/mcp-core-examples/helpdesk``).
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from helpdesk_defaults import BUILT_IN, DEFAULTS

from mcp_core import App, Message, ToolError
from mcp_core.registry import Priority
from mcp_core.sources import CachedSource, DiscoverySource, FunctionSource
from mcp_core.stores import SqliteStore

RELEASE = "1"  # part of the cache key: bump it when the tools' code changes
CACHE_DIR = Path(
    os.environ.get("HELPDESK_CACHE_DIR")
    or Path.home() / ".cache" / "mcp-core-examples" / "helpdesk"
)


def cache_secret(folder: Path) -> bytes:
    """HELPDESK_CACHE_SECRET, else a key file readable by this user only, made on first use."""
    configured = os.environ.get("HELPDESK_CACHE_SECRET")
    if configured:
        return configured.encode()
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / "cache.key"
    try:
        with key.open("xb") as created:  # exclusive: never overwrite another process's key
            key.chmod(0o600)
            created.write(secrets.token_bytes(32))
    except FileExistsError:
        pass
    return key.read_bytes()


app = App("helpdesk", version="1.0.0", instructions="Tickets and the knowledge base.")
app.add_source(
    CachedSource(
        DiscoverySource(["helpdesk_tools"]),
        SqliteStore(CACHE_DIR / "discovery.db"),
        key=f"helpdesk-tools-{RELEASE}",
        secret=cache_secret(CACHE_DIR),
    ),
    Priority.DISCOVERY,
)
app.add_source(FunctionSource(*DEFAULTS), BUILT_IN)


@app.tool
def close_ticket(number: int, resolution: str) -> str:
    """Close a ticket, saying how it was solved (replaces the package's close_ticket).

    Args:
        number: The ticket.
        resolution: How it was solved.
    """
    from helpdesk_tools.tickets import TICKETS  # noqa: PLC0415 -- imported only when called

    if number not in TICKETS:
        raise ToolError(f"there is no ticket {number}")
    TICKETS[number]["status"] = "closed"
    return f"ticket {number} closed: {resolution}"


@app.resource("helpdesk://contact", mime_type="text/plain")
def contact() -> str:
    """Who to call (replaces the package's contact)."""
    return "call the on-duty agent at extension 200"


@app.resource_template("helpdesk://tickets/{number}", mime_type="text/plain")
def ticket(number: int) -> str:
    """One ticket, as a line of text (replaces the package's JSON view; keeps its completion)."""
    from helpdesk_tools.tickets import TICKETS  # noqa: PLC0415 -- imported only when read

    found = TICKETS.get(number)
    if found is None:
        raise ToolError(f"there is no ticket {number}")
    return f"#{number} {found['title']} ({found['status']})"


@app.prompt
def polite_reply(issue: str) -> list[Message]:
    """Draft a polite reply about an issue, in the house style (replaces the package's).

    Args:
        issue: The customer's issue.
    """
    return [Message.user(f"Write a short, polite reply signed 'The Helpdesk' about: {issue}")]


@app.tool
def helpdesk_status() -> dict[str, list[str]]:
    """What the server skipped or replaced, and which tool modules it has imported so far."""
    return {
        "diagnostics": [str(d) for d in app.registry.diagnostics()],
        "imported": sorted(name for name in sys.modules if name.startswith("helpdesk_tools.")),
    }
