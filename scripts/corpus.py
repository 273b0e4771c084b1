"""Install the corpus of third-party MCP servers (tests/corpus/servers.toml) from PyPI.

Each server gets its own virtual environment under ``.tools/corpus/<name>/``, with the pinned
requirements of its entry; nothing is copied into the repository. An environment whose recorded
requirements match its entry is kept as it is, so running this again is cheap.

    python scripts/corpus.py install [NAME...]   # all servers, or the ones named
    python scripts/corpus.py list                # what is installed, and where
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "corpus" / "servers.toml"
HOME = ROOT / ".tools" / "corpus"
STAMP = "mcp-core-corpus.json"


def servers() -> dict[str, dict[str, Any]]:
    """The manifest's entries, by name."""
    with MANIFEST.open("rb") as file:
        found: dict[str, dict[str, Any]] = tomllib.load(file)["servers"]
    return found


def install(name: str, entry: dict[str, Any]) -> str:
    """Make ``.tools/corpus/<name>`` hold exactly the entry's requirements; say what was done."""
    where = HOME / name
    stamp = where / STAMP
    wanted = {
        "requirements": entry["requirements"],
        "setup": entry.get("setup"),
        "python": sys.version.split()[0],
    }
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted:
        return f"{name}: up to date"
    shutil.rmtree(where, ignore_errors=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    pip += ["--disable-pip-version-check", *entry["requirements"]]
    done = subprocess.run(pip, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        shutil.rmtree(where, ignore_errors=True)
        raise RuntimeError(f"{name}: pip failed:\n{done.stdout}{done.stderr}")
    setup = entry.get("setup")
    if setup:
        done = subprocess.run(  # noqa: S603 -- the manifest's own command
            [str(where / "bin" / setup[0]), *setup[1:]], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            shutil.rmtree(where, ignore_errors=True)
            raise RuntimeError(f"{name}: its setup failed:\n{done.stdout}{done.stderr}")
    executable = where / "bin" / entry["command"][0]
    if not executable.exists():
        raise RuntimeError(f"{name}: installed, but {executable} does not exist; fix its command")
    stamp.write_text(json.dumps(wanted))
    return f"{name}: installed"


def main() -> int:
    """Run the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install", "list"])
    parser.add_argument("names", nargs="*", help="servers of the manifest (default: all)")
    args = parser.parse_args()
    entries = servers()
    unknown = sorted(set(args.names) - set(entries))
    if unknown:
        parser.error(f"not in {MANIFEST.relative_to(ROOT)}: {', '.join(unknown)}")
    chosen = {name: entries[name] for name in args.names or entries}
    if args.command == "list":
        for name in chosen:
            state = "installed" if (HOME / name / STAMP).is_file() else "missing"
            print(f"{name}: {state} ({HOME / name})")
        return 0
    HOME.mkdir(parents=True, exist_ok=True)
    failed = False
    with ThreadPoolExecutor(max_workers=2) as pool:
        for outcome in pool.map(_attempt, chosen.items()):
            print(outcome)
            failed |= outcome.startswith("FAILED")
    return 1 if failed else 0


def _attempt(item: tuple[str, dict[str, Any]]) -> str:
    try:
        return install(*item)
    except RuntimeError as exc:
        return f"FAILED {exc}"


if __name__ == "__main__":
    sys.exit(main())
