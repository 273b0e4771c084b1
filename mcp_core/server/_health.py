"""The HTTP health endpoints: the registry's health as JSON, for load balancers and probes.

Three endpoints (each path configurable, None turns it off):

- ``GET /livez``: the process serves HTTP (200 while it answers at all; a frozen or wedged
  process answers nothing). For a liveness probe: failing it means restart the process;
- ``GET /readyz``: this worker should get requests: 200 when ``/healthz`` would say ``ready``
  (loaded, or loading on demand; not ``misconfigured``) and it is not draining (ADR 0095),
  else 503. For a readiness probe and the load balancer's health check;
- ``GET /healthz``: the whole report, under the policy below.

``GET /healthz`` answers the registry's
:class:`~mcp_core.registry.RegistryHealth` as JSON. The status code follows one policy:

- ``200`` once the catalogue is built and served, even when some source is ``degraded`` or
  ``down`` (the body says which): a broken source costs only its own elements, so a worker that
  serves everything else is worth routing to, and marking every worker unready because they
  share one broken backend would turn a partial outage into a total one;
- ``503`` while the first load started at startup (``preload``) is still running; a server that
  loads on demand (``preload=False``) answers ``200`` with ``"status": "unloaded"`` and
  ``"loaded": false`` until a request has built its catalogue: a probe never starts the load;
- with ``?strict``: ``200`` only when every source is ``ok``, for deployments that would rather
  route around a worker whose catalogue is incomplete;
- ``503`` once the worker is draining (``"draining": true``): it is stopping.

``/readyz`` answers the same document with the same status (``?strict`` too).

By default the endpoint is not behind the MCP endpoint's bearer authentication (probes carry no
token), and it shows source descriptions and error messages: put it behind that authentication
(``health_auth=True``; the probe then sends a token), disable it (``health_path=None``) or keep
it off the public network if those are sensitive. On a loopback host it refuses requests whose
``Host`` names another host, like the MCP endpoint (DNS-rebinding protection).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Literal

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp_core.registry import RegistryHealth

__all__ = [
    "DEFAULT_HEALTH_PATH",
    "DEFAULT_LIVE_PATH",
    "DEFAULT_READY_PATH",
    "guarded",
    "health_route",
    "transport_security_for",
]

DEFAULT_HEALTH_PATH: Final = "/healthz"
DEFAULT_READY_PATH: Final = "/readyz"
DEFAULT_LIVE_PATH: Final = "/livez"

_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def transport_security_for(
    host: str, given: TransportSecuritySettings | None
) -> TransportSecuritySettings | None:
    """The settings guarding both endpoints: ``given``, else the loopback default.

    On a loopback host that default is DNS-rebinding protection, as the SDK sets up for its MCP
    endpoint.
    """
    if given is not None or host not in _LOOPBACK:
        return given
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def health_route(
    path: str,
    snapshot: Callable[[], RegistryHealth],
    security: TransportSecuritySettings | None,
    *,
    auth: bool = False,
    probe: Literal["health", "ready", "live"] = "health",
) -> Route:
    """The ``GET``/``HEAD`` route at ``path``, answering ``snapshot()``; it never loads anything.

    ``probe``: ``health`` and ``ready`` answer the report (``ready``: 200 only when ready),
    ``live`` answers ``{"live": true}`` without taking a snapshot. ``auth``: answer only requests
    with a verified bearer token (the app's authentication middleware verifies it, as for the
    MCP endpoint); others get 401.
    """

    async def health(request: Request) -> Response:
        if probe == "live":
            return JSONResponse({"live": True}, headers={"Cache-Control": "no-store"})
        report = snapshot()
        strict = "strict" in request.query_params
        healthy = report.ready and (report.status == "ok" or not strict)
        return JSONResponse(
            report.to_json(),
            status_code=200 if healthy else 503,
            headers={"Cache-Control": "no-store"},
        )

    return Route(path, guarded(health, security, auth=auth), methods=["GET"])


def guarded(
    endpoint: Callable[[Request], Awaitable[Response]],
    security: TransportSecuritySettings | None,
    *,
    auth: bool,
) -> Callable[[Request], Awaitable[Response]]:
    """``endpoint`` behind what guards every operator endpoint (health, metrics, status).

    ``security``'s checks first (DNS-rebinding protection: a refused ``Host`` or ``Origin`` gets
    the SDK's answer); then, with ``auth``, only a request with a verified bearer token (the
    app's authentication middleware verifies it, as for the MCP endpoint) reaches ``endpoint``;
    others get 401.
    """
    guard = TransportSecurityMiddleware(security) if security is not None else None

    async def guarded_endpoint(request: Request) -> Response:
        if guard is not None:
            refused = await guard.validate_request(request, is_post=False)
            if refused is not None:
                return refused
        if auth and not isinstance(request.scope.get("user"), AuthenticatedUser):
            return JSONResponse(
                {"error": "invalid_token", "error_description": "Authentication required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return await endpoint(request)

    return guarded_endpoint
