"""What an operator reads over HTTP besides the health endpoint: ``/metrics`` and ``/status``.

Both are opt-in (``streamable_http_app(metrics_path=..., status_path=...)``) and guarded like the
health endpoint: DNS-rebinding protection on a loopback host, and, when asked, the MCP endpoint's
bearer authentication. The status page follows the endpoint's authentication by default; the
metrics do not (a scraper carries no token) unless ``operator_auth=True``.

The status page is plain server-rendered HTML with a few lines of script (a filter on the
catalogue), no build step: the registry's status and each source's state, last good load,
staleness and last error; the shared backends of a deployment and its workers (each one's state,
address and when it was last seen, from the shared store: see ``Deployment.workers``); the open
sessions;
the diagnostics; and the catalogue per kind, searchable. It shows the catalogue *as the caller
sees it*: elements hidden from the caller's session (its bearer token's principal and scopes, the
server's session hook applied) are neither listed nor named in a diagnostic. Nothing is loaded
to render it: before the first load the catalogue says so.
"""

from __future__ import annotations

import html
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from mcp_core.elements import Definition, ElementKind, ElementRef
from mcp_core.errors import CacheStoreError
from mcp_core.registry import DeferredRegistry, ElementCatalog, RegistryHealth
from mcp_core.server._deployed import WorkerListing
from mcp_core.server._gateway import SessionHook
from mcp_core.server._health import guarded
from mcp_core.server._metrics import CONTENT_TYPE
from mcp_core.sources import DiagnosticsReport
from mcp_core.visibility import ALWAYS, SessionInfo

if TYPE_CHECKING:
    from mcp_core.server._deployed import Deployed
    from mcp_core.server._metrics import ServerMetrics
    from mcp_core.visibility import ElementVisibility


class _Named(Protocol):
    name: str


class _Shown(ElementCatalog, DeferredRegistry, Protocol):
    """What the page reads of a registry: its catalogue, once loaded (and its diagnostics, if any)."""


class Operated(Protocol):
    """What the operator's pages read of a server (``McpServer`` is one)."""

    @property
    def registry(self) -> _Shown:
        """The registry served."""
        ...

    @property
    def visibility(self) -> ElementVisibility:
        """The visibility rule."""
        ...

    @property
    def lowlevel(self) -> _Named:
        """The SDK server, for its name."""
        ...

    def health(self) -> RegistryHealth:
        """The registry's health."""
        ...

    def metrics(self) -> ServerMetrics:
        """The server's metrics."""
        ...

    def open_sessions(self) -> int:
        """How many sessions are open."""
        ...

    @property
    def deployment(self) -> Deployed | None:
        """The deployment the server is a worker of (None: it serves alone)."""
        ...


__all__ = ["operator_routes", "render_status"]

_NO_STORE: Final = {"Cache-Control": "no-store"}
_SECONDS_SHOWN: Final = 120  # an age under this is shown in seconds
_MINUTES_SHOWN: Final = 7200  # then in minutes, then in hours


def operator_routes(
    server: Operated,
    *,
    metrics_path: str | None,
    status_path: str | None,
    security: TransportSecuritySettings | None,
    authenticated: bool,
    auth: bool | None,
    hook: SessionHook | None,
) -> list[Route]:
    """The ``/metrics`` and ``/status`` routes asked for (none by default).

    Raises:
        ValueError: ``auth=True`` without an authenticated endpoint, or two routes at one path.
    """
    if auth and not authenticated:
        raise ValueError(
            "operator_auth=True puts /metrics and /status behind bearer authentication; give "
            "token_verifier= (and auth=) too"
        )
    if metrics_path is not None and metrics_path == status_path:
        raise ValueError(f"metrics_path and status_path are both {metrics_path!r}")
    routes = []
    if metrics_path is not None:
        metrics = server.metrics()

        async def exposition(_request: Request) -> Response:
            return Response(metrics.exposition(), media_type=CONTENT_TYPE, headers=_NO_STORE)

        routes.append(
            Route(metrics_path, guarded(exposition, security, auth=bool(auth)), methods=["GET"])
        )
    if status_path is not None:

        async def status(request: Request) -> Response:
            session = _session_of(request, hook)
            page = await render_status(server, session, query=request.query_params.get("q", ""))
            return HTMLResponse(page, headers=_NO_STORE)

        behind = authenticated if auth is None else auth
        routes.append(Route(status_path, guarded(status, security, auth=behind), methods=["GET"]))
    return routes


def _session_of(request: Request, hook: SessionHook | None) -> SessionInfo:
    """Who reads the page: what their bearer token says, as a session would see it."""
    user = request.scope.get("user")
    token = user.access_token if isinstance(user, AuthenticatedUser) else None
    info = SessionInfo(
        principal=(token.subject or token.client_id) if token is not None else None,
        client_id=token.client_id if token is not None else None,
        scopes=frozenset(token.scopes) if token is not None else frozenset(),
        claims=dict(token.claims or {}) if token is not None else {},
        attributes={"status_page": True},
    )
    return hook(info) if hook is not None else info


