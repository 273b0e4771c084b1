"""mcp-core as a Unix tool: signals, closed pipes, one-line errors, "serving at" once bound.

Every test runs the real console script (or ``python server.py``) as a subprocess, as a user's
shell or process manager would.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pty
import re
import selectors
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import httpx2
import pytest
from mcp import Client

import mcp_core
from tests.e2e._http import ForwardedSession

ROOT = Path(__file__).resolve().parents[2]
MCP_CORE = str(Path(sys.executable).with_name("mcp-core"))
SERVING = re.compile(r"^mcp-core: serving (?P<name>\S+) at (?P<url>http://\S+)$")

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era client APIs

# Each stopping signal, and the exit status it gives: 128 + its number.
STOPPING = pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
)

SERVER = """
    from mcp_core import App

    app = App("demo")


    @app.tool
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b


    if __name__ == "__main__":
        app.run(transport="http", port=0)
"""


def write(folder: Path, name: str, source: str) -> Path:
    """A module file in ``folder``."""
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _as_in_a_terminal() -> None:
    # A test runner's worker may ignore SIGINT, and children inherit that: a command typed in a
    # terminal has it at the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(command: Sequence[str], *, ignore_sigint: bool = False) -> subprocess.Popen[str]:
    """A subprocess with text pipes, its SIGINT as a shell's foreground (or background) job has it."""
    return subprocess.Popen(  # noqa: S603 -- our own console script or interpreter
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=_as_in_a_terminal,  # noqa: PLW1509 -- only resets a signal disposition
    )


