"""The documentation agrees with the command line: every option and default, the first look."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_core.cli._commands import _parser

ROOT = Path(__file__).resolve().parents[2]
SERVING = ROOT / "docs" / "serving.md"
MCP_CORE = Path(sys.executable).with_name("mcp-core")


def commands() -> dict[str, argparse.ArgumentParser]:
    """Each subcommand's parser, by name."""
    (subparsers,) = [
        action for action in _parser()._actions if isinstance(action, argparse._SubParsersAction)
    ]
    return dict(subparsers.choices)


def synopsis() -> str:
    """The synopsis block of docs/serving.md's "The command line" section."""
    section = SERVING.read_text(encoding="utf-8").split("## The command line", 1)[1]
    found = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert found is not None, "docs/serving.md: the command line section has no synopsis"
    return found.group(1)


@pytest.mark.parametrize("command", ["run", "inspect", "dump"])
def test_every_option_is_in_the_synopsis(command: str) -> None:
    """Each option of each command (any of its spellings) is in its synopsis in serving.md."""
    lines = synopsis().split("\nmcp-core ")
    (documented,) = [line for line in lines if line.removeprefix("mcp-core ").startswith(command)]
    options = [
        action.option_strings
        for action in commands()[command]._actions
        if action.option_strings and "--help" not in action.option_strings
    ]
    missing = [
        names[-1]
        for names in options
        if not any(re.search(rf"(^|[\s\[(]){name}\b", documented) for name in names)
    ]
    assert not missing, f"docs/serving.md's synopsis of `mcp-core {command}` lacks {missing}"


def test_every_default_is_shown_in_help() -> None:
    """An option with a default says it in ``--help`` (``%(default)s`` or the word "default")."""
    silent = [
        f"{name} {action.option_strings[0]}"
        for name, parser in commands().items()
        for action in parser._actions
        if action.option_strings
        and action.default not in (None, False, argparse.SUPPRESS)
        and "default" not in (action.help or "")
    ]
    assert not silent, f"these options do not show their default in --help: {silent}"


def test_defaults_in_serving_md_match_the_parser() -> None:
    """serving.md's list of defaults ("`--port 8000`"...) names the parser's own defaults."""
    text = SERVING.read_text(encoding="utf-8")
    run = commands()["run"]
    for action in run._actions:
        default = action.default
        if (
            action.option_strings
            and isinstance(default, str | int)
            and not isinstance(default, bool)
            and default != argparse.SUPPRESS
        ):
            option = action.option_strings[0]
            assert f"`{option} {action.default}`" in text, (
                f"docs/serving.md does not give {option}'s default as `{option} {action.default}`"
            )


def test_the_readme_first_look_starts_clean(tmp_path: Path) -> None:
    """The README's first server, saved as server.py: `inspect --strict` finds nothing to say."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A first look", 1)[1]
    found = re.search(r"```python\n(# server\.py\n.*?)```", section, re.DOTALL)
    assert found is not None, "README.md: the first look has no server.py snippet"
    (tmp_path / "server.py").write_text(found.group(1), encoding="utf-8")
    inspected = subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "inspect", "server.py", "--strict"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert (inspected.returncode, inspected.stderr) == (0, "")
    assert "diagnostics (0):" in inspected.stdout


@pytest.mark.parametrize("spelling", ["debug", "Debug", "DEBUG"])
def test_the_log_level_is_read_in_either_case(spelling: str) -> None:
    """``--log-level debug`` (uvicorn's spelling) is DEBUG, as ``--log-level DEBUG`` is."""
    assert commands()["run"].parse_args(["--log-level", spelling]).log_level == "DEBUG"


def test_an_unknown_log_level_is_refused_with_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A level that is not one of the four names the culprit and the choices."""
    with pytest.raises(SystemExit):
        commands()["run"].parse_args(["--log-level", "verbose"])
    error = capsys.readouterr().err
    assert "--log-level: invalid choice: 'VERBOSE'" in error
    assert "'DEBUG', 'INFO', 'WARNING', 'ERROR'" in error
