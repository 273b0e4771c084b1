"""Mutation testing of the conformance kit: do its laws catch the bugs nobody told it about?

Each *component* is a reference implementation the kit certifies (a store, the change bus, the
visibility combinators, ...). cosmic-ray enumerates the mutants of the component's modules (each a
small plausible bug: ``>=`` for ``>``, a ``not`` added, a loop that never runs, ...); every mutant
in scope is applied to a private copy of ``mcp_core`` and the kit certifies the component's target
against it, exactly as ``pytest --mcp-conformance`` does for a framework author. A mutant is
*killed* when the certification fails and *survives* when it passes. A survivor is either killed
by a new or sharper law, or listed in ``scripts/mutation-equivalents.toml`` with the reason it
cannot be told apart from the original through any promise (an equivalent mutant).

Subcommands (components default to all of them; ``list`` names them):

- ``list [COMPONENT...]``: every mutant, its scope, and whether it is listed as equivalent.
- ``run [COMPONENT...] [--jobs N] [--survivors | --resume] [--sample N [--sample-seed S]]``: run every
  mutant in scope (or only the last run's survivors not listed as equivalent, after a law was
  sharpened; or a random sample of N, for a component whose full run takes hours: the score
  says so), in an order shuffled with the seed; results go to ``.mutation/COMPONENT.json`` after
  each mutant, so an interrupted run keeps a random sample of what it set out to run (progress
  on stderr). Minutes per component, not for CI.
- ``score [COMPONENT...] [--docs]``: the score per component from the last run: killed /
  (in scope - equivalent). Exits 1 when a component scores below 95 %, a survivor is not
  listed, a listed equivalent was killed, or the modules changed since the run. ``--docs``
  writes the table into ``conformance/README.md``.
- ``stubs [COMPONENT...]``: TOML entries for the last run's unlisted survivors, to fill in with
  the reason each is equivalent (or to kill with a sharper law instead).
- ``verify``: the equivalents file is consistent with the code: every entry names exactly one
  mutant in scope of its component, gives a reason, and is listed once (no tests run: CI).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import difflib
import hashlib
import json
import os
import py_compile
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
EQUIVALENTS: Final = ROOT / "scripts" / "mutation-equivalents.toml"
RESULTS: Final = ROOT / ".mutation"
DOCS: Final = ROOT / "conformance" / "README.md"
DOCS_BEGIN: Final = "<!-- mutation-score:begin -->"
DOCS_END: Final = "<!-- mutation-score:end -->"
THRESHOLD: Final = 0.95
SEED: Final = "0"
"""The kit's seed for every run: a mutant's verdict must not depend on the run."""


@dataclass(frozen=True)
class Component:
    """A reference implementation: its modules, the kit targets that certify it, what is out of scope.

    ``outside`` maps a qualified definition (``Class.method`` or ``function``) of the modules to
    the reason no promise covers it (a ``__repr__``, a rule that is not a combinator): its
    mutants are listed but not run.
    """

    modules: tuple[str, ...]
    targets: tuple[tuple[str, str], ...]
    outside: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 240.0
    """Seconds a certification of one mutant may take before it counts as killed (a hang)."""


_REPR: Final = "a repr is for people reading logs; no contract promises its text"
_INSPECTION: Final = "an inspection property outside the protocol; no law speaks of it"
_DEFAULTS: Final = (
    "a default the factory's arguments replace: the kit passes its own bounds (events.bounded "
    "holds the store to whatever bounds it is given)"
)
_SERVER_SIDE: Final = (
    "the server's side of event streams (binding a store to the SDK's sessions), certified at "
    "the wire by the server laws, not by the event-store target"
)
_OUTSIDE_VISIBILITY: Final = (
    "a rule, not a combinator: visibility.uri-narrows is about rules composing others, and a rule "
    "deciding alone is certified through a server (server.visibility-agrees)"
)

_OPERATORS: Final = (
    "what a registry or source reports to operators (health, diagnostics, origins, log "
    "lines); no law of the protocols the kit certifies speaks of it"
)
_SERVING: Final = (
    "what a server asks of the reference Registry beyond the protocols (source listeners, "
    "read-ahead of kinds): certified through the server, not by the registry target"
)
_RECOVERY: Final = (
    "background retries of failed sources on a timer, a task the registry target never starts; "
    "tests/registry hold it to its schedule"
)
_TELEMETRY: Final = (
    "telemetry: the attributes and status of a span around a provide (tests/e2e/test_tracing "
    "holds them); what the provide came to is decided apart from them, by _fetch_once"
)
_HANDLER_SPANS: Final = (
    "telemetry: the name, attributes and outcome of a request handler's spans (tests/e2e/"
    "test_tracing holds them); what the request answers is decided apart from them"
)
_SOME_SOURCES: Final = (
    "reload(*sources), naming which sources to provide again: beyond DeferredRegistry's "
    "reload(), which the kit certifies; what a deployment asks when another worker says which "
    "sources changed (tests/registry/test_propagation and tests/search hold it)"
)
_CACHE_KEYS: Final = (
    "what a CachedSource keys its entries on (cache_inputs): no source or wrapper law speaks of "
    "it; tests/sources hold the keys apart"
)
_OTHER_WRAPPER: Final = "another wrapper of the same module, certified by its own component"

COMPONENTS: Final[Mapping[str, Component]] = {
    "memory-store": Component(
        modules=("mcp_core/stores/_memory.py",),
        targets=(("cache-store", "mcp_core.stores:MemoryStore"),),
        outside={"MemoryStore.__repr__": _REPR},
    ),
    "sqlite-store": Component(
        modules=("mcp_core/stores/_sqlite.py",),
        targets=(("cache-store", "mcp_conformance.reference.sqlite_store:make_cache_store"),),
        outside={"SqliteStore.__repr__": _REPR, "SqliteStore.path": _INSPECTION},
    ),
    "change-bus": Component(
        modules=("mcp_core/stores/_bus.py",),
        targets=(("change-bus", "mcp_core.stores:MemoryChangeBus"),),
        outside={
            "MemoryChangeBus.__repr__": _REPR,
            "MemoryChangeBus.health": (
                "health() reports for operators (a BackendHealth); no law of ChangeBus speaks of "
                "it, and ChangePropagation's tests hold it to its word"
            ),
            "MemoryChangeBus.versions": _INSPECTION,
        },
    ),
    "visibility": Component(
        modules=("mcp_core/visibility/_combinators.py",),
        targets=tuple(
            ("visibility", f"mcp_conformance.reference.visibility:{name}")
            for name in ("composed", "all_of", "any_of", "not_")
        ),
        outside={
            "UriPredicate": "a type alias",
            "_Predicate": _OUTSIDE_VISIBILITY,
            "predicate": _OUTSIDE_VISIBILITY,
            "_PerUri": _OUTSIDE_VISIBILITY,
            "per_uri": _OUTSIDE_VISIBILITY,
            "_ByTag": _OUTSIDE_VISIBILITY,
            "by_tag": _OUTSIDE_VISIBILITY,
            "scoped_by_tag": _OUTSIDE_VISIBILITY,
            "_RequiresScopes": _OUTSIDE_VISIBILITY,
            "requires_scopes": _OUTSIDE_VISIBILITY,
            "ElementLookup": "a Protocol: its body is never run",
            "_HandlerAccess": _OUTSIDE_VISIBILITY,
            "_verdict": _OUTSIDE_VISIBILITY,
            "handler_access": _OUTSIDE_VISIBILITY,
        },
    ),
    "registry": Component(
        modules=("mcp_core/registry/_registry.py",),
        targets=(("registry", "mcp_core.registry:Registry"),),
        outside={
            "Registry.__repr__": _REPR,
            "DEFAULT_PROVIDE_TIMEOUT": (
                "the default bound on a provide(): the kit's sources finish within a few turns of "
                "the event loop, far inside any such bound, and no law can wait out seconds in a "
                "registry's 60 s; tests/registry hold Registry to its timeout"
            ),
            "Priority": "named priorities, constants for callers; the kit passes its own numbers",
            "Registry.health": _OPERATORS,
            "Registry.diagnostics": _OPERATORS,
            "Registry.origin": _OPERATORS,
            "Registry._log_new_problems": _OPERATORS,
            "_source_diagnostics": _OPERATORS,
            "_diagnostic": _OPERATORS,
            "_without_ref": _OPERATORS,
            "_source_of": _OPERATORS,
            "Registry.sources": _INSPECTION,
            "Registry._fetch": _TELEMETRY,
            "Registry.catalog_sizes": _OPERATORS,
            "Registry._entries_of": _SOME_SOURCES,
            "Registry.subscribe_sources": _SERVING,
            "Registry._notify_sources": _SERVING,
            "Registry._drain_changed_sources": _SERVING,
            "Registry.prefetch_kinds": _SERVING,
            "Registry.background": _RECOVERY,
            "Registry._retry_loop": _RECOVERY,
            "Registry._retry": _RECOVERY,
            "Registry._retry_once": _RECOVERY,
        },
        timeout=600.0,
    ),
    "isolated-source": Component(
        modules=("mcp_core/sources/_wrappers.py",),
        targets=(("wrapper", "mcp_conformance.reference.isolated:wrap"),),
        outside={
            "IsolatedSource.__repr__": _REPR,
            "IsolatedSource.diagnostics": _OPERATORS,
            "IsolatedSource.inner": _INSPECTION,
            "IsolatedSource.last_good": _INSPECTION,
            "FilteredSource": _OTHER_WRAPPER,
            "PrefixedSource": _OTHER_WRAPPER,
            "_PREFIX": _OTHER_WRAPPER,
            "_SEPARATOR": _OTHER_WRAPPER,
        },
    ),
    "filtered-source": Component(
        modules=("mcp_core/sources/_wrappers.py",),
        targets=(
            ("wrapper", "mcp_conformance.reference.filtered:wrap"),
            ("wrapper", "mcp_conformance.reference.filtered:wrap_kinds"),
        ),
        outside={
            "FilteredSource.__repr__": _REPR,
            "FilteredSource.diagnostics": _OPERATORS,
            "FilteredSource.inner": _INSPECTION,
            "FilteredSource.cache_inputs": _CACHE_KEYS,
            "IsolatedSource": _OTHER_WRAPPER,
            "PrefixedSource": _OTHER_WRAPPER,
            "_PREFIX": _OTHER_WRAPPER,
            "_SEPARATOR": _OTHER_WRAPPER,
            "<module>": _OTHER_WRAPPER,
            "__all__": _OTHER_WRAPPER,
            "_log": _OTHER_WRAPPER,
        },
    ),
    "prefixed-source": Component(
        modules=("mcp_core/sources/_wrappers.py",),
        targets=(("wrapper", "mcp_conformance.reference.prefixed:wrap"),),
        outside={
            "PrefixedSource.__repr__": _REPR,
            "PrefixedSource.diagnostics": _OPERATORS,
            "PrefixedSource.prefix": _INSPECTION,
            "PrefixedSource.inner": _INSPECTION,
            "PrefixedSource.cache_inputs": _CACHE_KEYS,
            "IsolatedSource": _OTHER_WRAPPER,
            "FilteredSource": _OTHER_WRAPPER,
            "<module>": _OTHER_WRAPPER,
            "__all__": _OTHER_WRAPPER,
            "_log": _OTHER_WRAPPER,
        },
    ),
    "static-source": Component(
        modules=("mcp_core/sources/_static.py",),
        targets=(("source", "mcp_conformance.reference.static:source"),),
        outside={
            "StaticSource.__repr__": _REPR,
            "StaticSource.collection": _INSPECTION,
        },
    ),
    "lazy-source": Component(
        modules=("mcp_core/sources/_lazy.py",),
        targets=(("source", "mcp_conformance.reference.lazy:source"),),
        outside={
            "LazySource.__repr__": _REPR,
            "LazySource.diagnostics": _OPERATORS,
            "LazySource.called": _INSPECTION,
        },
    ),
    "server-handlers": Component(
        modules=("mcp_core/server/_requests.py",),
        targets=(("server", "mcp_conformance.reference.server:make_server"),),
        outside={
            "RequestHandlers.__repr__": _REPR,
            "ElementInvoker": "a Protocol: its body is never run",
            "default_cursor_secret": (
                "where a cursor key comes from when none is configured: any fixed key serves "
                "server.pagination alike"
            ),
            "_resolving": _HANDLER_SPANS,
            "_outcome": _HANDLER_SPANS,
            "_handling": _HANDLER_SPANS,
            "_json": _HANDLER_SPANS,
            "_json_default": _HANDLER_SPANS,
        },
        timeout=600.0,
    ),
    "event-store": Component(
        modules=("mcp_core/server/_events.py",),
        targets=(("event-store", "mcp_core.server:InMemoryEventStore"),),
        outside={
            "InMemoryEventStore.__repr__": _REPR,
            "InMemoryEventStore.retained_events": _INSPECTION,
            "InMemoryEventStore.retained_bytes": _INSPECTION,
            "DEFAULT_EVENT_MAX_EVENTS": _DEFAULTS,
            "DEFAULT_EVENT_MAX_BYTES": _DEFAULTS,
            "DEFAULT_EVENT_MAX_AGE": _DEFAULTS,
            "RetainedBytes": (
                "what the server asks an event store for its metrics, a Protocol beside "
                "SessionEventStore; tests/typing/test_protocol_conformance holds the in-memory "
                "store to it"
            ),
            "SessionEventStore": (
                "the Protocol itself: the laws drive a target through its methods, never "
                "isinstance; that the server may ask isinstance of it (runtime-checkable) is held "
                "by every tests/server test that serves with an InMemoryEventStore"
            ),
            "_SessionEvents": _SERVER_SIDE,
            "_SessionTable": _SERVER_SIDE,
            "bind_sessions": _SERVER_SIDE,
        },
    ),
}


@dataclass(frozen=True)
class Mutant:
    """One mutant of a component's module, as cosmic-ray enumerates it."""

    component: str
    module: str
    operator: str
    occurrence: int
    line: int
    definition: str
    code: str
    nth: int
    """Among the mutants sharing module, definition, operator and code: which one (from 0)."""
    static: str | None = None
    """Why the mutant cannot change what the module does at run time, if it cannot."""

    @property
    def key(self) -> str:
        """What identifies the mutant across edits that move its line."""
        return f"{self.module}|{self.definition}|{self.operator}|{self.code}|{self.nth}"

    def outside(self) -> str | None:
        """Why the mutant is out of scope, or None."""
        if self.static is not None:
            return self.static
        rules = COMPONENTS[self.component].outside
        parts = self.definition.split(".")
        for end in range(len(parts), 0, -1):
            reason = rules.get(".".join(parts[:end]))
            if reason is not None:
                return reason
        return None

    def describe(self) -> str:
        """``module:line (definition) operator: code``."""
        return f"{self.module}:{self.line} ({self.definition}) {self.operator}: {self.code}"


