"""The plugin: activation, targets, collection that cannot be filtered away, report, xdist, CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcp_conformance.report import main
from mcp_conformance.testing import run_kit

pytest_plugins = ("pytester",)

BROKEN = Path(__file__).resolve().parent
# The kit's runs in these tests: broken targets importable, and pytest-asyncio (not needed by the
# kit) kept out so that its configuration warnings cannot trip the outer `filterwarnings=error`.
BASE = ("-p", "no:asyncio", "-o", f"pythonpath={BROKEN}")
STATIC = "--mcp-source=mcp_conformance.reference.static:source"
SOURCE_LAWS = {
    "source.returns-collection",
    "source.idempotent",
    "source.kinds-cover",
    "source.kinds-without-provide",
    "source.json-roundtrip",
    "source.lookup-agrees",
    "source.handler-targets",
}


def _usage_error(pytester: pytest.Pytester, *args: str) -> str:
    """Run pytest expecting a usage error; return its error output."""
    result = pytester.runpytest_inprocess(*BASE, "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    return result.stderr.str()


class TestActivation:
    """Inert without --mcp-conformance; exactly one target with it."""

    def test_inert_without_the_switch(self, pytester: pytest.Pytester) -> None:
        """A plain run collects the project's tests only and prints no kit header."""
        pytester.makepyfile(test_mine="def test_ok():\n    pass\n")
        result = pytester.runpytest_inprocess(*BASE, "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
        assert "mcp-conformance:" not in result.stdout.str()

    def test_target_flag_without_switch_is_an_error(self, pytester: pytest.Pytester) -> None:
        """--mcp-source alone would silently run nothing of the kit: it is refused."""
        assert "does nothing without --mcp-conformance" in _usage_error(pytester, STATIC)

    def test_switch_without_target_is_an_error(self, pytester: pytest.Pytester) -> None:
        """--mcp-conformance needs something to certify."""
        assert "needs a target" in _usage_error(pytester, "--mcp-conformance")

    def test_flag_and_ini_together_are_rejected(self, pytester: pytest.Pytester) -> None:
        """A target named on the command line and in the ini file is declared twice."""
        pytester.makefile(
            ".ini", pytest="[pytest]\nmcp_source = mcp_conformance.reference.lazy:source\n"
        )
        error = _usage_error(pytester, "--mcp-conformance", STATIC)
        assert "declared twice" in error
        assert "-o mcp_source=" in error

    def test_two_kinds_of_target_are_rejected(self, pytester: pytest.Pytester) -> None:
        """One target per run."""
        error = _usage_error(
            pytester,
            "--mcp-conformance",
            STATIC,
            "--mcp-wrapper=mcp_conformance.reference.isolated:wrap",
        )
        assert "one target per run" in error

    def test_ini_target_alone_is_used(self, pytester: pytest.Pytester) -> None:
        """The ini key names the target when the flag is absent."""
        pytester.makefile(
            ".ini", pytest="[pytest]\nmcp_source = mcp_conformance.reference.static:source\n"
        )
        report = run_kit(pytester, *BASE)
        assert report.target["origin"] == "ini mcp_source"
        assert report.certified


class TestTargets:
    """A target that cannot be used stops the run, naming it and the cause."""

    def test_unimportable_module(self, pytester: pytest.Pytester) -> None:
        """The module and the import error are named."""
        error = _usage_error(pytester, "--mcp-conformance", "--mcp-source=nowhere.at_all:make")
        assert "--mcp-source=nowhere.at_all:make" in error
        assert "ModuleNotFoundError" in error

    def test_missing_attribute(self, pytester: pytest.Pytester) -> None:
        """A factory that the module does not have is named."""
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-source=mcp_conformance.reference.static:nope"
        )
        assert "has no attribute 'nope'" in error

    def test_not_callable(self, pytester: pytest.Pytester) -> None:
        """A constant is not a factory."""
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-registry=mcp_conformance.reference:TARGETS"
        )
        assert "not a callable" in error

    def test_wrong_signature(self, pytester: pytest.Pytester) -> None:
        """A source factory cannot serve as a wrapper: the contract signature is quoted."""
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-wrapper=mcp_conformance.reference.static:source"
        )
        assert "cannot be called as wrap(inner: ElementSource)" in error

    def test_malformed_spec(self, pytester: pytest.Pytester) -> None:
        """A target needs module:factory."""
        assert "package.module:factory" in _usage_error(
            pytester, "--mcp-conformance", "--mcp-source=static"
        )

    def test_raising_factory_is_refused_with_the_cause(self, pytester: pytest.Pytester) -> None:
        """A factory that raises is no empty pass: the run stops, naming the cause."""
        pytester.makepyfile(
            kit_down_factory="def make_source():\n    raise RuntimeError('no database')\n"
        )
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-source=kit_down_factory:make_source"
        )
        assert "calling the factory raised RuntimeError: no database" in error

    def test_header_shows_target_capabilities_and_profile(self, pytester: pytest.Pytester) -> None:
        """The pytest header says what is certified, what it claims and how hard the kit looks."""
        result = pytester.runpytest_inprocess(
            *BASE,
            "--mcp-conformance",
            "--mcp-wrapper=mcp_conformance.reference.prefixed:wrap",
            "--co",
        )
        header = result.stdout.str()
        assert (
            "mcp-conformance: wrapper mcp_conformance.reference.prefixed:wrap (from --mcp-wrapper)"
            in header
        )
        assert "capabilities: transparent=False, relation=renamed (prefixing renames" in header
        assert "profile fast (50 examples, 30 steps)" in header
        assert re.search(r"seed (\d+) \(replay with --mcp-conformance-seed=\1\)", header)

    def test_deep_profile_is_selected(self, pytester: pytest.Pytester) -> None:
        """--mcp-conformance-profile=deep is what the header reports."""
        result = pytester.runpytest_inprocess(
            *BASE, "--mcp-conformance", STATIC, "--mcp-conformance-profile=deep", "--co"
        )
        assert "profile deep (1000 examples, 80 steps)" in result.stdout.str()


