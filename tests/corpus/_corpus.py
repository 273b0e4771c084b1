"""Running a corpus server in one flavor and recording what the official client gets back.

A *transcript* is every answer a cell got, in order: each list (every page), then each request
of the server's ``ask`` entries, then a call to a tool the server does not have. Answers are the
wire shape of the result, or ``{"error": {"code", "message"}}``; :func:`normalised` then replaces
what differs between two runs of the same server by nature (times, ids).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.clients import MCP_CORE, ROOT

MANIFEST = ROOT / "tests" / "corpus" / "servers.toml"
HOME = ROOT / ".tools" / "corpus"
PROXY = ROOT / "tests" / "corpus" / "proxy.py"
ADOPT = ROOT / "tests" / "corpus" / "adopt.py"

with MANIFEST.open("rb") as _file:
    SERVERS: dict[str, dict[str, Any]] = tomllib.load(_file)["servers"]


@dataclass(frozen=True)
class Place:
    """Where one cell's server keeps its files: ``{workdir}``, ``{repo}`` and ``{url}``."""

    workdir: Path
    repo: Path
    url: str

    def fill(self, value: Any) -> Any:
        """``value`` with the placeholders replaced (in strings, lists and mappings)."""
        if isinstance(value, str):
            return (
                value.replace("{workdir}", str(self.workdir))
                .replace("{repo}", str(self.repo))
                .replace("{url}", self.url)
            )
        if isinstance(value, list):
            return [self.fill(item) for item in value]
        if isinstance(value, dict):
            return {key: self.fill(item) for key, item in value.items()}
        return value


def installed(name: str) -> bool:
    """Whether scripts/corpus.py installed the server's environment."""
    return (HOME / name / "mcp-core-corpus.json").is_file()


def require(name: str) -> None:
    """Skip the test unless the server is installed (in CI, fail it: CI installs the corpus)."""
    if installed(name):
        return
    message = f"the corpus server {name!r} is not installed: run python scripts/corpus.py install"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def native(name: str, place: Place) -> StdioServerParameters:
    """The server itself, over stdio."""
    entry = SERVERS[name]
    command = place.fill(entry["command"])
    env = {**os.environ, **place.fill(entry.get("env", {}))}
    return StdioServerParameters(
        command=str(HOME / name / "bin" / command[0]), args=command[1:], env=env, cwd=place.workdir
    )


def proxied(name: str, place: Place, mode: str) -> StdioServerParameters:
    """``mcp-core run tests/corpus/proxy.py``: the server behind a RemoteSource in ``mode``."""
    server = native(name, place)
    spec = {"command": [server.command, *server.args], "env": server.env, "mode": mode}
    return StdioServerParameters(
        command=str(MCP_CORE),
        args=["run", str(PROXY)],
        env={**os.environ, "CORPUS_SERVER": json.dumps(spec)},
        cwd=place.workdir,
    )


def adopted(name: str, place: Place, how: str) -> StdioServerParameters:
    """``mcp-core run tests/corpus/adopt.py``: the server's own object, in mcp-core's process.

    ``how`` is ``"adopted"`` (its bridge source in an App) or ``"as-is"`` (the object itself
    given to the CLI); the server's entry must have ``adopt``.
    """
    entry = SERVERS[name]
    site = next((HOME / name / "lib").glob("python3*/site-packages"))
    spec = {**place.fill(entry["adopt"]), "site": str(site), "how": how}
    env = {**os.environ, **place.fill(entry.get("env", {})), "CORPUS_ADOPT": json.dumps(spec)}
    return StdioServerParameters(
        command=str(MCP_CORE), args=["run", str(ADOPT)], env=env, cwd=place.workdir
    )


async def _answer(request: Callable[[], Any]) -> Any:
    try:
        result = await request()
    except MCPError as exc:
        return {"error": {"code": exc.code, "message": str(exc)}}
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def _every_page(fetch: Callable[..., Any], key: str) -> Any:
    items: list[Any] = []
    cursor = None
    while True:
        page = await fetch(cursor=cursor, cache_mode="bypass")
        items.extend(
            item.model_dump(by_alias=True, mode="json", exclude_none=True)
            for item in getattr(page, key)
        )
        cursor = page.next_cursor
        if cursor is None:
            return {key: items}


async def _listed(fetch: Callable[..., Any], key: str) -> Any:
    try:
        return await _every_page(fetch, key)
    except MCPError as exc:
        return {"error": {"code": exc.code, "message": str(exc)}}


async def transcript(target: StdioServerParameters, era: str, name: str, place: Place) -> list[Any]:
    """What the official client in ``era`` gets from ``target`` (see the module documentation)."""
    answers: list[Any] = []
    async with Client(target, mode=era, read_timeout_seconds=60) as client:
        answers.append(["tools/list", await _listed(client.list_tools, "tools")])
        answers.append(["resources/list", await _listed(client.list_resources, "resources")])
        answers.append(
            [
                "resources/templates/list",
                await _listed(client.list_resource_templates, "resource_templates"),
            ]
        )
        answers.append(["prompts/list", await _listed(client.list_prompts, "prompts")])
        for ask in [*SERVERS[name].get("ask", []), {"call": "no_such_tool", "arguments": {}}]:
            arguments = place.fill(ask.get("arguments", {}))
            if "call" in ask:
                label = f"tools/call {ask['call']}"
                answer = await _answer(lambda: client.call_tool(ask["call"], arguments))  # noqa: B023
            elif "read" in ask:
                label = f"resources/read {ask['read']}"
                answer = await _answer(lambda: client.read_resource(ask["read"]))  # noqa: B023
            else:
                label = f"prompts/get {ask['get']}"
                answer = await _answer(lambda: client.get_prompt(ask["get"], arguments))  # noqa: B023
            answers.append([label, answer])
    return answers


