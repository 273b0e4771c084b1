"""Deployment: settings that cannot be half right, keys every worker shares, checks at startup.

Workers are servers in this process sharing a MemoryStore and a MemoryChangeBus; the session
routing is tested over real HTTP (uvicorn on loopback).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest

from mcp_core import App
from mcp_core.errors import DeploymentError
from mcp_core.registry import Registry
from mcp_core.server import Deployment, McpServer
from mcp_core.server import _deployment as deployment_module
from mcp_core.server._deployment import ENVIRONMENT
from mcp_core.stores import MemoryChangeBus, MemoryStore
from tests.e2e._http import RawSession, serve

SECRET = b"s" * 32


def worker(
    name: str, store: MemoryStore, bus: MemoryChangeBus, secret: bytes = SECRET
) -> Deployment:
    """A worker of the in-process deployment over ``store`` and ``bus``."""
    return Deployment(worker=name, secret=secret, store=store, bus=bus)


class TestSettings:
    """From the environment or by hand: complete and valid, or a DeploymentError saying what."""

    def test_nothing_set_is_no_deployment(self) -> None:
        """No variable: a single process."""
        assert Deployment.from_environment({}) is None

    def test_half_set_names_what_is_missing(self) -> None:
        """Redis without the id and the secret: refused, naming both and the flags."""
        with pytest.raises(DeploymentError, match="MCP_CORE_WORKER_ID") as error:
            Deployment.from_environment({ENVIRONMENT["redis"]: "redis://127.0.0.1:1/0"})
        assert "MCP_CORE_DEPLOYMENT_SECRET_FILE" in str(error.value)
        assert "--worker-id" in str(error.value)

    def test_reads_the_secret_from_a_file(self, tmp_path: Path) -> None:
        """The secret file's content (without its newline) keys everything."""
        (tmp_path / "secret").write_bytes(SECRET + b"\n")
        env = {
            ENVIRONMENT["redis"]: "redis://127.0.0.1:1/0",
            ENVIRONMENT["worker"]: "w1",
            ENVIRONMENT["secret_file"]: str(tmp_path / "secret"),
        }
        made = Deployment.from_environment(env)
        by_hand = worker("w1", MemoryStore(), MemoryChangeBus())
        assert made is not None
        assert made.cursor_secret == by_hand.cursor_secret

    @pytest.mark.parametrize(
        ("name", "secret", "setting"),
        [("w1", b"short", "secret"), ("w 1", SECRET, "worker"), ("", SECRET, "worker")],
    )
    def test_refuses_a_short_secret_or_a_bad_id(
        self, name: str, secret: bytes, setting: str
    ) -> None:
        """A secret under 32 bytes, an id that cannot prefix a session id: refused."""
        with pytest.raises(DeploymentError) as error:
            worker(name, MemoryStore(), MemoryChangeBus(), secret)
        assert error.value.setting == setting

    def test_keys_are_shared_and_distinct(self) -> None:
        """Same secret, same keys on every worker; each purpose its own key; another secret, others."""
        one = worker("w1", MemoryStore(), MemoryChangeBus())
        two = worker("w2", MemoryStore(), MemoryChangeBus())
        other = worker("w1", MemoryStore(), MemoryChangeBus(), b"t" * 32)
        assert one.cursor_secret == two.cursor_secret != other.cursor_secret
        assert len({one.cursor_secret, one.cache_secret, SECRET}) == 3

    def test_a_server_takes_its_keys_from_the_deployment_alone(self) -> None:
        """deployment= with cursor_secret= is a contradiction: TypeError; so is a non-Registry."""
        deployment = worker("w1", MemoryStore(), MemoryChangeBus())
        with pytest.raises(TypeError, match="either deployment="):
            McpServer(Registry(), deployment=deployment, cursor_secret=b"x")
        with pytest.raises(TypeError, match="reference Registry"):
            McpServer(object(), deployment=deployment)  # type: ignore[arg-type]