class TestSeed:
    """A new seed every run unless pinned; the report prints it, and pinning it replays the run."""

    def test_seed_varies_unless_pinned(self, pytester: pytest.Pytester) -> None:
        """Two runs draw two seeds; --mcp-conformance-seed fixes it, and the report shows it."""
        first = run_kit(pytester, *BASE, STATIC)
        second = run_kit(pytester, *BASE, STATIC)
        assert first.profile["seed"] != second.profile["seed"]
        pinned = run_kit(pytester, *BASE, STATIC, "--mcp-conformance-seed=12345")
        assert pinned.profile["seed"] == 12345

    def test_pinned_seed_replays_a_failure(self, pytester: pytest.Pytester) -> None:
        """The same seed finds the same counterexample; the table says how to replay it."""
        target = "--mcp-source=broken.source_flaky:make_source"
        runs = [
            run_kit(pytester, *BASE, target, "--mcp-conformance-seed=7", "-k", "idempotent")
            for _ in range(2)
        ]
        assert runs[0].law("source.idempotent").detail == runs[1].law("source.idempotent").detail
        assert "seed: 7 (replay: --mcp-conformance-seed=7)" in runs[0].table()

    def test_a_bad_seed_is_a_usage_error(self, pytester: pytest.Pytester) -> None:
        """A seed that is no whole number in range names the range."""
        result = pytester.runpytest_inprocess(
            *BASE, "--mcp-conformance", STATIC, "--mcp-conformance-seed=-3"
        )
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "the seed is a whole number from 0 to 4294967295" in result.stderr.str()

    def test_xdist_workers_share_the_run_seed(self, pytester: pytest.Pytester) -> None:
        """Unpinned under -n 2, the controller draws one seed and every worker uses it."""
        spread = run_kit(pytester, *BASE, STATIC, "-n", "2", subprocess=True)
        assert spread.certified
        assert isinstance(spread.profile["seed"], int)


