"""The status page, rendered by a real headless Chromium (Debian's ``chromium``).

A gateway serves a local tool, a tool hidden from everyone and the tools of a backend it proxies
(``RemoteSource`` over HTTP, the backend a subprocess). The page shows the backend's source as
``ok``; once the backend is stopped, as ``degraded`` (serving its last good catalogue, stale).
Chromium loads the page, its DOM is checked (a hidden element is named nowhere) and a screenshot
is kept: ``build/artefacts/status-page.png`` (``$MCP_CORE_ARTEFACTS`` to put it elsewhere).
The page's authentication is checked with a plain HTTP client (Chromium sends no bearer token).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core.app import App
from mcp_core.bridges import RemoteSource
from mcp_core.registry import Backoff
from mcp_core.visibility import predicate, scoped_by_tag
from tests.clients import ROOT
from tests.e2e._http import serve
from tests.e2e.conftest import free_port, run_http, stop
from tests.e2e.test_http_auth import StaticTokens

BACKEND = ROOT / "tests" / "e2e" / "servers" / "operated_backend.py"
ARTEFACTS = Path(os.environ.get("MCP_CORE_ARTEFACTS", ROOT / "build" / "artefacts"))
REMOTE = 'data-source="RemoteSource(&#x27;backend&#x27;)"'
"""The backend's row on the page (the source's label, HTML-escaped)."""
WAIT = 90.0  # a bound for a loaded machine, never a measured time


def chromium() -> str:
    """The Chromium binary; skipped outside CI when it is missing, a failure in CI."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (bash scripts/install --with-services installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def headless(binary: str, url: str, *flags: str) -> str:
    """Run headless Chromium on ``url`` with ``flags``; its stdout."""
    done = subprocess.run(  # noqa: S603 -- the system's chromium, on a loopback URL
        [
            binary,
            "--headless",
            "--no-sandbox",  # tests may run as root (CI containers)
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            *flags,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def gateway(backend: str) -> App:
    """A local tool, one hidden from everyone, and the backend's tools; retried quickly."""
    app = App("gateway", retry=Backoff(initial=0.2, maximum=0.5))

    @app.tool
    def local_echo(text: str) -> str:
        """Echo ``text`` from the gateway."""
        return text

    @app.tool
    def hidden_tool() -> str:
        """Hidden from every session, and from the status page."""
        return "hidden"

    app.add_source(RemoteSource.http(backend, name="backend", health_interval=0.2, max_backoff=0.5))
    app.visibility = predicate(lambda ref, _session: ref.key != "hidden_tool")
    return app


def until(check: str, fetch: httpx2.Client, url: str) -> str:
    """The page once ``check`` is in it (fetched every 0.2 s, for at most WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while True:
        page = fetch.get(url).text
        if check in page:
            return page
        assert time.monotonic() < deadline, f"{check!r} never appeared; last page:\n{page}"
        time.sleep(0.2)


@pytest.fixture
def backend() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The backend over HTTP: its MCP URL and its process (which the test may stop)."""
    url, process = run_http(BACKEND)
    try:
        yield f"{url}/mcp", process
    finally:
        stop(process)


def test_a_stale_source_shows_in_chromium(
    backend: tuple[str, subprocess.Popen[bytes]],
) -> None:
    """The backend's source is ok, then degraded once it stops; hidden names never show."""
    binary = chromium()
    backend_url, process = backend
    app = gateway(backend_url)
    with serve(app.streamable_http_app(status_path="/status", preload=True)) as url:
        status = url.replace("/mcp", "/status")
        with httpx2.Client() as fetch:
            page = until(f'{REMOTE} data-state="ok"', fetch, status)
            assert "remote_echo" in page
            stop(process)
            until(f'{REMOTE} data-state="degraded"', fetch, status)
        dom = headless(binary, status, "--dump-dom")
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTEFACTS / "status-page.png"
        shot.unlink(missing_ok=True)
        headless(binary, status, f"--screenshot={shot}", "--window-size=1200,1000")
    # (the browser serialises the attribute with its quote unescaped)
    assert 'data-source="RemoteSource(\'backend\')" data-state="degraded"' in dom
    assert "local_echo" in dom
    assert "remote_echo" in dom  # the last good catalogue, still served
    assert "hidden_tool" not in dom
    assert shot.stat().st_size > 10_000  # a rendered page, not an empty one
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_is_behind_the_endpoints_authentication() -> None:
    """401 without a token; with one, the catalogue as that token's session may see it."""
    app = App("guarded")

    @app.tool
    def whoami() -> str:
        """Say who is calling."""
        return "someone"

    @app.tool(tags=("scope:admin",))
    def shutdown() -> str:
        """An admin-only tool."""
        return "shutting down"

    app.visibility = scoped_by_tag(app.registry)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        validate_token_resource=False,
    )
    served = app.streamable_http_app(
        token_verifier=StaticTokens(), auth=auth, status_path="/status", preload=True
    )
    with serve(served, port), httpx2.Client() as fetch:
        status = f"{base}/status"
        assert fetch.get(status).status_code == 401
        bob = until("whoami", fetch_as(fetch, "bob-token"), status)
        alice = until("whoami", fetch_as(fetch, "alice-token"), status)
    assert "shutdown" not in bob
    assert "shutdown" in alice


def fetch_as(fetch: httpx2.Client, token: str) -> httpx2.Client:
    """``fetch`` sending ``token`` as its bearer token from now on."""
    fetch.headers["Authorization"] = f"Bearer {token}"
    return fetch