@dataclass(frozen=True)
class Equivalent:
    """An entry of the equivalents file."""

    component: str
    module: str
    definition: str
    operator: str
    code: str
    nth: int
    reason: str

    @property
    def key(self) -> str:
        """The key of the mutant it names."""
        return f"{self.module}|{self.definition}|{self.operator}|{self.code}|{self.nth}"


class UsageError(Exception):
    """A mistake in the command line or the equivalents file: the message says what to do."""


# -- enumerating mutants -------------------------------------------------------------------------


def _definitions(source: str) -> dict[int, str]:
    """Each line of a module to the qualified name of what it is part of.

    The innermost def or class holding it (its decorators included), or the module-level name a
    statement assigns; ``<module>`` for the rest.
    """
    found: dict[int, str] = {}

    def mark(node: ast.stmt, name: str) -> None:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        for line in range(first, (node.end_lineno or node.lineno) + 1):
            found[line] = name

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                mark(child, f"{prefix}{child.name}")
                visit(child, f"{prefix}{child.name}.")
            elif not prefix and isinstance(child, ast.Assign | ast.AnnAssign):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names = [target.id for target in targets if isinstance(target, ast.Name)]
                if names:
                    mark(child, names[0])
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


_ANNOTATION: Final = (
    "an annotation: the module has `from __future__ import annotations`, so annotations are "
    "never evaluated; mypy --strict judges them"
)
_TYPING_DECORATOR: Final = "typing.final only marks the class for type checkers (mypy --strict)"
_KEYWORD_MARKER: Final = (
    "the bare `*` of a signature made `/`: the parameters after it may also be passed by "
    "position, so every call that worked still does (mypy --strict holds callers to the "
    "protocol's keyword-only signature)"
)