class TestCollection:
    """The project's own collection settings cannot filter the kit away."""

    def test_naming_options_and_testpaths_cannot_filter_the_kit(
        self, pytester: pytest.Pytester
    ) -> None:
        """python_files/python_functions/python_classes/testpaths that match nothing of the kit."""
        pytester.makefile(
            ".ini",
            pytest=(
                "[pytest]\npython_files = check_*.py\npython_functions = check_*\n"
                "python_classes = Check*\ntestpaths = nowhere\n"
            ),
        )
        report = run_kit(pytester, *BASE, STATIC)
        assert {row.law for row in report.laws if row.status == "PASS"} == SOURCE_LAWS

    def test_no_paths_means_the_certification_alone(self, pytester: pytest.Pytester) -> None:
        """Without paths, neither testpaths nor the current directory is collected."""
        pytester.makepyfile(
            test_mine="def test_mine():\n    raise AssertionError('not collected')\n"
        )
        result = pytester.runpytest_inprocess(*BASE, "--mcp-conformance", STATIC)
        result.assert_outcomes(passed=len(SOURCE_LAWS))

    def test_explicit_paths_run_alongside(self, pytester: pytest.Pytester) -> None:
        """Paths given on the command line run with the kit."""
        pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
        result = pytester.runpytest_inprocess(*BASE, "--mcp-conformance", STATIC, "test_mine.py")
        result.assert_outcomes(passed=len(SOURCE_LAWS) + 1)

    def test_deselected_laws_are_not_run(self, pytester: pytest.Pytester) -> None:
        """-k leaves the other laws NOT RUN, which is not certified."""
        report = run_kit(pytester, *BASE, STATIC, "-k", "idempotent")
        assert report.law("source.idempotent").status == "PASS"
        assert report.law("source.kinds-cover").status == "NOT RUN"
        assert not report.certified


