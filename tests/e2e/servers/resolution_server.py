"""A server for per-name resolution: prefixed lazy plugins (counted), a cached discovery, ties.

``SEAM_CACHE`` names the SQLite file of the discovery cache; the end-to-end tests fill it first.
"""

from __future__ import annotations

import functools
import os
import sys

from mcp_core.app import App
from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.handlers import (
    prompt_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.registry import Priority
from mcp_core.sources import (
    CachedSource,
    DiscoverySource,
    LazySource,
    PrefixedSource,
    StaticSource,
)
from mcp_core.stores import SqliteStore

BUILT = {"alpha": 0, "beta": 0}

# Answered per name: a call builds only what it names, so nothing is loaded at startup.
app = App("seam-resolution", preload=False)


def _plugin(name: str) -> ElementCollection:
    """Build one plugin's elements: what a plugin manager does when it loads a plugin."""
    BUILT[name] += 1

    def hello() -> str:
        return f"hello from {name}"

    def greet(who: str) -> str:
        return f"{name} greets {who}"

    return ElementCollection(
        [
            tool_from_function(hello, description=f"The {name} plugin says hello."),
            prompt_from_function(greet, description=f"The {name} plugin greets."),
        ]
    )


for plugin in ("alpha", "beta"):
    lazy = LazySource(
        functools.partial(_plugin, plugin), kinds=ElementKind.TOOL | ElementKind.PROMPT
    )
    app.add_source(PrefixedSource(lazy, plugin), Priority.DEFAULT)

# The deployment's shared cache secret: entries another process wrote are trusted (and their
# recorded kinds used) only when authenticated by it (docs/security.md).
CACHE_SECRET = b"seam-deployment-cache-secret"

app.add_source(
    CachedSource(
        DiscoverySource(["seam_plugins"]),
        SqliteStore(os.environ["SEAM_CACHE"]),
        key="seam",
        secret=CACHE_SECRET,
    ),
    Priority.DISCOVERY,
)


def _document(source: str) -> Element:
    def read(**variables: str) -> str:
        return f"{source}: {sorted(variables.values())}"

    template = "seam://doc/{aa}" if source == "low" else "seam://doc/{zz}"
    return resource_template_from_function(read, template, name=f"doc_{source}")


# Equally specific templates; the low-priority one is added first and sorts first by text, so
# only precedence picks the high-priority one.
app.add_source(StaticSource(ElementCollection([_document("low")])), -10)
app.add_source(StaticSource(ElementCollection([_document("high")])), 10)


@app.tool
def built() -> dict[str, int]:
    """How many times each plugin was built."""
    return dict(BUILT)


@app.tool
def imported() -> list[str]:
    """The modules of the discovered package imported so far."""
    return sorted(name for name in sys.modules if name.split(".")[0] == "seam_plugins")
