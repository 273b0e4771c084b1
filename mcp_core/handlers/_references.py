"""Live handlers as references: what makes an app's catalogue dumpable.

A collection holding live callables has no lossless JSON form; one holding
:class:`~mcp_core.elements.HandlerRef` values does. A module-level function or class *is*
reachable by its import path, so it can be written as one: :func:`reference_to` finds that path
and checks that importing it leads back to the very same object (a function replaced in its
module, defined in a function, or living in a module that cannot be imported again by name has
none). :func:`by_reference` applies it to an element's handler and completion providers.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import inspect
import sys
from types import ModuleType

from mcp_core.elements import Element, HandlerRef

__all__ = ["by_reference", "reference_to"]


def reference_to(obj: object) -> HandlerRef | None:
    """``obj``'s import-path reference (``"pkg.mod:qualname"``), or None when it has none.

    A :class:`HandlerRef` is its own reference. Functions and classes qualify when they are
    defined at module level (or in a module-level class) of a module imported under its own
    name, and ``pkg.mod:qualname`` resolves to ``obj`` itself.
    """
    if isinstance(obj, HandlerRef):
        return obj
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return None
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", "")
    if not module_name or module_name == "__main__" or "<locals>" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None or not _importable(module):
        return None
    found: object = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return HandlerRef(f"{module_name}:{qualname}") if found is obj else None


def _importable(module: ModuleType) -> bool:
    """Whether importing ``module.__name__`` afresh (another process, same path) finds this file.

    A module executed from a file under a made-up name (as a command line loads a script) is
    not: nothing on the path answers to that name.
    """
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if origin is None:
        return False
    if origin in ("frozen", "built-in"):
        return True  # the interpreter's own: importable by name everywhere
    parent_name, _, _ = module.__name__.rpartition(".")
    parent = sys.modules.get(parent_name) if parent_name else None
    search = getattr(parent, "__path__", None) if parent_name else None
    if parent_name and search is None:
        return False
    try:
        found = importlib.machinery.PathFinder.find_spec(module.__name__, search)
    except (ImportError, ValueError):
        return False
    return found is not None and found.origin == origin


def by_reference(element: Element) -> Element:
    """``element`` with its handler and completion providers as references where they have one.

    Whatever has no reference stays live, so the result reports ``is_serializable`` honestly.
    """
    handler = reference_to(element.handler) or element.handler
    completions = element.completions
    if completions:
        completions = {
            name: reference_to(provider) or provider for name, provider in completions.items()
        }
    if handler is element.handler and completions == element.completions:
        return element
    return dataclasses.replace(element, handler=handler, completions=completions)
