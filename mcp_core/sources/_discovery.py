"""DiscoverySource: elements from the marked callables of a package's modules, by reference."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import pkgutil
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import ModuleType
from typing import Any, Final, final

import pydantic

from mcp_core.elements import ElementCollection, ElementKind, HandlerRef
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import CompletionMark, ElementMark, marks_of
from mcp_core.sources._diagnostics import SourceDiagnostic
from mcp_core.sources._function import attach_completions, check_unique_refs

__all__ = ["DiscoverySource", "ImportFailure"]

_log = logging.getLogger("mcp_core.sources")

# Frames of a failed import's traceback kept in its record: enough to see the failing line.
_TRACEBACK_FRAMES: Final = 8


@final
@dataclass(frozen=True, slots=True)
class ImportFailure:
    """A module that could not be imported: it was skipped, the rest of the scan stands.

    ``error`` is ``"ExceptionType: message"``; ``traceback`` the last frames of the traceback.
    """

    module: str
    error: str
    traceback: str


@final
@dataclass(frozen=True, slots=True)
class _Found:
    """One marked callable: what to derive from, and the reference that will serve it."""

    function: Callable[..., Any]
    mark: ElementMark
    handler: HandlerRef
    drop_first: bool


@final
@dataclass(slots=True)
class _Scan:
    """What importing the modules found; kept for the life of the source."""

    found: list[_Found] = field(default_factory=list)
    providers: list[tuple[HandlerRef, CompletionMark]] = field(default_factory=list)
    failures: list[ImportFailure] = field(default_factory=list)
    diagnostics: tuple[SourceDiagnostic, ...] = ()
    problem: InvalidElementError | None = None
    kinds: ElementKind = ElementKind.NONE


@final
class DiscoverySource:
    """Imports the modules of ``packages`` and provides the callables marked in them.

    - Modules: each package and every module below it (subpackages walked on the file system),
      in order of module name; ``include`` / ``exclude`` are :func:`fnmatch` patterns on full
      module names (a module is scanned when it matches some ``include`` and no ``exclude``;
      write ``"pkg.tests*"`` to skip a subpackage and everything in it).
    - Callables: module-level functions and callable objects defined in the module (not those it
      imports from elsewhere), and the functions, static and class methods defined in its
      top-level classes, carrying a mark of :func:`~mcp_core.handlers.tool`,
      :func:`~mcp_core.handlers.resource`, :func:`~mcp_core.handlers.resource_template`,
      :func:`~mcp_core.handlers.prompt` or :func:`~mcp_core.handlers.completion`.
    - Handlers are :class:`~mcp_core.elements.HandlerRef` values ``"module:name"`` (a method:
      ``"module:Class.method"``, resolved through the container or by instantiating the class),
      so the collection is serializable and cacheable.
    - A module that fails to import costs only itself: it is logged (logger ``mcp_core.sources``),
      listed by :meth:`import_failures` and reported by :meth:`diagnostics`; a failed package's
      submodules are not attempted.
    - ``provide()`` raises :class:`~mcp_core.errors.InvalidElementError` for a callable marked
      twice (naming both marks) and :class:`~mcp_core.errors.DuplicateElementError` for two
      callables with one ref (naming both modules).

    Modules are imported once, on the first ``kinds()``, ``provide()`` or ``diagnostics()``
    (``kinds()`` needs the marks; it derives nothing); elements are derived on the first
    ``provide()`` and kept.
    """

    __slots__ = ("_collection", "_exclude", "_include", "_lock", "_packages", "_scan")

    def __init__(
        self,
        packages: str | Iterable[str],
        *,
        include: Iterable[str] = ("*",),
        exclude: Iterable[str] = (),
    ) -> None:
        names = (packages,) if isinstance(packages, str) else tuple(packages)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ValueError(
                f"DiscoverySource needs package names such as 'myapp.tools', got {packages!r}"
            )
        include, exclude = _patterns("include", include), _patterns("exclude", exclude)
        # Normalised (sorted, unique): equivalent configurations provide the same elements, and
        # so share a cache key.
        self._packages: Final = tuple(sorted(set(names)))
        self._include: Final = include
        self._exclude: Final = exclude
        self._lock = threading.RLock()
        self._scan: _Scan | None = None
        self._collection: ElementCollection | None = None

    def __repr__(self) -> str:
        options = "" if self._include == ("*",) else f", include={list(self._include)!r}"
        options += f", exclude={list(self._exclude)!r}" if self._exclude else ""
        return f"DiscoverySource({list(self._packages)!r}{options})"

    def kinds(self) -> ElementKind:
        """The kinds of the marked callables (imports the modules once; derives nothing)."""
        return self._scanned().kinds

    async def provide(self) -> ElementCollection:
        """The derived elements, in module order then definition order (derived once, then kept).

        Raises:
            InvalidElementError: a callable is marked twice, cannot be published as marked, or
                a completion mark has no target here.
            DuplicateElementError: two callables define one ref.
        """
        if self._collection is None:
            scan = self._scanned()
            if scan.problem is not None:
                raise scan.problem
            entries = tuple((found.function, found.mark) for found in scan.found)
            completions = attach_completions(entries, scan.providers)
            self._collection = ElementCollection(
                found.mark.derive(
                    found.function,
                    handler=found.handler,
                    completions=completions.get(index),
                    drop_first=found.drop_first,
                )
                for index, found in enumerate(scan.found)
            )
        return self._collection

    def import_failures(self) -> tuple[ImportFailure, ...]:
        """The modules that could not be imported, with their error and traceback summary."""
        return tuple(self._scanned().failures)

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """One ``skipped`` diagnostic per module that could not be imported (recorded at import).

        Reports the scan made so far and never starts one: asking a registry for its diagnostics
        must not import every module a warm cache spared.
        """
        scan = self._scan
        return scan.diagnostics if scan is not None else ()

    def handler_targets(self) -> frozenset[str]:
        """The references of the marked callables and completion providers of the modules.

        Exactly what ``provide()`` can hand out, found by importing and scanning the modules
        (once, as ``kinds()`` does) without deriving anything.
        """
        scan = self._scanned()
        return frozenset(found.handler.target for found in scan.found) | frozenset(
            handler.target for handler, _ in scan.providers
        )

    def cache_inputs(self) -> Mapping[str, object]:
        """Everything besides the modules' code that decides the output, for ``CachedSource``.

        The packages, ``include`` and ``exclude`` (normalised), and the pydantic version (it
        writes the derived schemas). The code itself is not covered: clear the cache, or give
        the ``CachedSource`` a ``key`` naming the release, when the code changes.
        """
        return {
            "packages": list(self._packages),
            "include": list(self._include),
            "exclude": list(self._exclude),
            "pydantic": pydantic.VERSION,
        }

    # -- scanning -------------------------------------------------------------------------------

    def _scanned(self) -> _Scan:
        with self._lock:
            if self._scan is None:
                self._scan = self._run_scan()
            return self._scan

    def _selected(self, module: str) -> bool:
        return any(fnmatchcase(module, p) for p in self._include) and not any(
            fnmatchcase(module, p) for p in self._exclude
        )

    def _run_scan(self) -> _Scan:
        scan = _Scan()
        names: set[str] = set()
        for package in self._packages:
            _walk(package, names, scan.failures)
        failed_packages: list[str] = []
        seen: set[int] = set()
        for name in sorted(names):
            if not self._selected(name) or any(name.startswith(f"{p}.") for p in failed_packages):
                continue
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 -- any import failure costs only that module
                failed_packages.append(name)
                _record_failure(scan.failures, name, exc)
                continue
            for path, obj, function, drop_first in _members(module):
                if id(function) in seen:
                    continue
                seen.add(id(function))
                self._collect(scan, f"{name}:{path}", obj, function, drop_first=drop_first)
        if scan.problem is None:
            try:
                check_unique_refs(((f.function, f.mark) for f in scan.found), where=_defined_in)
            except InvalidElementError as exc:
                scan.problem = exc
        for found in scan.found:
            scan.kinds |= found.mark.kind
        scan.diagnostics = tuple(
            SourceDiagnostic(
                source=repr(self),
                kind="skipped",
                message=f"module {failure.module!r} was skipped: it failed to import ({failure.error})",
            )
            for failure in scan.failures
        )
        return scan

    @staticmethod
    def _collect(
        scan: _Scan, target: str, obj: object, function: Callable[..., Any], *, drop_first: bool
    ) -> None:
        marks = marks_of(obj)
        if not marks:
            return
        handler = HandlerRef(target)
        element_marks = [m for m in marks if isinstance(m, ElementMark)]
        scan.providers.extend((handler, m) for m in marks if isinstance(m, CompletionMark))
        if len(element_marks) > 1 and scan.problem is None:
            scan.problem = InvalidElementError(
                f"{target} is marked twice: {element_marks[0].describe()} and "
                f"{element_marks[1].describe()}; keep one mark"
            )
        if element_marks:
            scan.found.append(_Found(function, element_marks[0], handler, drop_first))


def _patterns(option: str, patterns: Iterable[str]) -> tuple[str, ...]:
    values = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    if not all(isinstance(p, str) and p for p in values):
        raise ValueError(
            f"DiscoverySource {option} takes fnmatch patterns on module names, got {patterns!r}"
        )
    return tuple(sorted(set(values)))


def _defined_in(function: object) -> str:
    module = getattr(function, "__module__", "?")
    qualname = getattr(function, "__qualname__", type(function).__qualname__)
    return f"module {module!r} ({qualname})"


def _record_failure(failures: list[ImportFailure], module: str, exc: BaseException) -> None:
    summary = "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-_TRACEBACK_FRAMES)
    ).rstrip()
    failure = ImportFailure(module=module, error=f"{type(exc).__name__}: {exc}", traceback=summary)
    failures.append(failure)
    _log.warning("DiscoverySource skipped module %r, which failed to import:\n%s", module, summary)


def _walk(package: str, names: set[str], failures: list[ImportFailure]) -> None:
    """Add ``package`` and every module below it to ``names``, reading the file system only.

    Finding a dotted package imports its parent packages (Python cannot locate it otherwise);
    the package itself and its submodules are imported later, one by one, by the scan.
    """
    try:
        spec = importlib.util.find_spec(package)
    except Exception as exc:  # noqa: BLE001 -- a parent package failing to import is one failure
        _record_failure(failures, package, exc)
        return
    if spec is None:
        _record_failure(failures, package, ModuleNotFoundError(f"no module named {package!r}"))
        return
    names.add(package)
    if spec.submodule_search_locations is not None:
        _walk_paths(list(spec.submodule_search_locations), f"{package}.", names)


def _walk_paths(paths: list[str], prefix: str, names: set[str]) -> None:
    for info in sorted(pkgutil.iter_modules(paths, prefix), key=lambda i: i.name):
        names.add(info.name)
        if not info.ispkg:
            continue
        finder = info.module_finder
        find_spec = getattr(finder, "find_spec", None)
        sub = find_spec(info.name) if callable(find_spec) else None
        locations = getattr(sub, "submodule_search_locations", None)
        if locations is not None:
            _walk_paths(list(locations), f"{info.name}.", names)


def _members(module: ModuleType) -> Iterator[tuple[str, object, Callable[..., Any], bool]]:
    """``(path, object as found, function to derive from, drop self/cls)`` for each candidate.

    Only what the module defines: an imported callable belongs to the module that defines it,
    where it is found when that module is scanned.
    """
    name = module.__name__
    for attribute, obj in list(vars(module).items()):
        if inspect.isclass(obj):
            if obj.__module__ != name or obj.__qualname__ != attribute:
                continue
            for member_name, member in vars(obj).items():
                path = f"{attribute}.{member_name}"
                if isinstance(member, staticmethod):
                    yield path, member, member.__func__, False
                elif isinstance(member, classmethod):
                    yield path, member, member.__func__, True
                elif inspect.isfunction(member):
                    yield path, member, member, True
        elif callable(obj) and _defined_in_module(obj, name):
            yield attribute, obj, obj, False


def _defined_in_module(obj: object, module: str) -> bool:
    try:
        return getattr(obj, "__module__", None) == module
    except Exception:  # noqa: BLE001 -- a proxy failing on attribute access is no marked callable
        return False