class TestReport:
    """The JSON report and its command-line gate."""

    def test_json_report_contents(self, pytester: pytest.Pytester) -> None:
        """Target, versions, profile, per-law status and counts."""
        path = pytester.path / "out" / "report.json"
        pytester.runpytest_inprocess(
            *BASE, "--mcp-conformance", STATIC, f"--mcp-conformance-report={path}"
        )
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["target"]["spec"] == "mcp_conformance.reference.static:source"
        assert set(document["versions"]) >= {
            "python",
            "mcp-core-server",
            "pytest-mcp-conformance",
            "mcp",
            "hypothesis",
        }
        assert document["profile"] == {
            "name": "fast",
            "max_examples": 50,
            "stateful_step_count": 30,
            "seed": document["profile"]["seed"],
        }
        assert document["counts"] == {"PASS": len(SOURCE_LAWS), "FAIL": 0, "N/A": 0, "NOT RUN": 0}
        # StaticSource has lookup(ref) and handler_targets(): the certificate covers the optional
        # ElementLookup and HandlerTargets too.
        assert (document["verdict"], document["covers"]) == (
            "certified",
            ["ElementSource", "ElementLookup", "HandlerTargets"],
        )
        assert [row["law"] for row in document["laws"]] == sorted(
            SOURCE_LAWS,
            key=[
                "source.returns-collection",
                "source.idempotent",
                "source.kinds-cover",
                "source.kinds-without-provide",
                "source.json-roundtrip",
                "source.lookup-agrees",
                "source.handler-targets",
            ].index,
        )

    def test_gate_exit_status(
        self, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The report gate exits 0 for a certified report, 1 otherwise."""
        good = run_kit(pytester, *BASE, STATIC)
        bad = run_kit(pytester, *BASE, "--mcp-source=broken.source_idempotent:make_source")
        assert good.certified
        assert not bad.certified
        paths = sorted(str(path) for path in pytester.path.glob("conformance-report-*.json"))
        assert main(paths[:1]) == 0
        assert main(paths) == 1
        assert "source.idempotent             FAIL" in capsys.readouterr().out

    def test_failure_detail_carries_the_shrunk_reproduction(
        self, pytester: pytest.Pytester
    ) -> None:
        """A FAIL row holds hypothesis's minimal failing example."""
        report = run_kit(
            pytester, *BASE, "--mcp-wrapper=broken.wrapper_transparent:wrap", "-k", "transparent"
        )
        detail = report.law("wrapper.transparent").detail
        assert detail.startswith("LawViolation: wrap(s) does not provide what s provides: missing")
        assert "Failing test case: wrapper_transparent(" in detail


class TestEnvironment:
    """Same results under pytest-xdist, and whatever hypothesis profile CI loads."""

    def test_same_report_under_xdist(self, pytester: pytest.Pytester) -> None:
        """-n 2 ships every worker's outcomes to the controller: the report does not change."""
        target = "--mcp-source=broken.source_idempotent:make_source"
        alone = run_kit(pytester, *BASE, target, "--mcp-conformance-seed=3")
        spread = run_kit(
            pytester, *BASE, target, "--mcp-conformance-seed=3", "-n", "2", subprocess=True
        )
        assert [(row.law, row.status) for row in spread.laws] == [
            (row.law, row.status) for row in alone.laws
        ]
        assert spread.law("source.idempotent").detail == alone.law("source.idempotent").detail

    def test_ci_does_not_change_the_kits_settings(
        self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With CI=true hypothesis loads its ci profile (100 examples); the kit still runs 50."""
        run = (
            "--mcp-registry=mcp_core.registry:Registry",
            "-k",
            "registry_lazy",
            "--mcp-conformance-seed=5",
        )
        monkeypatch.delenv("CI", raising=False)
        local = run_kit(pytester, *BASE, *run, subprocess=True)
        monkeypatch.setenv("CI", "true")
        ci = run_kit(pytester, *BASE, *run, subprocess=True)
        assert ci.profile == local.profile
        assert ci.profile["max_examples"] == 50
        assert ci.law("registry.lazy").examples == local.law("registry.lazy").examples == 50


class TestVerdict:
    """pytest's exit status is the certificate: non-zero for anything short of "certified"."""

    def test_certified_run_exits_zero(self, pytester: pytest.Pytester) -> None:
        """Every law PASSes: exit 0, and the last line says certified."""
        result = pytester.runpytest_inprocess(
            *BASE, "-p", "no:cacheprovider", "--mcp-conformance", STATIC
        )
        assert result.ret == pytest.ExitCode.OK
        assert "- certified" in result.stdout.str()

    def test_subset_is_partial_and_fails(self, pytester: pytest.Pytester) -> None:
        """-k: the laws that passed certify nothing; the job fails."""
        result = pytester.runpytest_inprocess(
            *BASE, "-p", "no:cacheprovider", "--mcp-conformance", STATIC, "-k", "idempotent"
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert "partial: not a certificate" in result.stdout.str()

    def test_absent_role_fails_the_job(self, pytester: pytest.Pytester) -> None:
        """A role missing without a declaration is N/A (absent): not certified, exit 1."""
        result = pytester.runpytest_inprocess(
            *BASE,
            "-p",
            "no:cacheprovider",
            "--mcp-conformance",
            "--mcp-registry=broken.registry_catalog_only:make_registry",
            "-k",
            "honest_kinds or templates",
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert "[absent]" in result.stdout.str()

    def test_no_role_at_all_is_refused(self, pytester: pytest.Pytester) -> None:
        """An object() is no registry: refused up front, naming what was looked for."""
        pytester.makepyfile(kit_hollow_object="def make_registry(sources):\n    return object()\n")
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-registry=kit_hollow_object:make_registry"
        )
        assert "refused" in error
        assert "plays neither ElementCatalog" in error

    def test_every_role_declared_away_is_refused(self, pytester: pytest.Pytester) -> None:
        """Declaring every role False leaves nothing to certify: refused, not certified."""
        pytester.makepyfile(
            kit_hollow_declared=(
                "from mcp_conformance import Capabilities\n"
                "from mcp_core.registry import Registry\n"
                "MCP_CONFORMANCE = Capabilities(catalog=False, resolver=False, writer=False,\n"
                "    deferred=False, change_events=False, reason='nothing')\n"
                "def make_registry(sources):\n    return Registry(sources)\n"
            )
        )
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-registry=kit_hollow_declared:make_registry"
        )
        assert "refused" in error
        assert "(found: no role)" in error

    def test_server_without_lowlevel_is_refused(self, pytester: pytest.Pytester) -> None:
        """A server factory must return something with the SDK's low-level server."""
        pytester.makepyfile(
            kit_no_server="def make_server(sources, *, visibility, page_size):\n    return object()\n"
        )
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-server=kit_no_server:make_server"
        )
        assert "not the SDK's low-level mcp.server.lowlevel.Server" in error

    def test_half_a_cache_store_is_refused(self, pytester: pytest.Pytester) -> None:
        """A cache-store factory's object must have every CacheStore method; the missing are named."""
        pytester.makepyfile(
            kit_half_store=(
                "class S:\n    async def get(self, key):\n        return None\n"
                "    async def set(self, key, value, *, ttl=None):\n        pass\n"
                "def make_cache_store(*, clock):\n    return S()\n"
            )
        )
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-cache-store=kit_half_store:make_cache_store"
        )
        assert "has no delete(), delete_prefix(): it is not a CacheStore" in error

    def test_a_bus_that_cannot_subscribe_is_refused(self, pytester: pytest.Pytester) -> None:
        """A change-bus factory's object must publish, subscribe and report health."""
        pytester.makepyfile(
            kit_half_bus=(
                "class B:\n    async def publish(self, keys, *, origin):\n        pass\n"
                "def make_change_bus():\n    return B()\n"
            )
        )
        error = _usage_error(
            pytester, "--mcp-conformance", "--mcp-change-bus=kit_half_bus:make_change_bus"
        )
        assert "has no subscribe(), health(): it is not a ChangeBus" in error

    def test_live_handlers_are_certified_without_a_declaration(
        self, pytester: pytest.Pytester
    ) -> None:
        """A correct source with live handlers is certified; the report says roundtrip is N/A."""
        pytester.makepyfile(
            kit_live_handlers=(
                "from mcp_conformance.reference import _app\n"
                "from mcp_core.sources import FunctionSource\n"
                "def make_source():\n    return FunctionSource(_app.add, _app.review)\n"
            )
        )
        report = run_kit(pytester, *BASE, "--mcp-source=kit_live_handlers:make_source")
        row = report.law("source.json-roundtrip")
        assert (row.status, row.why) == ("N/A", "live-handlers")
        assert report.verdict == "certified"

    def test_wrong_kinds_type_is_named(self, pytester: pytest.Pytester) -> None:
        """kinds() returning a string is named as such, not as "no elements"."""
        pytester.makepyfile(
            kit_stringly_kinds=(
                "from mcp_conformance.reference._example import example_collection\n"
                "class S:\n    def kinds(self):\n        return 'tool'\n"
                "    async def provide(self):\n        return example_collection()\n"
                "def make_source():\n    return S()\n"
            )
        )
        report = run_kit(pytester, *BASE, "--mcp-source=kit_stringly_kinds:make_source")
        assert (
            "kinds() returned str, which is not ElementKind"
            in report.law("source.returns-collection").detail
        )
        assert "kinds() returned str, not an ElementKind" in report.law("source.kinds-cover").detail

    def test_failures_hide_kit_frames(self, pytester: pytest.Pytester) -> None:
        """A FAIL shows its cause and shrunk steps, not tracebacks through the kit."""
        result = pytester.runpytest_inprocess(
            *BASE,
            "-p",
            "no:cacheprovider",
            "--mcp-conformance",
            "--mcp-registry=broken.registry_precedence:make_registry",
            # The state machine's law alone (not registry.templates' tie rule, a property) and a
            # fixed draw: what is shown is under test here, not whether this run finds the fault.
            "--mcp-conformance-seed=derandomized",
            "-k",
            "registry_precedence",
        )
        out = result.stdout.str()
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert "state.build(" in out
        assert "kit frames hidden" in out
        assert "_machine.py" not in out
