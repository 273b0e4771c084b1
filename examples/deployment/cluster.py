"""Start a deployment with one command: a Redis server, N workers, and HAProxy in front of them.

    python examples/deployment/cluster.py [--workers 2] [--port 8000]

Everything listens on 127.0.0.1 (the balancer on ``--port``; Redis and the workers on free
ports), in a temporary folder holding the secret, the HAProxy configuration and each process's
log. Ctrl-C stops them all. Connect any MCP client to the URL it prints.

The :class:`Cluster` class is the same thing as a library: the end-to-end tests and
``scripts/deployment_figures.py`` start their deployments with it, and stop, freeze (SIGSTOP)
and restart its Redis mid-run.

Needs ``redis-server`` and ``haproxy`` on the PATH (``scripts/install --with-services``
installs both from Debian's packages).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

HERE: Final = Path(__file__).resolve().parent
SERVER: Final = HERE / "shared_catalogue.py"
MCP_CORE: Final = Path(sys.executable).with_name("mcp-core")
_CHECK_INTERVAL: Final = 1.0
"""Seconds between two health checks of a worker by the balancer."""
STARTUP: Final = 120.0
"""Seconds a process may take to come up on a loaded machine before the cluster gives up."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _jsonrpc_error(message: str) -> str:
    """A JSON-RPC error body HAProxy answers itself (the SDK's clients show its message)."""
    return '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"' + message + '"}}'


# What the balancer says when it, not a worker, answers: each says whether to retry.
_BALANCER_ERRORS: Final = {
    502: "The worker serving this request stopped before answering (it failed or was killed). "
    "The request may or may not have taken effect; retry it if that is safe.",
    503: "No worker is available right now; retry in a few seconds.",
    504: "The worker serving this request did not answer in time (frozen or overloaded). The "
    "request may or may not have taken effect; retry it if that is safe.",
}


def haproxy_config(bind: str, workers: Mapping[str, str], *, sticky: bool = True) -> str:
    """The complete HAProxy configuration in front of ``workers`` (id -> ``host:port``).

    This is the file ``docs/deployment.md`` shows (a test checks that it is) and the tests and
    the example run. ``bind`` is the balancer's ``address:port``; ``sticky=False`` leaves out
    the session rules (plain round robin, as a Kubernetes Service without affinity balances).

    - Health checks ask each worker's ``/readyz`` every second: a worker that is loading,
      misconfigured or draining (stopping: it closes its port at once) is out of rotation
      within two checks.
    - A request that cannot connect to its worker (stopped, restarting) is retried on another
      (``retry-on conn-failure``, ``option redispatch 1``): a rolling restart fails nothing. A
      request that reached a worker is never sent twice: if that worker dies before answering,
      the client gets a JSON-RPC error saying so and that it may retry (502), or, on a
      connection that carried earlier requests, HAProxy closes it without an answer, HTTP's
      own way of saying the request may be retried.
    - A handshake-era session's id names the worker that opened it (``w1.<random>``), and any
      worker serves it (its record is in Redis). Requests carrying it go to that worker while
      it is up, which saves the others resuming the session; while it is down they are
      balanced like everything else (``initialize``, 2026-07-28 requests), round robin, and
      the worker they reach resumes the session.
    - ``option http-server-close``: each request to a worker on a connection of its own
      (clients keep theirs alive), so a draining worker, closing its idle connections, never
      races a request sent on one.
    - ``option http-no-delay``: each SSE event (a notification, a progress message) leaves at
      once rather than waiting to fill a packet.
    - Timeouts: an idle server or client for 45 s ends the request (SSE streams carry a ping
      every 15 s, and an answer silent for 5 s becomes such a stream), so a frozen worker holds
      a request 45 s, not an hour; request headers within 10 s, as the workers bound them.
    - ``option forwardfor``: ``X-Forwarded-For``, which the workers believe from the balancer
      (``--trusted-proxy``), so one client's sessions count against its own limit.
    - Logging: one line on standard error for each request that did not end normally (a 5xx,
      an error of the balancer's own, a connection cut) or was sent to another worker after a
      failed connection, with its status, timings and termination state; successful requests
      are not logged.
    """
    lines = [
        "global",
        "    maxconn 4096",
        "    log stderr format raw local0",
        "",
        "defaults",
        "    mode http",
        "    log global",
        "    option httplog",
        "    option dontlog-normal",
        "    option http-server-close",
        "    option http-no-delay",
        "    option forwardfor",
        "    option redispatch 1",
        "    retries 3",
        "    retry-on conn-failure",
        "    timeout connect 2s",
        "    timeout client 45s",
        "    timeout server 45s",
        "    timeout http-request 10s",
        "    timeout http-keep-alive 30s",
        "    timeout queue 10s",
        *(
            f"    http-error status {status} content-type application/json "
            f"string '{_jsonrpc_error(message)}'"
            for status, message in _BALANCER_ERRORS.items()
        ),
        "",
        "frontend mcp",
        f"    bind {bind}",
        "    default_backend workers",
        "",
        "backend workers",
        "    balance roundrobin",
        "    option httpchk",
        f"    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host {bind}",
        "    http-check expect status 200",
        f"    default-server check inter {_CHECK_INTERVAL:g}s fall 2 rise 1",
    ]
    if sticky:
        lines += [
            f"    acl session_{worker} req.hdr(mcp-session-id) -m beg {worker}."
            for worker in workers
        ]
        lines += [f"    use-server {worker} if session_{worker}" for worker in workers]
    lines += [f"    server {worker} {address}" for worker, address in workers.items()]
    return "\n".join(lines) + "\n"


