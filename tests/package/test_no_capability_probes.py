"""No capability is probed by ``getattr``/``hasattr`` in ``mcp_core`` (ADR 0113).

What an object may offer is a runtime-checkable Protocol that mypy checks at every use. The
``getattr``/``hasattr`` calls that remain are of the kinds ADR 0113 lists (Python introspection,
a name the user gave, foreign objects we cannot import, the SDK's private internals reached in
one place each, delegation). This test holds each module to the calls it has, so a new one is a
decision someone makes with the ADR at hand, not a habit creeping back.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parents[2] / "mcp_core"

# module → (number of getattr/hasattr calls, which of ADR 0113's kinds they are)
KNOWN: Final[dict[str, tuple[int, str]]] = {
    "_backoff.py": (1, "own dataclass fields walked by name"),
    "_lazy.py": (1, "delegation: the packages' names imported on first use (PEP 562)"),
    "bridges/_mcpserver.py": (1, "foreign object: an adopted FastMCP's settings"),
    "bridges/_metering.py": (
        3,
        "foreign internals, one guarded place: the event loop's process transport",
    ),
    "bridges/_remote.py": (7, "the SDK's private internals: RemoteSource's tool listing"),
    "cli/_target.py": (13, "a name the user gave: pkg:attr; module introspection"),
    "elements/_collection.py": (2, "Python introspection: __module__, __qualname__"),
    "elements/_definitions.py": (4, "foreign objects (pydantic model_dump); own fields by name"),
    "handlers/_admission.py": (2, "Python introspection"),
    "handlers/_completion.py": (1, "Python introspection"),
    "handlers/_derive.py": (2, "Python introspection"),
    "handlers/_functions.py": (14, "Python introspection: signatures, __wrapped__, __globals__"),
    "handlers/_injection.py": (1, "Python introspection: an annotation's __module__"),
    "handlers/_plan.py": (2, "Python introspection: __call__, __func__"),
    "handlers/_references.py": (6, "Python introspection; a name the user gave"),
    "handlers/_resolve.py": (1, "foreign object: dependency-injector providers"),
    "handlers/_sdk_values.py": (2, "foreign objects: the SDK's values"),
    "handlers/containers.py": (3, "foreign objects: dependency-injector containers"),
    "server/_context.py": (2, "delegation: the SDK's Context"),
    "server/_events.py": (3, "the SDK's private internals, one guarded place"),
    "server/_gateway.py": (1, "the SDK's private internals: connection_of"),
    "sources/_diagnostics.py": (2, "Python introspection: __module__, __qualname__"),
    "sources/_discovery.py": (3, "foreign objects: importlib finders, module attributes"),
    "sources/_marked.py": (3, "Python introspection: marks on the user's functions"),
    "visibility/_combinators.py": (1, "a name the user gave: the handler method a rule names"),
}


def _probes(path: Path) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"getattr", "hasattr"}
    )


def test_each_module_keeps_to_its_known_attribute_lookups() -> None:
    """A module's getattr/hasattr calls are the ones ADR 0113 classified, no more, no fewer."""
    found = Counter(
        {
            path.relative_to(PACKAGE).as_posix(): count
            for path in sorted(PACKAGE.rglob("*.py"))
            if (count := _probes(path))
        }
    )
    expected = Counter({module: count for module, (count, _kind) in KNOWN.items()})
    assert found == expected, (
        "getattr/hasattr calls changed in mcp_core; a capability is a runtime-checkable "
        "Protocol, not a probe (ADR 0113). If the new call is one of the ADR's kinds, record "
        f"it in KNOWN. Differences: more {dict(found - expected)}, fewer {dict(expected - found)}"
    )
