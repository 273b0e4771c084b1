"""A package's names imported on first use: the one module ``__getattr__``/``__dir__`` (PEP 562).

Nothing is imported here until a name is asked for: the root package uses it, and every import
there costs the console script time before it can handle Ctrl-C (``mcp_core.cli._main``).
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping, MutableMapping


class LazyNames:
    """``names`` (name → module) of ``package``, imported when first asked for, then kept."""

    __slots__ = ("_names", "_namespace", "_package")

    def __init__(
        self, package: str, names: Mapping[str, str], namespace: MutableMapping[str, object]
    ) -> None:
        self._package = package
        self._names = names
        self._namespace = namespace  # the package's globals(): a name found once is kept there

    def get(self, name: str) -> object:
        """The package attribute ``name``, imported from its module on first use."""
        module = self._names.get(name)
        if module is None:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        import importlib  # noqa: PLC0415 -- see the module docstring

        value: object = getattr(importlib.import_module(module), name)
        self._namespace[name] = value
        return value

    def listed(self) -> list[str]:
        """What ``dir(package)`` shows: what it holds and what it would import."""
        return sorted([*self._namespace, *self._names])