def _wait_for(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    """Return once ``url`` answers 200; raise if ``process`` exits or time runs out."""
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 -- our own loopback server
                if response.status == 200:  # noqa: PLR2004 -- HTTP OK
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not answer {url} within {STARTUP:g} s")


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {STARTUP:g} s")


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGCONT)  # a frozen process cannot act on SIGTERM
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class Cluster:
    """Redis, workers and HAProxy on 127.0.0.1, in ``root`` (see the module docstring).

    ``env`` is added to every worker's environment (e.g. ``CATALOGUE_FILE``); ``sticky=False``
    balances every request round robin (no session rules).
    """

    root: Path
    workers: int = 2
    env: Mapping[str, str] = field(default_factory=dict)
    server: Path = SERVER
    sticky: bool = True
    namespace: str = field(default_factory=lambda: f"deployment-{secrets.token_hex(4)}")
    redis_port: int = field(default_factory=free_port)
    port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The MCP endpoint behind the balancer."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def redis_url(self) -> str:
        """The Redis every worker shares."""
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def worker_url(self, worker: str) -> str:
        """One worker's own MCP endpoint (bypassing the balancer)."""
        return f"http://127.0.0.1:{self.ports[worker]}/mcp"

    def health_url(self, worker: str) -> str:
        """One worker's health endpoint."""
        return f"http://127.0.0.1:{self.ports[worker]}/healthz"

    def ready_url(self, worker: str) -> str:
        """One worker's readiness endpoint (what the balancer checks)."""
        return f"http://127.0.0.1:{self.ports[worker]}/readyz"

    def start(self) -> None:
        """Start Redis, the workers (once each is ready) and the balancer."""
        secret = self.root / "secret"
        if not secret.exists():
            secret.write_bytes(secrets.token_urlsafe(48).encode())
        self.start_redis()
        for number in range(1, self.workers + 1):
            self.start_worker(f"w{number}")
        self.start_balancer()

    # -- Redis ------------------------------------------------------------------------------

    def start_redis(self) -> None:
        """Start (or restart, on the same port) the Redis server."""
        # Persistent (an append-only file, synced on every write), as a deployment whose shared
        # registrations must outlive a Redis restart runs it.
        command = [
            *("redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port)),
            *("--save", "", "--appendonly", "yes", "--appendfsync", "always"),
            *("--dir", str(self.root), "--daemonize", "no"),
        ]
        process = self._spawn("redis", command)
        _wait_for_port(self.redis_port, process, "redis-server")

    def stop_redis(self) -> None:
        """Stop Redis (what it holds is on disk: :meth:`start_redis` brings it back)."""
        _stop(self.processes.pop("redis", None))

    def freeze_redis(self) -> None:
        """SIGSTOP Redis: connections stay open, nothing answers (a frozen or partitioned host)."""
        self.processes["redis"].send_signal(signal.SIGSTOP)

    def thaw_redis(self) -> None:
        """SIGCONT Redis: it answers again, with everything it held."""
        self.processes["redis"].send_signal(signal.SIGCONT)

    # -- workers and balancer ---------------------------------------------------------------

    def start_worker(self, worker: str, *, env: Mapping[str, str] | None = None) -> float:
        """Start one worker and return the seconds it took to be ready (``/healthz`` 200)."""
        port = self.ports.setdefault(worker, free_port())
        command = self.worker_command(worker, port)
        started = time.monotonic()
        process = self._spawn(worker, command, {**self.env, **(env or {})})
        _wait_for(self.health_url(worker), process, worker)
        return time.monotonic() - started

    def worker_command(self, worker: str, port: int) -> list[str]:
        """The command that runs worker ``worker`` on ``port``."""
        return [
            *(str(MCP_CORE), "run", str(self.server), "--transport", "http"),
            *("--port", str(port), "--worker-id", worker, "--redis", self.redis_url),
            *("--secret-file", str(self.root / "secret"), "--namespace", self.namespace),
            *("--log-level", "INFO"),
            # Stopped, a worker serves on, not ready, until HAProxy has seen it (two checks).
            *("--drain-delay", f"{2 * _CHECK_INTERVAL + 1:g}"),
            # HAProxy (on this host) says who each client is: per-client limits need it.
            *("--trusted-proxy", "127.0.0.1"),
        ]

    def stop_worker(self, worker: str) -> int | None:
        """Stop one worker (SIGTERM: it drains); its exit status (None if it was not running)."""
        process = self.processes.pop(worker, None)
        _stop(process)
        return None if process is None else process.returncode

    def wait_in_rotation(self, worker: str) -> None:
        """Return once the balancer has had time to see ``worker`` ready (two health checks)."""
        _wait_for(self.ready_url(worker), self.processes[worker], worker)
        time.sleep(2 * _CHECK_INTERVAL)

    def kill_worker(self, worker: str) -> None:
        """Kill one worker outright (SIGKILL: no drain, as a crash or the OOM killer would)."""
        process = self.processes.pop(worker)
        process.kill()
        process.wait()

    def start_balancer(self) -> None:
        """Write the HAProxy configuration for the workers started so far, and start HAProxy."""
        config = self.root / "haproxy.cfg"
        workers = {
            name: f"127.0.0.1:{port}" for name, port in self.ports.items() if name in self.processes
        }
        config.write_text(haproxy_config(f"127.0.0.1:{self.port}", workers, sticky=self.sticky))
        process = self._spawn("haproxy", ["haproxy", "-db", "-f", str(config)])
        _wait_for(f"http://127.0.0.1:{self.port}/readyz", process, "haproxy")

    def log(self, name: str) -> str:
        """What process ``name`` has written to its log so far."""
        path = self.root / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        """Stop every process (balancer first, Redis last)."""
        for name in sorted(self.processes, key=lambda n: (n == "redis", n != "haproxy")):
            _stop(self.processes.pop(name, None))

    def _spawn(
        self, name: str, command: list[str], env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log: IO[bytes] = (self.root / f"{name}.log").open("ab")
        with log:
            process = subprocess.Popen(  # noqa: S603 -- our own commands
                command,
                cwd=HERE,
                env={**os.environ, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes[name] = process
        return process


@contextmanager
def running(
    root: Path, workers: int = 2, *, env: Mapping[str, str] | None = None, port: int | None = None
) -> Iterator[Cluster]:
    """A started :class:`Cluster` in ``root``, stopped when the block ends."""
    cluster = Cluster(root, workers, env=dict(env or {}))
    if port is not None:
        cluster.port = port
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def missing_tools() -> list[str]:
    """The programs a cluster needs that are not on the PATH."""
    return [tool for tool in ("redis-server", "haproxy") if shutil.which(tool) is None]


def main() -> int:
    """Start a cluster and keep it up until Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=2, help="how many workers (default 2)")
    parser.add_argument("--port", type=int, default=8000, help="the balancer's port (default 8000)")
    args = parser.parse_args()
    missing = missing_tools()
    if missing:
        sys.stderr.write(
            f"cluster: needs {' and '.join(missing)} (scripts/install --with-services)\n"
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="mcp-core-cluster-") as folder:
        try:
            with running(Path(folder), args.workers, port=args.port) as cluster:
                sys.stderr.write(
                    f"cluster: {args.workers} workers behind HAProxy at {cluster.url}\n"
                    f"cluster: Redis at {cluster.redis_url}; logs in {folder}; Ctrl-C stops\n"
                )
                signal.pause() if hasattr(signal, "pause") else time.sleep(1e9)
        except KeyboardInterrupt:
            sys.stderr.write("cluster: stopped\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
