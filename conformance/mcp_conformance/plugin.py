"""The pytest plugin (entry point ``pytest11: mcp_conformance``). Inert without ``--mcp-conformance``.

With it, the plugin resolves the one target (``--mcp-registry``/``--mcp-source``/
``--mcp-wrapper``/``--mcp-server``/``--mcp-visibility``/``--mcp-event-store``/
``--mcp-cache-store``/``--mcp-change-bus`` or the matching ini keys), refuses a target that plays no role
the kit can certify, adds the kit's check files to the session *by path*, collects the law
checks in them whatever the project's ``python_files``/``python_functions``/``python_classes``/
``testpaths`` say, prints (and optionally writes) the per-law report at the end, and makes
pytest exit non-zero unless the verdict is "certified". A failing check shows its one-line
cause, the frames of the target's own code and hypothesis's shrunk reproduction, not the kit's
internals (pytest's ``--tb`` given explicitly restores pytest's own traceback).

Results travel as JSON in each test report's ``user_properties``, so the controller of a
``pytest-xdist`` run aggregates exactly what its workers ran.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import platform
import secrets
import traceback
import warnings
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Final, final

import pytest

from mcp_conformance._laws import TargetKind, laws_for
from mcp_conformance._profiles import PROFILES, ProfileName
from mcp_conformance._session import CHECK_FACTS, LAW_MARK, SESSION, CheckFacts, KitSession
from mcp_conformance._target import SIGNATURES, Target, TargetError, load_target
from mcp_conformance.report import CheckResult, Report, build_report

if TYPE_CHECKING:
    from _pytest.capture import CaptureManager
    from _pytest.terminal import TerminalReporter

    from mcp_conformance._probe import Probed

__all__: list[str] = []

_CHECKS_DIR: Final = Path(__file__).resolve().parent / "_checks"
_TARGET_OPTIONS: Final[dict[TargetKind, tuple[str, str, str]]] = {
    # kind: (command-line flag, ini key, what it names)
    "registry": ("--mcp-registry", "mcp_registry", "a registry"),
    "source": ("--mcp-source", "mcp_source", "a source"),
    "wrapper": ("--mcp-wrapper", "mcp_wrapper", "a source wrapper"),
    "server": ("--mcp-server", "mcp_server", "a server"),
    "visibility": ("--mcp-visibility", "mcp_visibility", "a visibility rule composing others"),
    "event-store": ("--mcp-event-store", "mcp_event_store", "a session event store"),
    "cache-store": ("--mcp-cache-store", "mcp_cache_store", "a cache store"),
    "change-bus": ("--mcp-change-bus", "mcp_change_bus", "a change bus"),
}
_USER_PROPERTY: Final = "mcp_conformance"


def check_files(kind: TargetKind) -> list[Path]:
    """The kit's check modules for a ``kind`` target.

    A check module is ``_checks/<about>_laws.py`` or ``_checks/<about>_<topic>_laws.py``, where
    ``<about>`` is what its laws are about (``source``, ``registry``, ``store``, ``bus``...):
    adding a law is a row in ``LAWS`` and a ``@checks(law_id)`` function in such a module.
    """
    about = {law.about for law in laws_for(kind)}
    return sorted(
        path.resolve()
        for path in _CHECKS_DIR.glob("*_laws.py")
        if path.name.split("_", 1)[0] in about
    )


_CHECK_PATHS: Final = frozenset(path.resolve() for path in _CHECKS_DIR.glob("*_laws.py"))


def pytest_addoption(parser: pytest.Parser) -> None:
    """The kit's switch, its three kinds of target, the profile and the JSON report."""
    group = parser.getgroup("mcp-conformance", "mcp-core conformance kit")
    group.addoption(
        "--mcp-conformance",
        action="store_true",
        default=False,
        help="run the conformance kit against the target given below (or in the ini file)",
    )
    for kind, (flag, ini, what) in _TARGET_OPTIONS.items():
        group.addoption(
            flag,
            metavar="MODULE:FACTORY",
            default=None,
            help=f"certify {what}: a factory `{SIGNATURES[kind]}` (ini: {ini})",
        )
        parser.addini(ini, f"conformance kit: the {kind} factory, `module:factory`", default="")
    group.addoption(
        "--mcp-conformance-profile",
        choices=tuple(PROFILES),
        default="fast",
        help="how hard to look: fast (default; sized for CI) or deep",
    )
    group.addoption(
        "--mcp-conformance-seed",
        metavar="N",
        type=_seed,
        default=None,
        help="the seed examples are drawn from (default: a new one per run, printed for replay)",
    )
    group.addoption(
        "--mcp-conformance-report",
        metavar="PATH",
        default=None,
        help="also write the per-law report as JSON to PATH",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Resolve the target and register the run's certification (inert without the switch)."""
    config.addinivalue_line(
        "markers", f"{LAW_MARK}(law_id): the conformance law a kit check certifies"
    )
    if not config.getoption("mcp_conformance"):
        stray = [
            flag
            for flag, _, _ in _TARGET_OPTIONS.values()
            if config.getoption(_dest(flag)) is not None
        ]
        if stray:
            raise pytest.UsageError(
                f"{stray[0]} does nothing without --mcp-conformance; add it to run the kit"
            )
        return
    session = _kit_session(config)
    config.stash[SESSION] = session
    files = [str(path) for path in check_files(session.target.kind)]
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        # Paths given on the command line run alongside the kit.
        config.args.extend(path for path in files if path not in config.args)
    else:
        # No paths given: the run is the certification, not testpaths or the current directory.
        config.args[:] = files
        # None of the kit's checks uses pytest-asyncio (the kit runs its own event loops), so
        # its warning that the project left the fixture loop scope unset is about nothing here.
        # Filtered before its pytest_configure warns (this hook runs first), for this run only.
        warnings.filterwarnings(
            "ignore",
            message='The configuration option "asyncio_default_fixture_loop_scope" is unset',
            category=pytest.PytestDeprecationWarning,
        )
    config.pluginmanager.register(_Certification(config, session), "mcp_conformance_certification")


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def _kit_session(config: pytest.Config) -> KitSession:
    declared: list[tuple[TargetKind, str, str]] = []
    for kind, (flag, ini, _) in _TARGET_OPTIONS.items():
        from_flag = config.getoption(_dest(flag))
        from_ini = str(config.getini(ini)).strip()
        if from_flag is not None and from_ini:
            raise pytest.UsageError(
                f"the {kind} target is declared twice: {flag}={from_flag} and {ini} = {from_ini} in "
                f"the ini file; keep one (to override the ini key, clear it with -o {ini}=)"
            )
        if from_flag is not None:
            declared.append((kind, from_flag, flag))
        elif from_ini:
            declared.append((kind, from_ini, f"ini {ini}"))
    if not declared:
        flags = ", ".join(f"{flag}=MODULE:FACTORY" for flag, _, _ in _TARGET_OPTIONS.values())
        keys = ", ".join(ini for _, ini, _ in _TARGET_OPTIONS.values())
        raise pytest.UsageError(
            f"--mcp-conformance needs a target, one of {flags} (or the ini keys {keys})"
        )
    if len(declared) > 1:
        named = ", ".join(f"{origin}={spec}" for _, spec, origin in declared)
        raise pytest.UsageError(
            f"the kit certifies one target per run, got {len(declared)}: {named}"
        )
    [(kind, spec, origin)] = declared
    try:
        target = load_target(kind, spec, origin=origin, search=config.invocation_params.dir)
    except TargetError as exc:
        raise pytest.UsageError(f"conformance kit: {exc}") from exc
    profile: ProfileName = config.getoption("mcp_conformance_profile")
    report = config.getoption("mcp_conformance_report")
    seed = _run_seed(config)
    probed = _refuse_or_probe(target)
    progress = None
    if config.get_verbosity() >= 0 and not _is_worker(config):
        progress = _progress(config)
    return KitSession(
        progress=progress,
        target=target,
        profile=PROFILES[profile],
        report_path=config.invocation_params.dir / report if report else None,
        roles=probed.roles,
        optional=probed.optional,
        seed=seed,
    )


def _progress(config: pytest.Config) -> Callable[[str], None]:
    """Progress lines of a running check, on their own lines of the terminal (past capture)."""

    def write(line: str) -> None:
        # Looked up when used: this runs before the terminal reporter is configured.
        reporter: TerminalReporter | None = config.pluginmanager.get_plugin("terminalreporter")
        capture: CaptureManager | None = config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:
            return
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            reporter.ensure_newline()
            reporter.write_line(line)

    return write


_DERANDOMIZED: Final = "derandomized"


def _run_seed(config: pytest.Config) -> int | None:
    """The run's seed: as pinned, or drawn now (None: derandomized)."""
    pinned: int | str | None = config.getoption("mcp_conformance_seed")
    if pinned == _DERANDOMIZED:
        return None
    if isinstance(pinned, int):
        return pinned
    # Drawn once, by the controller: pytest-xdist hands the options to its workers, so every
    # worker of the run draws from the same seed.
    drawn = secrets.randbelow(2**32)
    config.option.mcp_conformance_seed = drawn
    return drawn


def _seed(text: str) -> int | str:
    """``--mcp-conformance-seed``'s value: a whole number from 0 to 2**32 - 1 (or ``derandomized``)."""
    if text == _DERANDOMIZED:
        return text
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        message = f"the seed is a whole number from 0 to {2**32 - 1}, got {text!r}"
        raise argparse.ArgumentTypeError(message)
    return value


def _refuse_or_probe(target: Target) -> Probed:
    """The target's roles and optional protocols; a UsageError when it plays none the kit can certify.

    A target that implements no role would otherwise be "certified" with every law N/A.
    """
    # Imported here: the plugin is imported by every pytest run, the kit or not.
    from mcp_conformance._probe import refusal  # noqa: PLC0415 -- see above

    try:
        probed = refusal(target)
    except Exception as exc:
        raise pytest.UsageError(
            f"conformance kit: {target.describe()}: calling the factory raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if probed.refused:
        raise pytest.UsageError(f"conformance kit: refused {target.describe()}: {probed.refused}")
    return probed


@final
class _Certification:
    """The hooks of one certification run; holds the outcomes collected so far."""

    def __init__(self, config: pytest.Config, session: KitSession) -> None:
        self.config = config
        self.session = session
        self.results: list[CheckResult] = []

    def pytest_report_header(self) -> list[str]:
        """The target, what it claims, and the profile."""
        return [
            f"mcp-conformance: {self.session.target.describe()}",
            f"mcp-conformance: capabilities: {self.session.target.capabilities.describe()}",
            f"mcp-conformance: profile {self.session.profile.describe()}",
            (
                f"mcp-conformance: seed {self.session.seed} "
                f"(replay with --mcp-conformance-seed={self.session.seed})"
                if self.session.seed is not None
                else "mcp-conformance: derandomized (examples depend on each check alone)"
            ),
        ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makeitem(
        self, collector: pytest.Module | pytest.Class, name: str, obj: object
    ) -> pytest.Item | list[pytest.Item] | None:
        """In the kit's own files, collect exactly the law checks, whatever the naming options say."""
        if collector.path.resolve() not in _CHECK_PATHS:
            return None
        marks = getattr(obj, "pytestmark", [])
        if callable(obj) and any(mark.name == LAW_MARK for mark in marks):
            return pytest.Function.from_parent(collector, name=name)
        return []  # helpers and imports of the kit's modules are never tests

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Attach each kit check's outcome to its report, for the controller to aggregate."""
        report = yield
        mark = item.get_closest_marker(LAW_MARK)
        if mark is not None and report.failed and self.config.option.tbstyle == "auto":
            report.longrepr = _concise(call)
        if mark is not None and (report.when == "call" or not report.passed):
            facts = item.stash.get(CHECK_FACTS, CheckFacts())
            result = CheckResult(
                law=str(mark.args[0]),
                nodeid=item.nodeid,
                status="PASS" if report.passed else "FAIL" if report.failed else "N/A",
                detail=_detail(call),
                why=facts.why if report.skipped else "",
                examples=facts.examples,
                duration=report.duration,
            )
            report.user_properties.append((_USER_PROPERTY, result.to_json()))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the outcomes (on the controller of an xdist run, from every worker)."""
        self.results.extend(
            CheckResult.from_json(str(value))
            for name, value in report.user_properties
            if name == _USER_PROPERTY
        )

    def report(self) -> Report:
        """The per-law report from the outcomes collected so far."""
        target, profile = self.session.target, self.session.profile
        return build_report(
            target={
                "kind": target.kind,
                "spec": target.spec,
                "origin": target.origin,
                "capabilities": target.capabilities.describe(),
            },
            profile={
                "name": profile.name,
                "max_examples": profile.max_examples,
                "stateful_step_count": profile.stateful_step_count,
                "seed": self.session.seed,
            },
            versions=_versions(),
            law_ids=[entry.id for entry in laws_for(target.kind)],
            results=self.results,
            covers=_covers(self.session),
            warnings=_warnings(self.session),
        )

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        """Print the per-law table (on the controller only: workers have no complete view)."""
        if _is_worker(self.config) or self.config.option.collectonly:
            return
        report = self.report()
        terminalreporter.write_sep(
            "=", f"mcp conformance: {report.target['kind']} {report.target['spec']}"
        )
        for line in report.table():
            terminalreporter.write_line(line)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Fail the run unless it certifies; write the JSON report, if asked to."""
        if _is_worker(self.config) or self.config.option.collectonly:
            return
        report = self.report()
        if not report.certified and session.exitstatus == pytest.ExitCode.OK:
            # A partial or uncertified run must fail the CI job that runs it.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        path = self.session.report_path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report.to_json() + "\n", encoding="utf-8")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _detail(call: pytest.CallInfo[None]) -> str:
    """The exception and hypothesis's shrunk reproduction (its notes), or the N/A reason."""
    if call.excinfo is None:
        return ""
    error: BaseException = call.excinfo.value
    if isinstance(error, pytest.skip.Exception):
        return error.msg or ""
    notes: list[str] = []
    # Task groups wrap a failure in exception groups; hypothesis notes the outermost one.
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        notes.extend(getattr(error, "__notes__", []))
        error = error.exceptions[0]
    notes = [*getattr(error, "__notes__", []), *notes]
    return "\n".join([f"{type(error).__name__}: {error}", *notes])


# Frames from these are the kit's or its machinery's, never the target's.
_MACHINERY: Final = tuple(
    str(Path(module.__file__).resolve().parent)
    for module in (__import__("pluggy"), __import__("_pytest"))
    if module.__file__
)
_KIT_DIR: Final = str(Path(__file__).resolve().parent)
_LIBRARIES: Final = ("/hypothesis/", "/anyio/", "/asyncio/", "/contextlib.py", "/beartype/")


def _target_frames(error: BaseException) -> list[str]:
    """The traceback of ``error`` in the target's own code, innermost last."""
    frames = traceback.extract_tb(error.__traceback__)
    shown = [
        frame
        for frame in frames
        if not frame.filename.startswith((_KIT_DIR, *_MACHINERY))
        and not any(part in frame.filename for part in _LIBRARIES)
    ]
    return [line.rstrip() for line in traceback.format_list(shown)]


def _concise(call: pytest.CallInfo[None]) -> str:
    """A failing check's report: the cause, the target's frames, the shrunk reproduction."""
    if call.excinfo is None:
        return ""
    error: BaseException = call.excinfo.value
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    cause, *notes = _detail(call).splitlines()
    frames = _target_frames(error)
    cause_frames = _target_frames(error.__cause__) if error.__cause__ is not None else []
    parts = [cause]
    if frames or cause_frames:
        parts += ["", "in the target's code:", *cause_frames, *frames]
    parts += ["", *notes] if notes else []
    parts.append("(kit frames hidden; pass --tb=long for pytest's full traceback)")
    return "\n".join(parts)


_COVERS: Final[dict[TargetKind, tuple[str, ...]]] = {
    "server": ("MCP 2025-11-25 (initialize handshake)", "MCP 2026-07-28 (per request)"),
    "visibility": ("UriVisibility (as a rule composing other rules)",),
    "event-store": ("SessionEventStore",),
    "cache-store": ("CacheStore",),
    "change-bus": ("ChangeBus",),
}
"""What a certificate is about, for the kinds of target whose roles the kit does not probe."""


def _covers(session: KitSession) -> list[str]:
    """What a certificate of this run is about: the roles, or the kind of target."""
    kind = session.target.kind
    if kind == "registry":
        from mcp_conformance._contract import ROLE_NAMES  # noqa: PLC0415 -- cheap plugin import

        return [
            *(
                ROLE_NAMES[role].split(" (")[0]
                for role, status in session.roles.items()
                if status.present
            ),
            *session.optional,
        ]
    if kind in _COVERS:
        return [*_COVERS[kind], *session.optional]
    if kind == "wrapper":
        return ["ElementSource (as a wrapper over healthy sources)", *session.optional]
    return ["ElementSource", *session.optional]


_NO_CANDIDATES: Final = (
    "no resource_candidates(uri) (ResourceCandidates, optional): served by McpServer with a "
    "visibility rule, a URI whose best template is hidden from a session cannot fall back to the "
    "next candidate, and the server fails server.visibility-agrees; implement it before serving "
    "this registry with visibility"
)


def _warnings(session: KitSession) -> list[str]:
    """What a certificate of this run implies downstream that the verdict does not say."""
    if session.target.kind == "registry" and "ResourceCandidates" not in session.optional:
        return [_NO_CANDIDATES]
    return []


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for distribution in (
        "mcp-core-server",
        "pytest-mcp-conformance",
        "mcp",
        "hypothesis",
        "pytest",
        "beartype",
    ):
        try:
            found[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            found[distribution] = "not installed"
    return found