def read_line(process: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The next line of the process's stderr; fails if none comes (the process died or hung).

    Read in a thread: a line may already wait in the pipe's buffer, read with the one before it,
    where waiting on the pipe itself would not see it.
    """
    stderr = process.stderr
    assert stderr is not None
    with concurrent.futures.ThreadPoolExecutor(1) as reader:
        reading = reader.submit(stderr.readline)
        try:
            line = reading.result(timeout)
        except concurrent.futures.TimeoutError:
            process.kill()  # ends the read
            pytest.fail(f"no line on stderr within {timeout} s")
    if not line:
        pytest.fail(f"stderr closed; exit status {process.wait(timeout=30)}")
    return line.rstrip("\n")


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for the process; its exit status and the rest of its stderr."""
    _, err = process.communicate(timeout=60)
    return process.returncode, err


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    """The README's first example, serving on any free port when run as a script."""
    return write(tmp_path, "server.py", SERVER)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started; any still running at its end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


class TestSignals:
    """SIGINT and SIGTERM end a server cleanly: one goodbye line, then a status.

    128 + the signal over stdio; 0 over HTTP, which drains (``test_drain.py``).
    """

    @STOPPING
    async def test_http(
        self,
        sig: signal.Signals,
        status: int,
        server_file: Path,
        processes: list[subprocess.Popen[str]],
    ) -> None:
        """Over HTTP, with a client connected (its SSE stream open), the server stops cleanly."""
        process = start([MCP_CORE, "run", str(server_file), "--transport", "http", "--port", "0"])
        processes.append(process)
        serving = SERVING.match(read_line(process))
        assert serving is not None
        async with Client(serving["url"], mode="legacy") as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
            process.send_signal(sig)
            returncode, err = finish(process)
        # Over HTTP a stop drains (ADR 0095): the open stream ends, nothing is cut, status 0.
        assert (status, returncode) == (status, 0)
        assert err == f"mcp-core: stopped serving demo ({sig.name}, drained)\n"

    @STOPPING
    def test_stdio(
        self,
        sig: signal.Signals,
        status: int,
        server_file: Path,
        processes: list[subprocess.Popen[str]],
    ) -> None:
        """Over stdio, in the middle of a session, the server stops cleanly."""
        process = start([MCP_CORE, "run", str(server_file)])
        processes.append(process)
        assert process.stdin is not None
        assert process.stdout is not None
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        process.stdin.write(json.dumps(initialize) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["result"]["serverInfo"] == {"name": "demo", "version": mcp_core.__version__}
        process.send_signal(sig)
        returncode, err = finish(process)
        assert returncode == status
        assert err == f"mcp-core: stopped serving demo ({sig.name})\n"

    @STOPPING
    def test_inspect_interrupted(
        self,
        sig: signal.Signals,
        status: int,
        tmp_path: Path,
        processes: list[subprocess.Popen[str]],
    ) -> None:
        """A command stopped before it is done says so in one line (here: while importing)."""
        slow = write(
            tmp_path, "slow.py", "import time\nprint('importing', flush=True)\ntime.sleep(60)\n"
        )
        process = start([MCP_CORE, "inspect", str(slow)])
        processes.append(process)
        assert process.stdout is not None
        assert process.stdout.readline() == "importing\n"
        process.send_signal(sig)
        returncode, err = finish(process)
        assert (returncode, err) == (status, f"mcp-core: stopped ({sig.name})\n")


# The console script as pip writes it, behind an audit hook that sends the process SIGINT as it
# starts importing MODULE: a point early in its life, the same on a fast machine and a slow one.
INTERRUPTED_SCRIPT = """
import os, sys

def interrupt(event, args):
    if event == "import" and args[0] == MODULE and not sent:
        sent.append(MODULE)
        os.kill(os.getpid(), 2)  # SIGINT, without importing signal here

if MODULE in sys.modules:
    sys.exit(f"{MODULE} is loaded as Python starts here: pick a module the entry imports itself")
sent = []
sys.addaudithook(interrupt)
sys.argv = ["mcp-core", *ARGV]
from mcp_core.cli import main
sys.exit(main())
"""


class TestEarlyInterrupt:
    """Ctrl-C while mcp-core starts (importing the SDK, the target...) is as quiet as later."""

    @pytest.mark.parametrize(
        "module",
        [
            "signal",  # what the entry's own module needs (and not at its top: see _main.py)
            "mcp_core.cli._commands",  # the commands, which main() imports
            "mcp",  # the SDK
            "mcp_core.app",
            "uvicorn",
            "helpers",  # while the target's own code runs: it imports this module
        ],
    )
    def test_one_line_whenever_it_comes(self, module: str, tmp_path: Path) -> None:
        """Each interrupted start ends with the goodbye line and 130, no traceback."""
        write(tmp_path, "helpers.py", "GREETING = 'hello'\n")
        server_file = write(tmp_path, "server.py", "import helpers\n" + textwrap.dedent(SERVER))
        argv = ["run", str(server_file), "--transport", "http", "--port", "0"]
        script = INTERRUPTED_SCRIPT.replace("MODULE", repr(module)).replace("ARGV", repr(argv))
        result = subprocess.run(  # noqa: S603 -- this interpreter, running mcp-core's entry
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=server_file.parent,
            preexec_fn=_as_in_a_terminal,
        )
        assert (result.returncode, result.stderr) == (130, "mcp-core: stopped (SIGINT)\n")


# A server script that sends itself SIGINT at the first audit EVENT ("*": any) once app.run()
# is called: the moments before the server's own signal handling is in place.
INTERRUPTED_APP_RUN = """
import os, sys

armed = []

def interrupt(event, args):
    if armed and EVENT in ("*", event):
        armed.clear()
        os.kill(os.getpid(), 2)  # SIGINT

sys.addaudithook(interrupt)
from mcp_core import App

app = App("demo")
armed.append(True)
app.run(transport="http", port=0)
"""


class TestEarlyInterruptOfAppRun:
    """``python server.py``: a Ctrl-C as ``app.run()`` starts is as quiet as later."""

    @pytest.mark.parametrize(
        "event",
        [
            "*",  # the first thing app.run() does
            "socket.__new__",  # the event loop making its wake-up sockets
        ],
    )
    def test_one_line_whenever_it_comes(self, event: str, tmp_path: Path) -> None:
        """The goodbye line and status 0 (app.run returns), no traceback."""
        script = write(tmp_path, "server.py", INTERRUPTED_APP_RUN.replace("EVENT", repr(event)))
        result = subprocess.run(  # noqa: S603 -- this interpreter, running the user's script
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            preexec_fn=_as_in_a_terminal,
        )
        assert (result.returncode, result.stderr) == (
            0,
            "mcp-core: stopped serving demo (SIGINT)\n",
        )


class TestServingLine:
    """The "serving ... at" line comes once the socket is bound, from the CLI and app.run() alike."""

    async def test_port_zero_names_the_real_port(
        self, server_file: Path, processes: list[subprocess.Popen[str]]
    ) -> None:
        """With --port 0 the line carries the port the system chose, and it answers."""
        process = start([MCP_CORE, "run", str(server_file), "--transport", "http", "--port", "0"])
        processes.append(process)
        serving = SERVING.match(read_line(process))
        assert serving is not None
        assert serving["name"] == "demo"
        assert not serving["url"].endswith(":0/mcp")
        async with Client(serving["url"]) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["add"]
        process.send_signal(signal.SIGTERM)
        assert finish(process)[0] == 0  # drained: nothing was cut

    def test_port_taken(self, server_file: Path) -> None:
        """A taken port is one line naming it and the fix, and nothing claims to be serving."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = subprocess.run(  # noqa: S603 -- our own console script
                [MCP_CORE, "run", str(server_file), "--transport", "http", "--port", str(port)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        assert result.returncode == 1
        assert result.stderr == (
            f"mcp-core: cannot listen on 127.0.0.1:{port}: the address is already in use; choose "
            "another port, or stop the server using it (--port 0 picks a free one)\n"
        )

    async def test_app_run(self, server_file: Path, processes: list[subprocess.Popen[str]]) -> None:
        """``python server.py`` (the README's ``app.run``) says the same line, and stops cleanly."""
        process = start([sys.executable, str(server_file)])
        processes.append(process)
        serving = SERVING.match(read_line(process))
        assert serving is not None
        async with Client(serving["url"]) as client:
            assert client.server_info is not None
            assert client.server_info.version == mcp_core.__version__
        process.send_signal(signal.SIGINT)
        returncode, err = finish(process)
        # app.run() returns after a signal, as uvicorn.run does: the script then ends normally.
        assert (returncode, err) == (0, "mcp-core: stopped serving demo (SIGINT, drained)\n")


class TestStdioInATerminal:
    """Over stdio a server waits for a client on stdin: typed in a terminal, it says so."""

    @staticmethod
    def line(screen: BinaryIO, pid: int) -> str:
        """The next line on the terminal; fails (killing the child) if none comes in 60 s."""
        with selectors.DefaultSelector() as selector:
            selector.register(screen, selectors.EVENT_READ)
            if not selector.select(60):
                os.kill(pid, signal.SIGKILL)
                pytest.fail("nothing on the terminal within 60 s")
        return screen.readline().decode()

    def test_one_line_then_the_goodbye(self, server_file: Path) -> None:
        """On a terminal: the line saying why nothing happens and how to get a URL."""
        pid, terminal = pty.fork()
        if pid == 0:  # the child: mcp-core on the terminal's stdin, stdout and stderr
            _as_in_a_terminal()
            os.chdir(server_file.parent)
            os.execv(MCP_CORE, [MCP_CORE, "run", str(server_file)])  # noqa: S606
        with os.fdopen(terminal, "rb", buffering=0) as screen:
            said = self.line(screen, pid)
            os.kill(pid, signal.SIGINT)
            said += self.line(screen, pid)
            status = os.waitstatus_to_exitcode(
                os.waitpid(pid, 0)[1]
            )  # before the terminal hangs up
        assert status == 130
        assert said.replace("\r\n", "\n") == (
            "mcp-core: serving demo over stdio: it waits for an MCP client on stdin, and a "
            "terminal is none; to connect a client by URL, serve over HTTP (--transport http, or "
            'app.run("http")). Ctrl-C stops it.\n'
            "mcp-core: stopped serving demo (SIGINT)\n"
        )


class TestEdgeFlags:
    """--max-sessions-per-client and --trusted-proxy reach the HTTP edge."""

    async def test_sessions_per_client_behind_a_trusted_proxy(
        self, server_file: Path, processes: list[subprocess.Popen[str]]
    ) -> None:
        """One session per client: a client's second reclaims its first; another client's stays.

        Clients are told apart by the X-Forwarded-For the trusted proxy (127.0.0.1) adds.
        """
        command = [MCP_CORE, "run", str(server_file), "--transport", "http", "--port", "0"]
        process = start(
            [*command, "--max-sessions-per-client", "1", "--trusted-proxy", "127.0.0.1"]
        )
        processes.append(process)
        serving = SERVING.match(read_line(process))
        assert serving is not None
        url = serving["url"]
        async with httpx2.AsyncClient(timeout=30) as http:
            first = ForwardedSession(url, http, forwarded="192.0.2.1")
            await first.open()
            other = ForwardedSession(url, http, forwarded="192.0.2.2")
            await other.open()
            second = ForwardedSession(url, http, forwarded="192.0.2.1")
            await second.open()
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            statuses = [
                (await http.post(url, json=ping, headers=session.headers())).status_code
                for session in (first, other, second)
            ]
        assert statuses == [404, 200, 200]
        process.send_signal(signal.SIGTERM)
        finish(process)


class TestLogFormat:
    """``mcp-core run`` and ``python server.py`` (``app.run()``) log the same lines."""

    def test_same_lines_either_way(
        self, tmp_path: Path, processes: list[subprocess.Popen[str]]
    ) -> None:
        """A startup warning reads the same from both launch modes."""
        source = SERVER.replace(
            'if __name__ == "__main__":',
            'app.discover("no_such_package_xyz")\n\n\n    if __name__ == "__main__":',
        )
        server_file = write(tmp_path, "server.py", source)
        logged = []
        for command in (
            [MCP_CORE, "run", str(server_file), "--transport", "http", "--port", "0"],
            [sys.executable, str(server_file)],
        ):
            process = start(command)
            processes.append(process)
            lines = [read_line(process), read_line(process)]  # the warning, the serving line
            process.send_signal(signal.SIGINT)
            finish(process)
            logged.append([line for line in lines if not line.startswith("mcp-core: serving")])
        via_cli, via_script = logged
        assert via_cli == via_script
        (warning,) = via_cli
        assert warning.startswith("WARNING mcp_core.registry: ")
        assert "no_such_package_xyz" in warning


class TestClosedPipe:
    """A reader that goes away (``| head -1``) ends the command quietly."""

    def test_inspect_into_a_closed_pipe(self) -> None:
        """Inspect, writing into a pipe nobody reads ends with 141 and says nothing."""
        reader, writer = os.pipe()
        os.close(reader)
        try:
            result = subprocess.run(  # noqa: S603 -- our own console script
                [MCP_CORE, "inspect", str(ROOT / "examples" / "everything.py")],
                stdout=writer,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                check=False,
            )
        finally:
            os.close(writer)
        assert (result.returncode, result.stderr) == (141, "")

    def test_head(self) -> None:
        """``mcp-core inspect ... --json | head -1``: the first line, and no traceback."""
        result = subprocess.run(  # noqa: S602 -- a fixed pipeline, as a user types it
            f"{MCP_CORE} inspect {ROOT / 'examples' / 'everything.py'} --json | head -1",
            shell=True,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (result.returncode, result.stdout, result.stderr) == (0, "{\n", "")


class TestImportFailures:
    """A target whose code fails shows the user's own frames, then one line: where and why."""

    def run(self, path: Path) -> subprocess.CompletedProcess[str]:
        """``mcp-core inspect path``, finished."""
        return subprocess.run(  # noqa: S603 -- our own console script
            [MCP_CORE, "inspect", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def test_missing_dependency(self, tmp_path: Path) -> None:
        """An import the user's code makes fails: their line, and how to fix it."""
        path = write(tmp_path, "needs.py", "import os\nimport no_such_dependency_xyz\n")
        result = self.run(path)
        assert result.returncode == 2
        assert result.stderr == (
            "Traceback (most recent call last):\n"
            f'  File "{path}", line 2, in <module>\n'
            "    import no_such_dependency_xyz\n"
            "ModuleNotFoundError: No module named 'no_such_dependency_xyz'\n"
            "mcp-core: cannot import "
            f"{path}: ModuleNotFoundError at needs.py, line 2: No module named "
            f"'no_such_dependency_xyz'; install it where mcp-core runs ({sys.executable}), or "
            "fix the import\n"
        )

    def test_resource_without_uri(self, tmp_path: Path) -> None:
        """``@app.resource`` without a URI: the user's decorator line, none of mcp-core's frames."""
        source = """
            from mcp_core import App

            app = App("demo")


            @app.resource
            def config() -> str:
                return "{}"
        """
        path = write(tmp_path, "nouri.py", source)
        result = self.run(path)
        assert result.returncode == 2
        lines = result.stderr.splitlines()
        assert lines[:3] == [
            "Traceback (most recent call last):",
            f'  File "{path}", line 7, in <module>',
            "    @app.resource",
        ]
        assert "mcp_core" not in result.stderr.replace(f"{path}", "")
        assert "importlib" not in result.stderr
        assert lines[-1] == (
            f"mcp-core: cannot import {path}: TypeError at nouri.py, line 7: @resource takes the "
            "resource's URI: write @resource('scheme://...'); fix it and run again"
        )

    def test_error_in_an_imported_module(self, tmp_path: Path) -> None:
        """A module the target imports fails: both of the user's frames, importlib's left out."""
        write(tmp_path, "helper.py", "def broken():\n    return 1 / 0\n\nVALUE = broken()\n")
        path = write(tmp_path, "uses.py", "import helper\n")
        result = self.run(path)
        assert result.returncode == 2
        frames = [line for line in result.stderr.splitlines() if line.startswith("  File ")]
        assert frames == [
            f'  File "{path}", line 1, in <module>',
            f'  File "{tmp_path / "helper.py"}", line 4, in <module>',
            f'  File "{tmp_path / "helper.py"}", line 2, in broken',
        ]
        assert result.stderr.splitlines()[-1] == (
            f"mcp-core: cannot import {path}: ZeroDivisionError at helper.py, line 2: division "
            "by zero; fix it and run again"
        )

    def test_syntax_error(self, tmp_path: Path) -> None:
        """A syntax error points at the line, with Python's own caret."""
        path = write(tmp_path, "typo.py", "x = 1\ndef f(:\n    pass\n")
        result = self.run(path)
        assert result.returncode == 2
        assert f'File "{path}", line 2' in result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1] == (
            f"mcp-core: cannot import {path}: SyntaxError at typo.py, line 2: invalid syntax; "
            "fix it and run again"
        )

    def test_module_target(self, tmp_path: Path) -> None:
        """A module target (``pkg.mod``) whose code fails is reported the same way."""
        write(tmp_path, "failing_target_mod.py", "raise RuntimeError('no config found')\n")
        result = subprocess.run(  # noqa: S603 -- our own console script
            [MCP_CORE, "inspect", "failing_target_mod"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1] == (
            "mcp-core: cannot import failing_target_mod: RuntimeError at failing_target_mod.py, "
            "line 1: no config found; fix it and run again"
        )


class TestMistakes:
    """Other mistakes a user makes on the command line: one line each, with the fix."""

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``mcp-core *args``, finished."""
        return subprocess.run(  # noqa: S603 -- our own console script
            [MCP_CORE, *args], capture_output=True, text=True, timeout=60, check=False
        )

    def test_folder_target(self, tmp_path: Path) -> None:
        """A folder is not a target: name the file in it that builds a server."""
        write(tmp_path, "helpers.py", "def helper() -> int:\n    return 1\n")
        write(tmp_path, "notes.py", SERVER)
        result = self.cli("inspect", str(tmp_path))
        assert result.returncode == 2
        assert result.stderr == (
            f"mcp-core: {tmp_path} is a folder; name a Python file in it, such as "
            f"{tmp_path / 'notes.py'}, or a module (pkg.mod)\n"
        )

    def test_empty_folder_target(self, tmp_path: Path) -> None:
        """A folder without Python files: suggest no file that does not exist."""
        result = self.cli("run", str(tmp_path))
        assert (result.returncode, result.stderr) == (
            2,
            (
                f"mcp-core: {tmp_path} is a folder; it holds no Python file; name a server file "
                "(path/to/server.py) or a module (pkg.mod)\n"
            ),
        )

    def test_collection_file_as_target(self, server_file: Path) -> None:
        """``mcp-core run catalog.json`` points at ``--collection``, which serves it."""
        catalog = server_file.with_name("catalog.json")
        assert self.cli("dump", str(server_file), "-o", str(catalog)).returncode == 0
        result = self.cli("run", str(catalog))
        assert (result.returncode, result.stderr) == (
            2,
            (
                f"mcp-core: {catalog} is not a Python file; name a server file (path/to/server.py) "
                f"or a module (pkg.mod); a collection written by `mcp-core dump` is served with "
                f"`mcp-core run --collection {catalog}` (CollectionFileSource in code)\n"
            ),
        )
        inspected = self.cli("inspect", "--collection", str(catalog), "--json")
        assert inspected.returncode == 0, inspected.stderr
        report = json.loads(inspected.stdout)
        assert [tool["name"] for tool in report["elements"]["Tools"]] == ["add"]
        assert [s["source"] for s in report["sources"]] == [
            f"CollectionFileSource({str(catalog)!r})"
        ]
        assert report["problems"] == []  # server:add imports from the file's folder

    @pytest.mark.parametrize("extra", [[], ["--collection", "catalog.json"]], ids=["none", "both"])
    def test_target_or_collection(self, server_file: Path, extra: list[str]) -> None:
        """``run`` takes exactly one of TARGET and ``--collection``: a usage error names both."""
        target = [str(server_file)] if extra else []
        result = self.cli("run", *target, *extra)
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1] == (
            "mcp-core: error: run takes a TARGET or --collection FILE: mcp-core run server.py, "
            "or mcp-core run --collection catalog.json"
        )

    def test_missing_collection_file(self, tmp_path: Path) -> None:
        """A collection file that does not exist: how to write one."""
        missing = tmp_path / "catalog.json"
        result = self.cli("run", "--collection", str(missing))
        assert (result.returncode, result.stderr) == (
            2,
            (
                f"mcp-core: no such file: {missing}; write one with "
                f"`mcp-core dump server.py -o {missing}`\n"
            ),
        )

    def test_page_size(self, server_file: Path) -> None:
        """A page size below 1 is a usage error, before anything is imported."""
        result = self.cli("run", str(server_file), "--page-size", "0")
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1] == (
            "mcp-core run: error: argument --page-size: expected a whole number of at least 1, "
            "got '0'"
        )

    def test_trusted_proxy_is_an_address(self, server_file: Path) -> None:
        """A trusted proxy named by host name is a usage error naming the flag and the fix."""
        result = self.cli("run", str(server_file), "--trusted-proxy", "haproxy.local")
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1] == (
            "mcp-core run: error: argument --trusted-proxy: expected the IP address the proxy "
            "connects from (e.g. 127.0.0.1), got 'haproxy.local'"
        )

    def test_dump_to_a_missing_folder(self, tmp_path: Path) -> None:
        """Dumping into a folder that does not exist names the file and the reason."""
        source = """
            from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
            from mcp_core.registry import Registry
            from mcp_core.sources import StaticSource

            tool = Tool(name="cwd", description="The folder.", input_schema={"type": "object"})
            element = Element(definition=tool, handler=HandlerRef("os:getcwd"))
            server = Registry([(StaticSource(ElementCollection([element])), 0)])
        """
        target = write(tmp_path, "refs.py", source)
        output = tmp_path / "missing" / "catalog.json"
        result = self.cli("dump", str(target), "-o", str(output))
        assert (result.returncode, result.stderr) == (
            1,
            f"mcp-core: cannot write {output}: No such file or directory\n",
        )