_KINDS: Final = (
    (ElementKind.TOOL, "Tools"),
    (ElementKind.RESOURCE, "Resources"),
    (ElementKind.RESOURCE_TEMPLATE, "Resource templates"),
    (ElementKind.PROMPT, "Prompts"),
)
"""The catalogue's sections, in the order of ``_catalog``'s listings."""


async def render_status(server: Operated, session: SessionInfo, *, query: str = "") -> str:
    """The status page of ``server`` as ``session`` may see it (``query`` filters the catalogue)."""
    report = server.health()
    now = time.time()
    registry = server.registry
    visible = await _visible_refs(server, session)
    parts = [
        _head(server.lowlevel.name, report),
        _sources(report, now),
        _backends(report, now),
        await _workers(server.deployment, now),
        _sessions(server),
        await _diagnostics(registry, visible),
        await _catalog(registry, visible, query),
        _SCRIPT,
        "</main></body></html>",
    ]
    return "\n".join(parts)


_Visible = Callable[[ElementRef], Awaitable[bool]]


async def _visible_refs(server: Operated, session: SessionInfo) -> _Visible:
    rule = server.visibility

    async def visible(ref: ElementRef) -> bool:
        if rule is ALWAYS:
            return True
        try:
            return await rule.is_visible(ref, session)
        except Exception:  # noqa: BLE001 -- a failing rule hides, as it does for lists
            return False

    return visible


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = max(0.0, seconds)
    if seconds < _SECONDS_SHOWN:
        return f"{seconds:.0f} s"
    if seconds < _MINUTES_SHOWN:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _when(at: float | None, now: float) -> str:
    if at is None:
        return "never"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
    return f'<time datetime="{_e(stamp)}Z">{_e(stamp)} UTC</time> ({_age(now - at)} ago)'


def _head(name: str, report: RegistryHealth) -> str:
    status = report.status
    worker = f" · worker <code>{_e(report.worker)}</code>" if report.worker else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(name)} · status</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }}
