"""Fixtures of the corpus tests: a web page on loopback for the fetch server."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

PAGE = (
    b"<html><head><title>Corpus</title></head><body><h1>Corpus page</h1>"
    b"<p>Served on loopback for the fetch server.</p></body></html>"
)


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def page() -> Iterator[str]:
    """The URL of a web page served on 127.0.0.1 for the fetch server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page"
    finally:
        server.shutdown()
        server.server_close()
