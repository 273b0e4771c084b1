"""DiscoverySource: elements from the marked callables of a package's modules, by reference."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import pkgutil
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any, Final, final

import pydantic

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef, HandlerRef
from mcp_core.handlers import escapes
from mcp_core.handlers._decorators import CompletionMark, ElementMark, marks_of
from mcp_core.sources._diagnostics import SourceDiagnostic
from mcp_core.sources._marked import Declarations, Marked, Provider, derive_all

__all__ = ["DiscoverySource", "ImportFailure"]

_log = logging.getLogger("mcp_core.sources")

# Frames of a failed import's traceback kept in its record: enough to see the failing line.
_TRACEBACK_FRAMES: Final = 8


@final
@dataclass(frozen=True, slots=True)
class ImportFailure:
    """A module that could not be imported: it was skipped, the rest of the scan stands.

    ``error`` is ``"ExceptionType: message"``; ``traceback`` the last frames of the traceback;
    ``location`` the ``file:line`` where it failed (empty when unknown).
    """

    module: str
    error: str
    traceback: str
    location: str = ""

    @property
    def at(self) -> str:
        """``" at file:line"``, or nothing when the location is unknown (for messages)."""
        return f" at {self.location}" if self.location else ""


@final
@dataclass(slots=True)
class _Scan:
    """What importing the modules found; kept for the life of the source."""

    found: list[Marked] = field(default_factory=list)
    providers: list[Provider] = field(default_factory=list)
    failures: list[ImportFailure] = field(default_factory=list)
    diagnostics: tuple[SourceDiagnostic, ...] = ()
    kinds: ElementKind = ElementKind.NONE
    declarations: Declarations | None = None


@final
class DiscoverySource:
    """Imports the modules of ``packages`` (or found under ``paths``) and provides the callables marked in them.

    - Modules: each package and every module below it (subpackages walked on the file system),
      in order of module name; ``include`` / ``exclude`` are :func:`fnmatch` patterns on full
      module names (a module is scanned when it matches some ``include`` and no ``exclude``;
      write ``"pkg.tests*"`` to skip a subpackage and everything in it).
    - Paths (``paths=``): directories and ``.py`` files on the file system, the way a framework
      scans its source folders. Every ``.py`` file under a directory (``__pycache__`` and hidden
      folders aside) is a module named by its path relative to ``root`` (``tools/weather.py`` is
      ``tools.weather``; ``root`` defaults to the current directory, and is put on ``sys.path``
      when the scan imports them, so handlers resolve by that name). For these, ``include`` and
      ``exclude`` match the file's path relative to ``root`` (``"tools/*.py"``), and a pattern
      also matches every file below a folder it matches (``exclude=["vendor", "tests"]`` skips
      those folders). A file outside ``root``, or whose name is no module name, is skipped with
      a diagnostic.
    - Callables: module-level functions and callable objects defined in the module (not those it
      imports from elsewhere), and the functions, static and class methods defined in its
      top-level classes, carrying a mark of :func:`~mcp_core.handlers.tool`,
      :func:`~mcp_core.handlers.resource`, :func:`~mcp_core.handlers.resource_template`,
      :func:`~mcp_core.handlers.prompt` or :func:`~mcp_core.handlers.completion`.
    - Handlers are :class:`~mcp_core.elements.HandlerRef` values ``"module:name"`` (a method:
      ``"module:Class.method"``, resolved through the container or by instantiating the class),
      so the collection is serializable and cacheable.
    - A module that fails to import costs only itself: it is listed by :meth:`import_failures`
      (with its traceback) and reported by :meth:`diagnostics` (one line naming the failing
      ``file:line``); a failed package's submodules are not attempted.
    - A broken declaration costs only itself: a callable marked twice, a second callable with an
      already declared ref (the first in module order is kept), a completion provider without
      its target, or a callable that cannot be published as marked is left out with one
      ``skipped`` diagnostic each, naming the element, where it was declared, and the fix.

    Modules are imported once, on the first ``kinds()``, ``lookup()`` or ``provide()``
    (``kinds()`` needs the marks; it derives nothing); ``lookup(ref)`` derives the one callable a
    ref names, ``provide()`` the rest, each once.
    """

    __slots__ = (
        "_collection",
        "_exclude",
        "_include",
        "_lock",
        "_packages",
        "_paths",
        "_root",
        "_scan",
    )

    def __init__(
        self,
        packages: str | Iterable[str] = (),
        *,
        paths: Iterable[str | os.PathLike[str]] = (),
        root: str | os.PathLike[str] | None = None,
        include: Iterable[str] = ("*",),
        exclude: Iterable[str] = (),
    ) -> None:
        names = (packages,) if isinstance(packages, str) else tuple(packages)
        if isinstance(paths, str | os.PathLike):
            paths = (paths,)
        folders = tuple(sorted({Path(p) for p in paths}))
        if not all(isinstance(n, str) and n for n in names) or not (names or folders):
            raise ValueError(
                f"DiscoverySource needs package names such as 'myapp.tools' or paths=[...], "
                f"got {packages!r}"
            )
        self._root: Final = Path(root if root is not None else Path.cwd()).resolve()
        self._paths: Final = tuple(
            (p if p.is_absolute() else self._root / p).resolve() for p in folders
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
        if self._paths:
            shown = [self._relative(p) or "." for p in self._paths]
            options = f", paths={shown!r}{options}"
        return f"DiscoverySource({list(self._packages)!r}{options})"

    def kinds(self) -> ElementKind:
        """The kinds of the marked callables (imports the modules once; derives nothing)."""
        return self._scanned().kinds

    async def lookup(self, ref: ElementRef) -> Element | None:
        """The element ``provide()`` holds at ``ref``, deriving only that callable (or None).

        Imports the modules once, as ``kinds()`` does (the marks are found by importing them).
        """
        return self._declared().lookup(ref)

    async def provide(self) -> ElementCollection:
        """The derived elements, in module order then definition order (derived once, then kept).

        Declarations that cannot be published are left out; see :meth:`diagnostics`.
        """
        if self._collection is None:
            collection, built = await derive_all(self._declared())
            if self._collection is None:
                self._collection = collection
                self._scanned().diagnostics += built
        return self._collection

    def import_failures(self) -> tuple[ImportFailure, ...]:
        """The modules that could not be imported, with their error and traceback summary."""
        return tuple(self._scanned().failures)

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """``skipped``: each module that could not be imported, then each declaration left out.

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
        references = [found.handler for found in scan.found]
        references += [provider.provider for provider in scan.providers]
        return frozenset(ref.target for ref in references if isinstance(ref, HandlerRef))

    def cache_inputs(self) -> Mapping[str, object]:
        """Everything besides the modules' code that decides the output, for ``CachedSource``.

        The packages, ``include`` and ``exclude`` (normalised), and the pydantic version (it
        writes the derived schemas). The code itself is not covered: clear the cache, or give
        the ``CachedSource`` a ``key`` naming the release, when the code changes.
        """
        return {
            "packages": list(self._packages),
            **(
                {"paths": [str(p) for p in self._paths], "root": str(self._root)}
                if self._paths
                else {}
            ),
            "include": list(self._include),
            "exclude": list(self._exclude),
            "pydantic": pydantic.VERSION,
        }

    # -- scanning -------------------------------------------------------------------------------

    def _declared(self) -> Declarations:
        scan = self._scanned()
        with self._lock:
            if scan.declarations is None:
                scan.declarations = Declarations(scan.found, scan.providers, source=repr(self))
            return scan.declarations

    def _scanned(self) -> _Scan:
        with self._lock:
            if self._scan is None:
                self._scan = self._run_scan()
            return self._scan

    def _selected(self, module: str) -> bool:
        return any(fnmatchcase(module, p) for p in self._include) and not any(
            fnmatchcase(module, p) for p in self._exclude
        )

    def _relative(self, path: Path) -> str | None:
        """``path`` relative to the root, in POSIX form; None when it lies outside."""
        try:
            return PurePosixPath(path.relative_to(self._root)).as_posix().removeprefix(".")
        except ValueError:
            return None

    def _path_selected(self, relative: str) -> bool:
        """Whether the file at ``relative`` (to the root) is scanned: patterns match it or a folder above."""
        parts = PurePosixPath(relative).parts
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]

        def matches(patterns: tuple[str, ...]) -> bool:
            return any(fnmatchcase(prefix, p) for p in patterns for prefix in prefixes)

        return matches(self._include) and not matches(self._exclude)

    def _path_modules(self, failures: list[ImportFailure]) -> set[str]:
        """The module names of the selected files under ``paths``; the root goes on sys.path."""
        names: set[str] = set()
        for path in self._paths:
            if not path.exists():
                failures.append(
                    ImportFailure(str(path), "FileNotFoundError: no such file or folder", "")
                )
                continue
            files = [path] if path.is_file() else sorted(path.rglob("*.py"))
            for file in files:
                relative = self._relative(file)
                if relative is None:
                    failures.append(
                        ImportFailure(
                            str(file),
                            f"ValueError: {file} lies outside root {self._root}; "
                            "give DiscoverySource a root= above it",
                            "",
                        )
                    )
                    continue
                parts = PurePosixPath(relative).with_suffix("").parts
                if any(p == "__pycache__" or p.startswith(".") for p in parts):
                    continue
                if not self._path_selected(relative):
                    continue
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                if not parts or not all(p.isidentifier() for p in parts):
                    failures.append(
                        ImportFailure(
                            relative,
                            f"ValueError: {relative} is not importable as a module name; "
                            "rename it (letters, digits and '_') or exclude it",
                            "",
                        )
                    )
                    continue
                names.add(".".join(parts))
        if names and str(self._root) not in sys.path:
            sys.path.insert(0, str(self._root))
            _log.debug("DiscoverySource put %s on sys.path to import its paths", self._root)
        return names

    def _run_scan(self) -> _Scan:
        scan = _Scan()
        names: set[str] = set()
        for package in self._packages:
            _walk(package, names, scan.failures)
        from_paths = self._path_modules(scan.failures) if self._paths else set()
        names |= from_paths
        failed_packages: list[str] = []
        seen: set[int] = set()
        for name in sorted(names):
            selected = name in from_paths or self._selected(name)
            if not selected or any(name.startswith(f"{p}.") for p in failed_packages):
                continue
            # Any import failure (SystemExit at module level too) costs only that module.
            try:
                module = importlib.import_module(name)
            except BaseException as exc:
                if escapes(exc):
                    raise
                failed_packages.append(name)
                _record_failure(scan.failures, name, exc)
                continue
            for path, obj, function, drop_first in _members(module):
                if id(function) in seen:
                    continue
                seen.add(id(function))
                self._collect(scan, f"{name}:{path}", obj, function, drop_first=drop_first)
        for found in scan.found:
            scan.kinds |= found.marks[0].kind
        scan.diagnostics = tuple(
            SourceDiagnostic(
                source=repr(self),
                kind="skipped",
                message=f"module {failure.module!r} was skipped: it failed to import "
                f"({failure.error}{failure.at}); fix it or exclude it",
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
        element_marks = tuple(m for m in marks if isinstance(m, ElementMark))
        scan.providers.extend(
            Provider(provider=handler, mark=m, origin=target)
            for m in marks
            if isinstance(m, CompletionMark)
        )
        if element_marks:
            scan.found.append(Marked(function, element_marks, target, handler, drop_first))


def _patterns(option: str, patterns: Iterable[str]) -> tuple[str, ...]:
    values = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    if not all(isinstance(p, str) and p for p in values):
        raise ValueError(
            f"DiscoverySource {option} takes fnmatch patterns on module names (or, for paths, on "
            f"file paths), got {patterns!r}"
        )
    return tuple(sorted(set(values)))


def _record_failure(failures: list[ImportFailure], module: str, exc: BaseException) -> None:
    summary = "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-_TRACEBACK_FRAMES)
    ).rstrip()
    failure = ImportFailure(
        module=module,
        error=f"{type(exc).__name__}: {exc}",
        traceback=summary,
        location=_failing_line(exc),
    )
    failures.append(failure)
    # Reported once, as a diagnostic, by whoever serves the source; the traceback is for debugging.
    _log.debug("DiscoverySource skipped module %r, which failed to import:\n%s", module, summary)


def _failing_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "importlib" not in f.filename] or frames
    return f"{user[-1].filename}:{user[-1].lineno}" if user else ""


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
