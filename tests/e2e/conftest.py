"""Fixtures: examples/everything.py served in memory, as a stdio subprocess and over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import IO, Any

import pytest

from mcp_core.cli._target import load_target
from tests.clients import MCP_CORE, ROOT, stdio

EVERYTHING = ROOT / "examples" / "everything.py"
PAGE_SIZE = 4  # as examples/everything.py is served here: every list of more than 4 takes pages


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Return once ``port`` accepts connections; fail if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"the server did not listen on {port} within {timeout} s")


def start(
    command: Sequence[str],
    port: int,
    env: Mapping[str, str] | None = None,
    stderr: IO[Any] | int = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start ``command``, a server that listens on ``port``, and return once it listens."""
    process = subprocess.Popen(  # noqa: S603 -- our own console script or example
        list(command),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
        wait_for_port(port, process, timeout=120)  # a guard: a loaded machine starts slowly
    except BaseException:
        stop(process)
        raise
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process and reap it (SIGKILL if it lingers).

    A process a test froze (SIGSTOP) is resumed after the SIGTERM, so that it acts on it.
    """
    process.terminate()
    with suppress(ProcessLookupError):
        process.send_signal(signal.SIGCONT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serving(
    command: Sequence[str], port: int, env: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Run ``command``, a server that listens on ``port``, from once it listens until the block ends."""
    process = start(command, port, env)
    try:
        yield
    finally:
        stop(process)


def run_http(
    target: Path,
    *options: str,
    env: Mapping[str, str] | None = None,
    stderr: IO[Any] | int = subprocess.DEVNULL,
) -> tuple[str, subprocess.Popen[bytes]]:
    """``mcp-core run TARGET --transport http`` on a free loopback port: its base URL and process."""
    port = free_port()
    command = [str(MCP_CORE), "run", str(target), "--transport", "http", "--port", str(port)]
    return f"http://127.0.0.1:{port}", start([*command, *options], port, env, stderr)


@contextmanager
def serving_http(
    target: Path, *options: str, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``mcp-core run TARGET --transport http`` on a free loopback port; yields its MCP URL."""
    url, process = run_http(target, *options, env=env)
    try:
        yield f"{url}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """``mcp-core run examples/everything.py --transport http`` on a free loopback port."""
    with serving_http(EVERYTHING, "--page-size", str(PAGE_SIZE)) as url:
        yield url


def everything(transport: str, request: pytest.FixtureRequest) -> Any:
    """Where a client reaches examples/everything.py over ``transport``: memory, stdio or http.

    In memory it is this process's server; over stdio, ``mcp-core run``; over HTTP, the module's
    :func:`http_url` server. Each serves pages of ``PAGE_SIZE``.
    """
    if transport == "memory":
        server = load_target(str(EVERYTHING)).server
        server.handlers.page_size = PAGE_SIZE
        return server.lowlevel
    if transport == "stdio":
        return stdio(EVERYTHING, "--page-size", str(PAGE_SIZE))
    return request.getfixturevalue("http_url")


@pytest.fixture
def serve_http() -> Callable[..., AbstractContextManager[str]]:
    """:func:`serving_http`, for tests that start their own server (fresh state per test)."""
    return serving_http