def _keyword_marker(line: str, column: int, operator: str) -> bool:
    """Whether the mutant turns a signature's bare ``*`` into ``/``."""
    rest = line[column + 1 :].lstrip()
    # A bare `*` followed by `,` or `)` is nothing but the marker (no expression reads so).
    return (
        operator.endswith("_Mul_Div")
        and line[column : column + 1] == "*"
        and rest[:1] in {",", ")"}
    )


def _static(source: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """Source spans whose mutants change nothing at run time, each with the reason.

    Annotations (when the module postpones their evaluation) and ``@final``: what they say is
    checked by mypy, and no run of any code can tell a mutant of them from the original.
    """
    tree = ast.parse(source)
    postponed = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    spans: list[tuple[tuple[int, int], tuple[int, int], str]] = []

    def span(node: ast.expr, reason: str) -> None:
        end = (node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
        spans.append(((node.lineno, node.col_offset), end, reason))

    for node in ast.walk(tree):
        if postponed and isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            span(node.annotation, _ANNOTATION)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if postponed and not isinstance(node, ast.ClassDef) and node.returns is not None:
                span(node.returns, _ANNOTATION)
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Name) and decorator.id == "final":
                    # cosmic-ray places a decorator's mutant at its "@".
                    at = (decorator.lineno, decorator.col_offset - 1)
                    spans.append((at, (at[0], at[1] + len("@final")), _TYPING_DECORATOR))
    return spans


def _static_reason(
    spans: Sequence[tuple[tuple[int, int], tuple[int, int], str]], start: tuple[int, int]
) -> str | None:
    for begin, end, reason in spans:
        if begin <= start < end:
            return reason
    return None


def _cosmic_ray(*args: str, cwd: Path | None = None) -> str:
    binary = Path(sys.executable).parent / "cosmic-ray"
    if not binary.exists():
        message = "cosmic-ray is not installed: run scripts/install (it is in the dev extra)"
        raise UsageError(message)
    done = subprocess.run(  # noqa: S603 -- our own venv's tool, arguments we build
        [str(binary), *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        message = f"cosmic-ray {' '.join(args)} failed:\n{done.stdout}{done.stderr}"
        raise UsageError(message)
    return done.stdout


def mutants(component: str) -> list[Mutant]:
    """Every mutant cosmic-ray makes of the component's modules, in a stable order."""
    found: list[Mutant] = []
    with tempfile.TemporaryDirectory(prefix="mcp-mutation-") as scratch:
        for module in COMPONENTS[component].modules:
            path = ROOT / module
            source = path.read_text(encoding="utf-8")
            lines = source.splitlines()
            definitions = _definitions(source)
            spans = _static(source)
            config = Path(scratch) / "cosmic-ray.toml"
            session = Path(scratch) / f"{path.stem}.sqlite"
            config.write_text(
                "[cosmic-ray]\n"
                f"module-path = {json.dumps(str(path))}\n"
                'timeout = 1.0\nexcluded-modules = []\ntest-command = "true"\n'
                '[cosmic-ray.distributor]\nname = "local"\n',
                encoding="utf-8",
            )
            _cosmic_ray("init", str(config), str(session))
            raw: list[tuple[str, int, int, int]] = []
            for row in _cosmic_ray("dump", str(session)).splitlines():
                item, _result = json.loads(row)
                (mutation,) = item["mutations"]
                line, column = mutation["start_pos"]
                raw.append((mutation["operator_name"], mutation["occurrence"], line, column))
            seen: Counter[tuple[str, str, str]] = Counter()
            for operator, occurrence, line, column in sorted(
                raw, key=lambda row: (row[2], row[0], row[1])
            ):
                definition = definitions.get(line, "<module>")
                code = lines[line - 1].strip()
                nth = seen[(definition, operator, code)]
                seen[(definition, operator, code)] += 1
                static = _static_reason(spans, (line, column))
                if _keyword_marker(lines[line - 1], column, operator):
                    static = _KEYWORD_MARKER
                found.append(
                    Mutant(
                        component, module, operator, occurrence, line, definition, code, nth, static
                    )
                )
    return found


# -- the equivalents file ------------------------------------------------------------------------


def equivalents() -> list[Equivalent]:
    """The entries of the equivalents file, each checked for its fields."""
    data = tomllib.loads(EQUIVALENTS.read_text(encoding="utf-8"))
    entries = data.get("equivalent", [])
    found = []
    for number, entry in enumerate(entries, start=1):
        missing = {"component", "module", "definition", "operator", "code", "reason"} - set(entry)
        if missing:
            message = f"{EQUIVALENTS.name}: entry {number} lacks {sorted(missing)}"
            raise UsageError(message)
        if entry["component"] not in COMPONENTS:
            message = (
                f"{EQUIVALENTS.name}: entry {number} names component {entry['component']!r}; "
                f"the components are {sorted(COMPONENTS)}"
            )
            raise UsageError(message)
        if not str(entry["reason"]).strip():
            message = f"{EQUIVALENTS.name}: entry {number} gives no reason"
            raise UsageError(message)
        found.append(
            Equivalent(
                component=entry["component"],
                module=entry["module"],
                definition=entry["definition"],
                operator=entry["operator"],
                code=entry["code"],
                nth=int(entry.get("nth", 0)),
                reason=str(entry["reason"]).strip(),
            )
        )
    return found


def verify() -> list[str]:
    """Every problem of the equivalents file against the code as it is (empty: consistent)."""
    problems = []
    listed = equivalents()
    counts = Counter((entry.component, entry.key) for entry in listed)
    problems += [
        f"{key.replace('|', ' | ')} is listed {count} times for {component}"
        for (component, key), count in counts.items()
        if count > 1
    ]
    by_component: dict[str, dict[str, Mutant]] = {}
    for entry in listed:
        if entry.component not in by_component:
            by_component[entry.component] = {m.key: m for m in mutants(entry.component)}
        mutant = by_component[entry.component].get(entry.key)
        name = f"{entry.module} ({entry.definition}) {entry.operator}: {entry.code}"
        if mutant is None:
            problems.append(
                f"{name}: no such mutant of {entry.component} (the code changed? `scripts/"
                "mutation.py list` shows the mutants; re-run the component and update the entry)"
            )
        elif (reason := mutant.outside()) is not None:
            problems.append(f"{name}: out of scope already ({reason}); remove the entry")
    for component in by_component:
        results = _load_results(component)
        if results is None:
            continue
        killed = {row["key"] for row in results["mutants"] if row["outcome"] == "killed"}
        problems += [
            f"{entry.module} ({entry.definition}) {entry.operator}: {entry.code}: listed as "
            f"equivalent, but the last run of {component} killed it; remove the entry"
            for entry in listed
            if entry.component == component and entry.key in killed
        ]
    return problems


# -- running -------------------------------------------------------------------------------------


def _fingerprint(component: str) -> str:
    digest = hashlib.sha256()
    for module in COMPONENTS[component].modules:
        digest.update((ROOT / module).read_bytes())
    return digest.hexdigest()


def _results_path(component: str) -> Path:
    return RESULTS / f"{component}.json"


def _load_results(component: str) -> dict[str, Any] | None:
    """The last run's results, as :func:`run` wrote them (None: never run)."""
    path = _results_path(component)
    if not path.exists():
        return None
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


_ORDER_PLUGIN: Final = "mutation_law_order"
_ORDER_VARIABLE: Final = "MCP_MUTATION_LAW_ORDER"
_ORDER_SOURCE: Final = f'''"""Runs first the laws named in {_ORDER_VARIABLE} (scripts/mutation.py writes it)."""

import os


def pytest_collection_modifyitems(items):
    order = os.environ.get("{_ORDER_VARIABLE}", "").split(",")
    rank = {{name: place for place, name in enumerate(order) if name}}
    items.sort(key=lambda item: rank.get(item.name, len(rank)))
'''
"""A pytest plugin each work directory holds: the kit stops at the first law that fails (``-x``),
so the laws likeliest to kill a mutant run first. The order changes only how soon a mutant is
killed, never whether: every law still runs on a survivor."""


def _certify(
    workdir: Path, kind: str, spec: str, timeout: float = 240.0, order: Sequence[str] = ()
) -> tuple[int, str]:
    """Run the kit on one target with ``workdir``'s mcp_core first on the path.

    ``order``: law functions to run first, the likeliest killers first. Bytecode is not written
    (the work directory's modules were compiled with checked hashes: a mutated module's stale
    bytecode is recompiled on import, never used).
    """
    env = dict(
        os.environ,
        PYTHONPATH=str(workdir),
        PYTHONDONTWRITEBYTECODE="1",
        **{_ORDER_VARIABLE: ",".join(order)},
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-p",
        _ORDER_PLUGIN,
        "--mcp-conformance",
        f"--mcp-{kind}={spec}",
        f"--mcp-conformance-seed={SEED}",
    ]
    process = subprocess.Popen(  # noqa: S603 -- our interpreter, arguments we build
        command,
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return -1, f"timed out after {timeout:.0f} s\n{output}"
    return process.returncode, output


def _killer(output: str) -> str | None:
    """The law function that failed first, from pytest's short summary (``FAILED path::name``)."""
    for line in output.splitlines():
        if line.startswith("FAILED ") and "::" in line:
            return line.split("::", 1)[1].split(" ", 1)[0]
    return None


class _Killers:
    """Which laws killed mutants so far in a run: the order to try the next mutant's laws in.

    First the laws that killed a mutant of the same definition (the likeliest to see a bug
    there), then the others by how many mutants they killed in all.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all: Counter[str] = Counter()
        self._by_definition: dict[str, Counter[str]] = {}

    def order(self, definition: str) -> list[str]:
        with self._lock:
            near = [
                name for name, _ in self._by_definition.get(definition, Counter()).most_common()
            ]
            rest = [name for name, _ in self._all.most_common() if name not in near]
        return near + rest

    def record(self, definition: str, law: str) -> None:
        with self._lock:
            self._all[law] += 1
            self._by_definition.setdefault(definition, Counter())[law] += 1


def _verdict_line(output: str) -> str:
    """The line of the kit's report that says why a mutant was killed."""
    for line in output.splitlines():
        if " FAIL " in f" {line} " and "." in line.split(" ", 1)[0]:
            return " ".join(line.split())
    tail = [line for line in output.splitlines() if line.strip()]
    return tail[-1] if tail else ""


@cache
def _original(module: str) -> str:
    """``module`` as the run found it at its first mutant, whatever happens to it meanwhile.

    A module edited in the repository while a run goes on (a mutant tried by hand, say) must not
    leak into the work directories, where each mutant is undone by writing this text back.
    """
    return (ROOT / module).read_text(encoding="utf-8")


def _run_one(workdir: Path, mutant: Mutant, killers: _Killers) -> dict[str, object]:
    path = workdir / mutant.module
    original = _original(mutant.module)
    try:
        _cosmic_ray("apply", str(path), mutant.operator, str(mutant.occurrence), cwd=workdir)
        mutated = path.read_text(encoding="utf-8")
        diff = "".join(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                mutated.splitlines(keepends=True),
                mutant.module,
                mutant.module,
                n=0,
            )
        )
        outcome = "survived"
        why = ""
        try:
            compile(mutated, str(path), "exec")
        except SyntaxError as error:
            # No import of the module can succeed: every certification fails before any law.
            return _row(mutant, "killed", f"does not compile: {error.msg}", diff)
        component = COMPONENTS[mutant.component]
        for kind, spec in component.targets:
            status, output = _certify(
                workdir, kind, spec, component.timeout, killers.order(mutant.definition)
            )
            if status != 0:
                outcome = "killed"
                why = f"--mcp-{kind}={spec}: exit {status}: {_verdict_line(output)}"
                if (law := _killer(output)) is not None:
                    killers.record(mutant.definition, law)
                break
    finally:
        path.write_text(original, encoding="utf-8")
    return _row(mutant, outcome, why, diff)


def _row(mutant: Mutant, outcome: str, why: str, diff: str) -> dict[str, object]:
    return {
        "key": mutant.key,
        "line": mutant.line,
        "describe": mutant.describe(),
        "outcome": outcome,
        "why": why,
        "diff": diff,
    }


def _run_free(
    free: queue.SimpleQueue[Path], killers: _Killers, mutant: Mutant
) -> dict[str, object]:
    """Run ``mutant`` in a work directory no other thread uses meanwhile."""
    workdir = free.get()
    try:
        return _run_one(workdir, mutant, killers)
    finally:
        free.put(workdir)


def _workdirs(count: int, scratch: Path) -> Iterator[Path]:
    """Work directories, each with a copy of ``mcp_core`` to mutate and one of the kit.

    The kit is copied too (first on the path, as ``mcp_core`` is), so a run certifies every
    mutant with the laws as they were when it started, while the laws are edited meanwhile.
    """
    ignore = shutil.ignore_patterns("__pycache__")
    for number in range(count):
        workdir = scratch / f"worker-{number}"
        shutil.copytree(ROOT / "mcp_core", workdir / "mcp_core", ignore=ignore)
        shutil.copytree(
            ROOT / "conformance" / "mcp_conformance", workdir / "mcp_conformance", ignore=ignore
        )
        (workdir / f"{_ORDER_PLUGIN}.py").write_text(_ORDER_SOURCE, encoding="utf-8")
        # Compiled once with checked hashes: each certification imports instead of compiling,
        # and a mutated module's bytecode no longer matches its source, so it is recompiled.
        compileall.compile_dir(
            workdir,
            quiet=1,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )
        yield workdir


def run(
    components: Sequence[str],
    jobs: int,
    *,
    survivors: bool = False,
    resume: bool = False,
    sample: int | None = None,
    sample_seed: int = 0,
) -> None:
    """Run every mutant in scope of each component; write its results.

    The mutants run in an order shuffled with ``sample_seed``, and the results are written after
    each one: a run interrupted (a time limit, Ctrl-C) keeps what it certified, and since every
    prefix of a shuffled order is a random sample, its score is a sample's, saying so.
    ``survivors``: run again only the last run's survivors not listed as equivalent (after a law
    was sharpened), keeping the other results; the modules must not have changed since.
    ``sample``: run only that many mutants in scope (the first of the shuffled order), for a
    component whose full run takes hours; the score then says it is a sample's.
    ``resume``: go on with a stopped run of the same code and seed, certifying only the mutants
    it had not reached (a run of code that changed since starts over).
    """
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mcp-mutation-") as scratch:
        workdirs = list(_workdirs(jobs, Path(scratch)))
        free: queue.SimpleQueue[Path] = queue.SimpleQueue()
        for workdir in workdirs:
            free.put(workdir)
        for component in components:
            _run_component(
                component,
                jobs,
                free,
                workdirs[0],
                survivors=survivors,
                resume=resume,
                sample=sample,
                sample_seed=sample_seed,
            )


def _resumed(
    component: str, todo: Sequence[Mutant], sample_seed: int
) -> tuple[list[dict[str, object]], list[Mutant]]:
    """The stopped run's results to keep and what is left of ``todo`` (all of it: none to resume)."""
    previous = _load_results(component)
    if previous is None or previous["fingerprint"] != _fingerprint(component):
        return [], list(todo)
    drawn_with = (previous.get("sample") or {}).get("seed", sample_seed)
    if drawn_with != sample_seed:
        message = (
            f"{component}: the run to resume drew its order with seed {drawn_with}; resume "
            f"with --sample-seed {drawn_with}"
        )
        raise UsageError(message)
    kept: list[dict[str, object]] = list(previous["mutants"])
    done = {row["key"] for row in kept}
    # The same seeded order, less what was certified: the run goes on where it stopped.
    return kept, [mutant for mutant in todo if mutant.key not in done]


def _run_component(
    component: str,
    jobs: int,
    free: queue.SimpleQueue[Path],
    first: Path,
    *,
    survivors: bool,
    resume: bool,
    sample: int | None,
    sample_seed: int,
) -> None:
    for kind, spec in COMPONENTS[component].targets:
        status, output = _certify(first, kind, spec, COMPONENTS[component].timeout)
        if status != 0:
            message = f"{component}: the unmutated {spec} is not certified:\n{output}"
            raise UsageError(message)
    every = mutants(component)
    in_scope = [mutant for mutant in every if mutant.outside() is None]
    draw = random.Random(sample_seed)  # noqa: S311 -- a reproducible order, not a secret
    todo = draw.sample(in_scope, len(in_scope))
    if sample is not None:
        todo = todo[:sample]
    kept: list[dict[str, object]] = []
    planned: dict[str, int] | None = None
    if survivors:
        previous = _load_results(component)
        if previous is None or previous["fingerprint"] != _fingerprint(component):
            message = f"{component}: no run of the current code to take survivors from"
            raise UsageError(message)
        planned = previous.get("sample")
        listed = {entry.key for entry in equivalents() if entry.component == component}
        again = {
            row["key"]
            for row in previous["mutants"]
            if row["outcome"] == "survived" and row["key"] not in listed
        }
        kept = [row for row in previous["mutants"] if row["key"] not in again]
        todo = [mutant for mutant in every if mutant.key in again and mutant.outside() is None]
    elif resume:
        kept, todo = _resumed(component, todo, sample_seed)
    started = time.monotonic()
    print(
        f"{component}: {len(todo)} mutants of {len(in_scope)} in scope ({len(every)} in all), "
        f"{jobs} at a time",
        file=sys.stderr,
    )
    rows: list[dict[str, object]] = list(kept)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        killers = _Killers()
        for number, row in enumerate(pool.map(partial(_run_free, free, killers), todo), start=1):
            rows.append(row)
            print(
                f"  [{number}/{len(todo)}, {time.monotonic() - started:.0f} s] "
                f"{row['outcome']}: {row['describe']}",
                file=sys.stderr,
            )
            drawn = planned
            if not survivors and len(rows) < len(in_scope):
                drawn = {"size": len(rows), "seed": sample_seed, "in_scope": len(in_scope)}
            _write_results(component, every, in_scope, rows, drawn)


def _write_results(
    component: str,
    every: Sequence[Mutant],
    in_scope: Sequence[Mutant],
    rows: Sequence[dict[str, object]],
    sample: dict[str, int] | None,
) -> None:
    _results_path(component).write_text(
        json.dumps(
            {
                "component": component,
                "fingerprint": _fingerprint(component),
                "total": len(every),
                "outside": len(every) - len(in_scope),
                "sample": sample,
                "mutants": rows,
            },
            indent=1,
        ),
        encoding="utf-8",
    )


# -- scoring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """A component's figures from its last run."""

    component: str
    total: int
    outside: int
    equivalent: int
    killed: int
    survivors: tuple[str, ...]
    """Survivors not listed as equivalent."""
    ran: int
    """Mutants certified: every one in scope, or a sample of them."""
    sample: Mapping[str, int] | None = None
    """For a sampled run: its size, seed and how many mutants were in scope."""

    @property
    def scored(self) -> int:
        """Mutants that count: run and not equivalent."""
        return self.ran - self.equivalent

    @property
    def ratio(self) -> float:
        """Killed / scored."""
        return self.killed / self.scored if self.scored else 1.0


def score(component: str) -> tuple[Score | None, list[str]]:
    """The component's score and the problems with it (a stale run, unlisted survivors)."""
    results = _load_results(component)
    if results is None:
        return None, [f"{component}: never run (scripts/mutation.py run {component})"]
    problems = []
    if results["fingerprint"] != _fingerprint(component):
        problems.append(
            f"{component}: its modules changed since the last run "
            f"(scripts/mutation.py run {component})"
        )
    listed = {entry.key for entry in equivalents() if entry.component == component}
    rows: list[dict[str, str]] = results["mutants"]
    total, outside = int(results["total"]), int(results["outside"])
    sample: dict[str, int] | None = results.get("sample")
    if not problems:
        # The scope may have narrowed since the run (a definition found outside every promise):
        # score what is in scope now.
        every = mutants(component)
        scope = {mutant.key for mutant in every if mutant.outside() is None}
        rows = [row for row in rows if row["key"] in scope]
        total, outside = len(every), len(every) - len(scope)
        if sample is not None:
            sample = {**sample, "in_scope": len(scope)}
    killed = sum(1 for row in rows if row["outcome"] == "killed")
    survivors = tuple(
        row["describe"] for row in rows if row["outcome"] == "survived" and row["key"] not in listed
    )
    equivalent = sum(1 for row in rows if row["outcome"] == "survived" and row["key"] in listed)
    figures = Score(
        component,
        total,
        outside,
        equivalent,
        killed,
        survivors,
        len(rows),
        sample,
    )
    problems += [f"{component}: survivor not listed as equivalent: {name}" for name in survivors]
    if figures.ratio < THRESHOLD:
        problems.append(
            f"{component}: {figures.ratio:.1%} of {figures.scored} mutants killed, below "
            f"{THRESHOLD:.0%}"
        )
    return figures, problems


def table(scores: Sequence[Score]) -> str:
    """The Markdown table of the scores."""
    lines = [
        "| component | mutants | out of scope | certified | equivalent | killed | score |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {s.component} | {s.total} | {s.outside} | "
        + (
            f"{s.ran} sampled (seed {s.sample['seed']}) of {s.sample['in_scope']}"
            if s.sample
            else f"all {s.ran}"
        )
        + f" | {s.equivalent} | {s.killed} of {s.scored} | {s.ratio:.1%} |"
        for s in scores
    ]
    return "\n".join(lines)


def write_docs(scores: Sequence[Score]) -> None:
    """Put the table between the markers in the kit's README."""
    text = DOCS.read_text(encoding="utf-8")
    before, begin, rest = text.partition(DOCS_BEGIN)
    _, end, after = rest.partition(DOCS_END)
    if not begin or not end:
        message = f"{DOCS} lacks the markers {DOCS_BEGIN} ... {DOCS_END}"
        raise UsageError(message)
    DOCS.write_text(f"{before}{DOCS_BEGIN}\n{table(scores)}\n{DOCS_END}{after}", encoding="utf-8")


# -- command line --------------------------------------------------------------------------------


def _components(names: Sequence[str]) -> list[str]:
    unknown = sorted(set(names) - set(COMPONENTS))
    if unknown:
        message = f"unknown components {unknown}; the components are {sorted(COMPONENTS)}"
        raise UsageError(message)
    return list(names) or list(COMPONENTS)


def _verify() -> int:
    problems = verify()
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{EQUIVALENTS.name}: {len(equivalents())} equivalent mutants, {len(problems)} problems")
    return 1 if problems else 0


def _list(components: Sequence[str]) -> int:
    listed = {(entry.component, entry.key): entry.reason for entry in equivalents()}
    for component in components:
        for mutant in mutants(component):
            reason = mutant.outside()
            equivalent = listed.get((component, mutant.key))
            scope = "in scope"
            if reason:
                scope = f"outside: {reason}"
            elif equivalent:
                scope = f"equivalent: {equivalent}"
            print(f"{component}: {mutant.describe()} [{scope}]")
    return 0


def _stubs(components: Sequence[str]) -> int:
    listed = {(entry.component, entry.key) for entry in equivalents()}
    for component in components:
        results = _load_results(component)
        if results is None:
            continue
        by_key = {mutant.key: mutant for mutant in mutants(component)}
        for row in results["mutants"]:
            mutant = by_key.get(row["key"])
            if row["outcome"] != "survived" or mutant is None or (component, mutant.key) in listed:
                continue
            print(
                f"\n[[equivalent]]\ncomponent = {json.dumps(component)}\n"
                f"module = {json.dumps(mutant.module)}\ndefinition = {json.dumps(mutant.definition)}\n"
                f"operator = {json.dumps(mutant.operator)}\ncode = {json.dumps(mutant.code)}\n"
                + (f"nth = {mutant.nth}\n" if mutant.nth else "")
                + f"# line {mutant.line}:\n# {row['diff'].splitlines()[-1] if row['diff'] else ''}\n"
                + 'reason = ""'
            )
    return 0


def _score(components: Sequence[str], *, docs: bool) -> int:
    scores, problems = [], []
    for component in components:
        figures, found = score(component)
        problems += found
        if figures is not None:
            scores.append(figures)
    print(table(scores))
    for problem in problems:
        print(problem, file=sys.stderr)
    if docs:
        write_docs(scores)
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; return the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("list", "run", "score", "stubs"):
        command = commands.add_parser(name)
        command.add_argument("components", nargs="*")
        if name == "run":
            command.add_argument("--jobs", type=int, default=2)
            command.add_argument("--survivors", action="store_true")
            command.add_argument("--resume", action="store_true")
            command.add_argument("--sample", type=int, default=None, metavar="N")
            command.add_argument("--sample-seed", type=int, default=0, metavar="SEED")
        if name == "score":
            command.add_argument("--docs", action="store_true")
    commands.add_parser("verify")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "verify":
            return _verify()
        components = _components(arguments.components)
        if arguments.command == "list":
            return _list(components)
        if arguments.command == "stubs":
            return _stubs(components)
        if arguments.command == "run":
            run(
                components,
                max(1, arguments.jobs),
                survivors=arguments.survivors,
                resume=arguments.resume,
                sample=arguments.sample,
                sample_seed=arguments.sample_seed,
            )
            return 0
        return _score(components, docs=arguments.docs)
    except UsageError as error:
        print(f"mutation.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