class TestStartup:
    """A worker that does not fit its deployment refuses to start."""

    async def test_another_secret_is_refused(self) -> None:
        """A worker whose secret differs from the deployment's recorded one: DeploymentError."""
        store, bus = MemoryStore(), MemoryChangeBus()
        first = worker("w1", store, bus)
        stray = worker("w2", store, bus, b"t" * 32)
        async with first.serving(Registry()):
            with pytest.raises(DeploymentError, match="secret is not the one") as error:
                async with stray.serving(Registry()):
                    pass
        assert error.value.setting == "secret"

    async def test_a_live_worker_id_is_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Two live workers with one id: the second refuses to start (after waiting one lease)."""
        monkeypatch.setattr(deployment_module, "_REGISTRATION_TTL", 0.3)
        monkeypatch.setattr(deployment_module, "_HEARTBEAT", 0.1)
        store, bus = MemoryStore(), MemoryChangeBus()
        async with worker("w1", store, bus).serving(Registry()):
            with pytest.raises(DeploymentError, match="already used by a live worker"):
                async with worker("w1", store, bus).serving(Registry()):
                    pass

    async def test_a_restarted_worker_takes_its_id_back(self) -> None:
        """A worker that left (cleanly) frees its id at once for its successor."""
        store, bus = MemoryStore(), MemoryChangeBus()
        async with worker("w1", store, bus).serving(Registry()):
            pass
        with anyio.fail_after(2):  # a guard: no lease to wait out
            async with worker("w1", store, bus).serving(Registry()):
                pass


class TestRedisWriterWithoutTheSecret:
    """Attacker: a Redis writer without the secret, overwriting what workers record there.

    Before, one SET of the fingerprint key made every worker unready and a restarted worker exit;
    a junk registration under a worker's id kept that worker from ever starting again.
    """

    @pytest.fixture(autouse=True)
    def _short_leases(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(deployment_module, "_REGISTRATION_TTL", 0.3)
        monkeypatch.setattr(deployment_module, "_HEARTBEAT", 0.1)

    async def test_an_overwritten_fingerprint_keeps_workers_ready(self) -> None:
        """Live workers write the fingerprint back and never report themselves misconfigured."""
        store, bus = MemoryStore(), MemoryChangeBus()
        first = worker("w1", store, bus)
        async with first.serving(Registry()):
            recorded = await store.get("deployment:signed-fingerprint")
            for junk in (
                b"0" * 64,
                b"{}",
                b'{"record": {"at": 1}, "mac": "\\ud800\\u0080"}',
                b"x" * 10_000_000,
            ):
                await store.set("deployment:signed-fingerprint", junk)
                await anyio.sleep(0.35)
                assert all(b.state != "misconfigured" for b in first.health())
            rewritten = await store.get("deployment:signed-fingerprint")
        assert recorded is not None
        assert rewritten is not None
        assert rewritten not in (b"0" * 64, b"{}")
        assert first._verified_fingerprint(rewritten)

    async def test_a_restarted_worker_starts_over_a_forged_fingerprint(self) -> None:
        """No live worker keeps it: a worker restarted over junk warns, writes it back, starts."""
        store, bus = MemoryStore(), MemoryChangeBus()
        await store.set("deployment:signed-fingerprint", b"written without the secret")
        restarted = worker("w1", store, bus)
        with anyio.fail_after(5):  # a guard: the wait is one lease
            async with restarted.serving(Registry()):
                assert all(b.state == "ok" for b in restarted.health())
        assert restarted._verified_fingerprint(await store.get("deployment:signed-fingerprint"))

    async def test_a_junk_registration_does_not_hold_an_id(self) -> None:
        """A registration under w1's id not signed with the secret: w1 starts, and overwrites it."""
        store, bus = MemoryStore(), MemoryChangeBus()
        await store.set("deployment:worker:w1", b'{"token": "attacker", "pid": 1, "host": "x"}')
        with anyio.fail_after(5):
            async with worker("w1", store, bus).serving(Registry()):
                owner = await worker("w2", store, bus).owner_alive("w1")
        assert owner is True

    async def test_another_secret_is_still_refused_while_a_worker_keeps_its_own(self) -> None:
        """The deployment's live worker renews its fingerprint: a stray secret sees it change."""
        store, bus = MemoryStore(), MemoryChangeBus()
        async with worker("w1", store, bus).serving(Registry()):
            with anyio.fail_after(5), pytest.raises(DeploymentError, match="secret is not the one"):
                async with worker("w2", store, bus, b"t" * 32).serving(Registry()):
                    pass


