"""An existing FastAPI application with its own login, and an MCP endpoint mounted inside it.

    python examples/mounted/notes_webapp.py --port 8000

The "add MCP to my web app" case (``docs/examples/mounted.md``):

- the application has users, a login form and cookie sessions (Starlette's ``SessionMiddleware``
  and ``AuthenticationMiddleware``), and its own JSON API (``/notes``);
- the MCP endpoint is mounted at ``/mcp`` in the same application, behind the same middleware:
  ``HostAuthentication`` hands the signed-in user to the MCP server as its principal, with the
  user's roles as scopes, so ``scoped_by_tag`` shows ``all_notes`` to administrators only and
  each user's tools see their own notes; a visitor who is not signed in gets 401;
- an MCP session belongs to the user who opened it, and the endpoint accepts only the hosts and
  origins the application is served at (``NOTES_HOSTS``), so neither a leaked session id, a
  cross-site request nor DNS rebinding borrows a signed-in browser's rights;
- sign-ins live on the server: the cookie carries only a random sign-in id, and signing out
  forgets it, so a cookie captured before ``POST /logout`` opens nothing after it (a signed
  cookie that held the user name itself would stay valid until it expired).

Demo users: ``alice`` / ``wonderland`` (administrator) and ``bob`` / ``builder``. Sign in with
``POST /login`` (a JSON body ``{"username", "password"}``) and send the session cookie to ``/mcp``.
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import os
import secrets
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    BaseUser,
    SimpleUser,
    requires,
)
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import HTTPConnection

from mcp_core import App, ClientGateway
from mcp_core.server import HostAuthentication
from mcp_core.visibility import scoped_by_tag


@dataclass(frozen=True, slots=True)
class Account:
    """One of the application's users."""

    password: str
    roles: frozenset[str]


# The demo accounts (documented above); a real application has its own user store.
ACCOUNTS: Final = {
    "alice": Account(password="wonderland", roles=frozenset({"admin"})),  # noqa: S106 -- demo account
    "bob": Account(password="builder", roles=frozenset()),  # noqa: S106 -- demo account
}
NOTES: dict[str, list[str]] = {"alice": ["buy milk"], "bob": ["fix the fence"]}
# Who each live sign-in id belongs to; signing out removes it (a real application keeps these in
# its session store, e.g. a database table or Redis, shared by its processes).
SIGN_INS: dict[str, str] = {}

# The host names the application answers to; the MCP endpoint refuses any other Host or Origin.
HOSTS: Final = os.environ.get("NOTES_HOSTS", "127.0.0.1:*,localhost:*").split(",")


class SessionUsers(AuthenticationBackend):
    """The application's authentication: the live sign-in named in the signed session cookie."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        """The signed-in user and their roles (as scopes), or None for a visitor."""
        sign_in = conn.session.get("sign_in")
        username = SIGN_INS.get(sign_in) if isinstance(sign_in, str) else None
        if username is None or username not in ACCOUNTS:
            return None
        account = ACCOUNTS[username]
        return AuthCredentials(["authenticated", *sorted(account.roles)]), SimpleUser(username)


# -- the MCP server: tools over the same notes, for the signed-in user -----------------------------

mcp = App("notes", version="1.0.0", instructions="Your notes in the Notes app.")
mcp.visibility = scoped_by_tag(mcp.registry)


@mcp.tool
def my_notes(gateway: ClientGateway) -> list[str]:
    """The signed-in user's notes."""
    return NOTES.get(gateway.session.principal or "", [])


@mcp.tool
def add_note(text: str, gateway: ClientGateway) -> list[str]:
    """Add a note for the signed-in user; returns their notes.

    Args:
        text: The note.
        gateway: Who is asking (injected, not published).
    """
    notes = NOTES.setdefault(gateway.session.principal or "", [])
    notes.append(text)
    return notes


@mcp.tool(tags={"scope:admin"})
def all_notes() -> dict[str, list[str]]:
    """Every user's notes (administrators only)."""
    return NOTES


mcp_app = mcp.asgi(
    path="/mcp",
    transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=HOSTS,
        allowed_origins=[f"http://{host}" for host in HOSTS]
        + [f"https://{host}" for host in HOSTS],
    ),
)


# -- the web application -------------------------------------------------------------------------


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Run the mounted MCP app's lifespan: Starlette does not run a mounted app's own."""
    async with mcp_app.router.lifespan_context(mcp_app):
        yield


web = FastAPI(title="Notes", lifespan=lifespan)


class Login(BaseModel):
    """The login form."""

    username: str
    password: str


@web.post("/login")
async def login(form: Login, request: Request) -> dict[str, str]:
    """Sign in: the session cookie then names a new sign-in of the user."""
    account = ACCOUNTS.get(form.username)
    if account is None or not hmac.compare_digest(account.password, form.password):
        raise HTTPException(status_code=401, detail="wrong username or password")
    _forget(request)
    sign_in = secrets.token_urlsafe(32)
    SIGN_INS[sign_in] = form.username
    request.session["sign_in"] = sign_in
    return {"user": form.username}


@web.post("/logout")
async def logout(request: Request) -> dict[str, bool]:
    """Sign out: the sign-in is forgotten, so no copy of the cookie opens anything any more."""
    _forget(request)
    return {"signed_out": True}


def _forget(request: Request) -> None:
    sign_in = request.session.get("sign_in")
    if isinstance(sign_in, str):
        SIGN_INS.pop(sign_in, None)
    request.session.clear()


@web.get("/notes")
@requires("authenticated", status_code=401)
async def notes(request: Request) -> list[str]:
    """The signed-in user's notes, for the application's own pages."""
    return NOTES.get(request.user.display_name, [])


# The MCP endpoint, behind the application's own middleware (routes above match first).
web.mount("/", HostAuthentication(mcp_app, client_id="notes-web"))
web.add_middleware(AuthenticationMiddleware, backend=SessionUsers())
web.add_middleware(
    SessionMiddleware,
    secret_key=os.environ.get("NOTES_SECRET_KEY") or secrets.token_urlsafe(32),
    same_site="lax",
    https_only=False,  # the demo serves plain HTTP on loopback; set True behind TLS
)


def main() -> None:
    """Serve the application (and its MCP endpoint) with uvicorn; say where once listening."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    args = parser.parse_args()
    # Bound first, so the line below names the real port (--port 0) and never a taken one.
    listening = socket.create_server((args.host, args.port))
    host, port = listening.getsockname()[:2]
    print(
        f"notes: serving at http://{host}:{port}/ (MCP endpoint: http://{host}:{port}/mcp; "
        "sign in with POST /login first); Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    server = uvicorn.Server(uvicorn.Config(web, log_level="warning"))
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises Ctrl-C once it has stopped
        server.run(sockets=[listening])


if __name__ == "__main__":
    main()