main {{ max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem; }}
h1 {{ font-size: 1.4rem; margin: .5rem 0; }} h2 {{ font-size: 1.1rem; margin-top: 1.6rem; }}
table {{ border-collapse: collapse; width: 100%; background: #fff; }}
th, td {{ text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e3e3;
  vertical-align: top; }}
th {{ background: #f0f0f0; font-weight: 600; }}
.state {{ display: inline-block; padding: 0 .5rem; border-radius: .6rem; font-weight: 600; }}
.ok, .serving {{ background: #d9f2dd; color: #135a1e; }} .left {{ background: #ececec; }}
.degraded, .loading, .unloaded, .pending {{
  background: #fff1c2; color: #6b4e00; }}
.down, .misconfigured, .failed, .unavailable, .gone, .unverified {{
  background: #fbd5d5; color: #7c1010; }}
.stale, .skipped, .shadowed, .draining {{ background: #fff1c2; color: #6b4e00; }}
.muted {{ color: #666; }} code {{ font-size: 13px; }}
input[type=search] {{ padding: .3rem .5rem; width: 20rem; }}
</style></head>
<body><main>
<h1>{_e(name)}</h1>
<p>Status <span class="state {_e(status)}" id="registry-status">{_e(status)}</span>{worker}
<span class="muted">· catalogue {"loaded" if report.loaded else "not loaded yet"}</span></p>"""


def _sources(report: RegistryHealth, now: float) -> str:
    rows = []
    for source in report.sources:
        stale = _age(now - source.stale_since) if source.stale_since is not None else "fresh"
        retry = _when(source.next_retry, now) if source.next_retry is not None else "—"
        error = _e(source.last_error) if source.last_error else '<span class="muted">none</span>'
        rows.append(
            f'<tr data-source="{_e(source.source)}" data-state="{_e(source.state)}">'
            f"<td><code>{_e(source.source)}</code></td>"
            f'<td><span class="state {_e(source.state)}">{_e(source.state)}</span></td>'
            f"<td>{_e(source.elements if source.elements is not None else '—')}</td>"
            f"<td>{_when(source.last_success, now)}</td>"
            f"<td>{_e(stale)}</td><td>{source.failures}</td>"
            f"<td>{error}</td><td>{retry}</td></tr>"
        )
    body = "\n".join(rows) or '<tr><td colspan="8" class="muted">no sources</td></tr>'
    return f"""<h2>Sources</h2>
<table id="sources"><thead><tr><th>source</th><th>state</th><th>elements</th>
<th>last good load</th><th>stale for</th><th>failures</th><th>last error</th><th>next retry</th>
</tr></thead><tbody>
{body}
</tbody></table>"""


def _backends(report: RegistryHealth, now: float) -> str:
    if not report.backends:
        return ""
    rows = "\n".join(
        f"<tr><td><code>{_e(b.backend)}</code></td>"
        f'<td><span class="state {_e(b.state)}">{_e(b.state)}</span></td>'
        f"<td>{_when(b.since, now) if b.since is not None else '—'}</td>"
        f"<td>{_e(b.last_error) if b.last_error else '—'}</td><td>{_e(b.detail or '')}</td></tr>"
        for b in report.backends
    )
    return f"""<h2>Deployment: shared backends and the bus</h2>
<table id="backends"><thead><tr><th>backend</th><th>state</th><th>since</th><th>last error</th>
<th>detail</th></tr></thead><tbody>
{rows}
</tbody></table>"""


async def _workers(deployment: Deployed | None, now: float) -> str:
    if not isinstance(deployment, WorkerListing):
        return ""
    try:
        workers = await deployment.workers()
    except CacheStoreError as exc:
        return (
            '<h2>Deployment: workers</h2><p id="workers-unknown">The shared store does not answer, '
            f"so the workers are unknown: {_e(exc)}</p>"
        )
    rows = "\n".join(
        f'<tr data-worker="{_e(w.worker)}" data-state="{_e(w.state)}">'
        f"<td><code>{_e(w.worker)}</code>{' (this worker)' if w.this else ''}</td>"
        f'<td><span class="state {_e(w.state)}">{_e(w.state)}</span></td>'
        f"<td>{_when(w.last_seen, now) if w.last_seen is not None else '—'}</td>"
        f"<td>{_e(w.address or '—')}</td>"
        f"<td>{_e(w.host or '—')}{f' (pid {w.pid})' if w.pid is not None else ''}</td></tr>"
        for w in workers
    )
    body = rows or '<tr><td colspan="5" class="muted">none registered</td></tr>'
    return f"""<h2>Deployment: workers</h2>
<table id="workers"><thead><tr><th>worker</th><th>state</th><th>last seen</th><th>address</th>
<th>host</th></tr></thead><tbody>
{body}
</tbody></table>"""


def _sessions(server: Operated) -> str:
    count = server.open_sessions()
    return f'<p>Open handshake-era sessions: <strong id="sessions">{count}</strong></p>'


async def _diagnostics(registry: _Shown, visible: _Visible) -> str:
    rows = []
    diagnostics = registry.diagnostics() if isinstance(registry, DiagnosticsReport) else ()
    for d in diagnostics:
        ref = d.ref
        if ref is not None and not await visible(ref):
            continue  # a hidden element's name is not shown to whom it is hidden from
        rows.append(
            f'<tr><td><span class="state {_e(d.kind)}">{_e(d.kind)}</span></td>'
            f"<td><code>{_e(d.source)}</code></td><td>{_e(ref if ref is not None else '')}</td>"
            f"<td>{_e(d.message)}</td></tr>"
        )
    body = "\n".join(rows) or '<tr><td colspan="4" class="muted">none</td></tr>'
    return f"""<h2>Diagnostics</h2>
<table id="diagnostics"><thead><tr><th>kind</th><th>source</th><th>element</th><th>message</th>
</tr></thead><tbody>
{body}
</tbody></table>"""


async def _catalog(registry: _Shown, visible: _Visible, query: str) -> str:
    if not registry.loaded:
        return '<h2>Catalogue</h2><p class="muted">Not loaded yet: the first request builds it.</p>'
    sections = [
        f"""<h2>Catalogue</h2>
<p><input type="search" id="filter" placeholder="filter by name or description"
 value="{_e(query)}" aria-label="filter the catalogue"></p>"""
    ]
    needle = query.casefold()
    listings: tuple[Callable[[], Awaitable[Sequence[Definition]]], ...] = (
        registry.tools,
        registry.resources,
        registry.resource_templates,
        registry.prompts,
    )
    for (kind, title), listing in zip(_KINDS, listings, strict=True):
        definitions = await listing()
        rows = []
        for definition in definitions:
            ref = definition.ref
            if not await visible(ref):
                continue
            key = ref.key
            description = definition.description or ""
            if needle and needle not in key.casefold() and needle not in description.casefold():
                continue
            rows.append(
                f'<tr class="element"><td><code>{_e(key)}</code></td>'
                f"<td>{_e(description[:300])}</td></tr>"
            )
        body = "\n".join(rows) or '<tr><td colspan="2" class="muted">none</td></tr>'
        sections.append(
            f"""<h3>{_e(title)} ({len(rows)})</h3>
<table class="catalog" data-kind="{_e(kind.name or "")}"><tbody>
{body}
</tbody></table>"""
        )
    return "\n".join(sections)


_SCRIPT: Final = """<script>
// Filter the catalogue as you type (the server filters too, with ?q=, for a page without script).
const filter = document.getElementById("filter");
if (filter) {
  filter.addEventListener("input", () => {
    const needle = filter.value.toLowerCase();
    for (const row of document.querySelectorAll("tr.element")) {
      row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
    }
  });
}
</script>"""