_TIMES = (
    re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)?"),
    re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"),
    # The day a time falls on (a native run and a cell may straddle midnight somewhere).
    re.compile(r"\b(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b"),
)


def normalised(value: Any, place: Place) -> Any:
    """``value`` with what differs between two runs by nature replaced: times and the workdir."""
    if isinstance(value, str):
        text = value.replace(str(place.workdir), "{workdir}")
        for pattern in _TIMES:
            text = pattern.sub("{time}", text)
        return text
    if isinstance(value, list):
        return [normalised(item, place) for item in value]
    if isinstance(value, dict):
        return {key: normalised(item, place) for key, item in value.items()}
    return value


def make_place(tmp: Path, url: str) -> Place:
    """A fresh workdir with a git repository of one fixed commit (the same hash every time)."""
    import subprocess

    repo = tmp / "repo"
    repo.mkdir(parents=True)
    (repo / "README.md").write_text("corpus\n")
    fixed = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Corpus",
        "GIT_AUTHOR_EMAIL": "corpus@example.org",
        "GIT_COMMITTER_NAME": "Corpus",
        "GIT_COMMITTER_EMAIL": "corpus@example.org",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "README.md"],
        ["git", "commit", "-q", "-m", "first"],
    ):
        subprocess.run(command, cwd=repo, env=fixed, check=True)  # noqa: S603 -- fixed commands
    return Place(workdir=tmp, repo=repo, url=url)


@asynccontextmanager
async def bounded(seconds: float) -> AsyncIterator[None]:
    """Fail a cell that hangs (a bound for a loaded machine, never a measured time)."""
    with anyio.fail_after(seconds):
        yield


def documented(path: Path) -> Mapping[str, str]:
    """The rows of the differences table in ``path`` (docs/adopt.md): rule id to description."""
    rows: dict[str, str] = {}
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("<!-- corpus-differences -->"):
            inside = True
            continue
        if inside and line.startswith("<!-- /corpus-differences -->"):
            break
        if inside and line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1]
    return rows


def _key(item: Mapping[str, Any]) -> str:
    return str(item.get("name") or item.get("uri") or item.get("uriTemplate") or "")


def in_key_order(answers: list[Any]) -> list[Any]:
    """Each list's items sorted by name, URI or template (mcp-core lists in key order)."""
    ordered: list[Any] = []
    for label, answer in answers:
        if label.endswith("/list") and "error" not in answer:
            answer = {key: sorted(items, key=_key) for key, items in answer.items()}  # noqa: PLW2901
        ordered.append([label, answer])
    return ordered


# -- the documented differences (docs/adopt.md, "Differences from the server served natively") --

_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
RULES = (
    "server-info",
    "key-order",
    "refused-list",
    "unknown-tool",
    "invalid-arguments",
    "prompt-description",
)
"""The id of each documented difference :func:`reconciled` takes out."""


def _without_server_info(answer: Any) -> Any:
    if isinstance(answer, dict) and isinstance(answer.get("_meta"), dict):
        meta = {k: v for k, v in answer["_meta"].items() if k != _SERVER_INFO}
        answer = {k: v for k, v in answer.items() if k != "_meta"}
        if meta:
            answer["_meta"] = meta
    return answer


def _is_error(answer: Any, code: int | None = None) -> bool:
    return "error" in answer and (code is None or answer["error"]["code"] == code)


def reconciled(native: list[Any], other: list[Any]) -> tuple[list[Any], list[Any], set[str]]:
    """Both transcripts with each documented difference taken out, and the differences used.

    Each rule's id is a row of the table in docs/adopt.md; the corpus test checks that the two
    agree, and that nothing else differs.
    """
    used: set[str] = set()
    left: list[Any] = []
    right: list[Any] = []
    for (label, mine), (_, theirs) in zip(in_key_order(native), in_key_order(other), strict=True):
        a, b = _without_server_info(mine), _without_server_info(theirs)
        if (a, b) != (mine, theirs) and mine != theirs:
            used.add("server-info")
        if label.endswith("/list") and _is_error(a, -32601) and not _is_error(b):
            a = {key: [] for key in b}
            used.add("refused-list")
        if label == "tools/call no_such_tool" and _is_error(b, -32602) and a != b:
            a = b
            used.add("unknown-tool")
        if (
            label.startswith("tools/call")
            and not _is_error(a)
            and not _is_error(b)
            and a.get("isError")
            and b.get("isError")
            and b["content"][0].get("text", "").startswith(f"tool '{label.split()[1]}': invalid")
        ):
            a = b
            used.add("invalid-arguments")
        if (
            label.startswith("prompts/get")
            and not _is_error(a)
            and not _is_error(b)
            and a.get("description") != b.get("description")
        ):
            a = {**a, "description": b.get("description")}
            used.add("prompt-description")
        left.append([label, a])
        right.append([label, b])
    if native != other and in_key_order(native) != native:
        used.add("key-order")
    return left, right, used