class TestHealthShowsNoCredentials:
    """Attacker: anyone who can reach /healthz (unauthenticated, forwarded by the balancer)."""

    @pytest.mark.parametrize(
        "url",
        [
            "redis://127.0.0.1:{port}/0?password=hunter2",
            "redis://default:hunter2@127.0.0.1:{port}/0",
        ],
    )
    async def test_the_redis_url_is_redacted(self, url: str) -> None:
        """A worker whose Redis is down: /healthz names it, without the password."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]  # nothing listens there
        deployment = Deployment.redis(
            url.format(port=port), worker="w1", secret=SECRET, timeout=0.5, connect_timeout=0.5
        )
        app = App("guarded", deployment=deployment)

        @app.tool
        def ping() -> str:
            return "pong"

        with serve(app.asgi()) as mcp_url:
            async with httpx2.AsyncClient(timeout=30) as http:
                answer = await http.get(mcp_url.removesuffix("/mcp") + "/healthz")
        assert "127.0.0.1" in answer.text
        assert "hunter2" not in answer.text


@asynccontextmanager
async def two_workers() -> AsyncIterator[tuple[str, str, Deployment]]:
    """Workers w1 and w2 of one in-process deployment over HTTP: their URLs and w1's deployment."""
    store, bus = MemoryStore(), MemoryChangeBus()
    urls = []
    deployments = []
    async with AsyncExitStack() as stack:
        for name in ("w1", "w2"):
            deployment = worker(name, store, bus)
            app = App("routed", deployment=deployment)

            @app.tool
            def ping() -> str:
                return "pong"

            urls.append(stack.enter_context(serve(app.asgi())))
            deployments.append(deployment)
        yield urls[0], urls[1], deployments[0]


class TestSessionRouting:
    """Session ids name their worker; another worker refuses them loudly; a gone worker's: 404."""

    async def test_misrouted_is_refused_loudly(self, caplog: pytest.LogCaptureFixture) -> None:
        """w1's session at w2: 421 naming both, logged; an id no worker made: the SDK's 404."""
        async with two_workers() as (first, second, _), httpx2.AsyncClient(timeout=30) as http:
            session = RawSession(first, http)
            await session.open()
            assert session.session_id is not None
            tools = await session.request("tools/list", request_id=2)
            misrouted = await http.post(
                second,
                json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                headers=session.headers(),
            )
            unknown = await http.post(
                second,
                json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                headers={**session.headers(), "mcp-session-id": "not-made-by-a-worker"},
            )
        assert session.session_id.startswith("w1.")
        assert tools[-1].message is not None
        assert misrouted.status_code == 421
        assert misrouted.json()["error"]["data"] == {"worker": "w2", "sessionWorker": "w1"}
        assert "misrouted request" in caplog.text
        assert unknown.status_code == 404

    async def test_misrouted_floods_cost_one_line_and_few_lookups(
        self, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Attacker (an anonymous client) sends 300 requests naming other workers' sessions.

        Before: one ERROR line and one store lookup each. Now: one line per interval for the
        misrouted ones, one for the gone ones, and store lookups bounded per owner and second;
        every request is still answered (421 for a live worker, 404 for a gone one).
        """
        lookups: list[str] = []
        owner_alive = Deployment.owner_alive

        async def counted(self: Deployment, worker: str) -> bool | None:
            lookups.append(worker)
            return await owner_alive(self, worker)

        monkeypatch.setattr(Deployment, "owner_alive", counted)
        async with two_workers() as (first, second, _), httpx2.AsyncClient(timeout=30) as http:
            session = RawSession(first, http)
            await session.open()
            assert session.session_id is not None
            caplog.clear()
            statuses = []
            for n in range(300):
                sid = session.session_id if n % 2 else f"gone{n % 7}.0123456789abcdef"
                response = await http.post(
                    second,
                    json={"jsonrpc": "2.0", "id": n, "method": "tools/list"},
                    headers={**session.headers(), "mcp-session-id": sid},
                )
                statuses.append(response.status_code)
        assert set(statuses[1::2]) == {421}
        assert set(statuses[0::2]) == {404}
        misrouted = [r for r in caplog.records if "misrouted request" in r.getMessage()]
        gone = [r for r in caplog.records if "which is gone" in r.getMessage()]
        assert len(misrouted) == 1
        assert len(gone) <= 1
        assert len(lookups) < 30  # 8 owners, each asked at most once per 5 s

    async def test_a_gone_workers_session_is_not_found(self) -> None:
        """A session of a worker that is not registered (gone) answers 404: start a new one."""
        async with two_workers() as (_, second, _), httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(
                second,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2025-11-25",
                    "mcp-session-id": "w9.0123456789abcdef",
                },
            )
        assert response.status_code == 404
