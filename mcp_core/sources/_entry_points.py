"""EntryPointSource: plugins from the installed distributions' entry points of one group."""

from __future__ import annotations

import concurrent.futures
import importlib.metadata
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard, final

import anyio.to_thread

from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.handlers import escapes
from mcp_core.handlers._decorators import ElementMark, marks_of
from mcp_core.sources._diagnostics import SourceDiagnostic
from mcp_core.sources._function import FunctionSource
from mcp_core.sources._items import admit_items, is_item_iterable

__all__ = ["EntryPointSource"]

_log = logging.getLogger("mcp_core.sources")

_FIX: Final = (
    "fix or uninstall the distribution that declares it; the other plugins are served meanwhile"
)

DEFAULT_IMPORT_TIMEOUT: Final = 10.0
"""Seconds one plugin's import may take before it is skipped (it goes on in the background)."""


@final
@dataclass(frozen=True, slots=True)
class _Plugin:
    """One entry point, as read from a distribution's metadata: what identifies it."""

    name: str
    value: str
    distribution: str
    entry: importlib.metadata.EntryPoint = field(compare=False, hash=False)

    @property
    def label(self) -> str:
        return f"entry point {self.name!r} ({self.value}) of {self.distribution}"


@final
class EntryPointSource:
    """Provides the elements of every plugin that installed distributions declare in ``group``.

    The plugin-system case: each distribution (``pip install my-plugin``) declares entry points
    in its metadata, and the server serves whatever is installed::

        # the plugin's pyproject.toml
        [project.entry-points."myapp.mcp"]
        summarize = "myapp_summarize:plugin"

        registry.add_source(EntryPointSource("myapp.mcp", kinds=ElementKind.TOOL))

    An entry point names a plugin: an :class:`~mcp_core.elements.Element`, an
    :class:`~mcp_core.elements.ElementCollection` or iterable of elements, a function marked with
    the decorators of :mod:`mcp_core.handlers` (derived as :class:`FunctionSource` does), or a
    callable taking no arguments (a factory, a class) that returns an element, a collection or an
    iterable of elements and of builders (callables returning one): each item of a factory's
    iterable is admitted alone, so one plugin of a plugin manager that fails to build costs only
    itself (a ``skipped`` diagnostic naming the entry point and the item).

    - Loading: on ``provide()``, the group's entry points are read from the installed metadata
      (so a plugin installed since the last ``provide()`` is found by a reload) and ordered by
      name, then distribution; each is imported and, for a factory, called, once: a loaded plugin
      is kept, so ``provide()`` is idempotent and the plugin's objects live as long as the source.
    - Isolation: a plugin that fails to load — its import raises (a missing dependency, a syntax
      error, ``sys.exit()``: any exception but cancellation, ``KeyboardInterrupt`` and
      ``GeneratorExit``), its factory raises, or it names something that is not a plugin — costs
      only itself: it contributes nothing, a ``skipped`` diagnostic names the entry point, its
      distribution and the error, and the next ``provide()`` tries it again. An element whose ref
      another plugin (earlier in that order) already provides is skipped the same way, naming
      both.
    - Time (ADR 0072): each plugin is imported in a thread of its own, all at once, and the
      load waits for them at most ``import_timeout`` seconds (None: no limit). A plugin whose
      import takes longer (it blocks on the network, a lock, a prompt) is skipped with a
      diagnostic and the others are served; its import goes on in the background (a thread
      cannot be stopped), and a later ``provide()`` serves the plugin once it has finished,
      without importing it twice.
    - ``kinds()`` answers the declared ``kinds`` without loading anything. The default,
      ``ElementKind.ALL``, over-advertises unless you declare what the group's plugins provide; a
      plugin's element outside the declared kinds is skipped by the registry with a diagnostic.
    - There is no ``lookup``: which plugin provides a name is known only once it is loaded. The
      first call loads the group (once); use ``LazySource(factory, lookup=...)`` when names map to
      plugins by a rule of your own.
    """

    __slots__ = ("_diagnostics", "_group", "_importing", "_kinds", "_loaded", "_timeout")

    def __init__(
        self,
        group: str,
        *,
        kinds: ElementKind = ElementKind.ALL,
        import_timeout: float | None = DEFAULT_IMPORT_TIMEOUT,
    ) -> None:
        if not isinstance(group, str) or not group.strip():
            raise ValueError(
                f"EntryPointSource needs an entry-point group name like 'myapp.mcp', got {group!r}"
            )
        if import_timeout is not None and not (
            isinstance(import_timeout, int | float)
            and math.isfinite(import_timeout)
            and import_timeout > 0
        ):
            raise ValueError(
                f"import_timeout must be a positive number of seconds or None, got "
                f"{import_timeout!r}"
            )
        self._group = group
        self._kinds = kinds
        self._timeout = import_timeout
        self._loaded: dict[_Plugin, tuple[ElementCollection, tuple[SourceDiagnostic, ...]]] = {}
        # Imports still running in the background, from an earlier provide() that gave up.
        self._importing: dict[_Plugin, concurrent.futures.Future[object]] = {}
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def __repr__(self) -> str:
        kinds = "" if self._kinds == ElementKind.ALL else f", kinds={self._kinds.label or 'none'}"
        return f"EntryPointSource({self._group!r}{kinds})"

    @property
    def group(self) -> str:
        """The entry-point group read."""
        return self._group

    def kinds(self) -> ElementKind:
        """The declared kinds; never loads a plugin."""
        return self._kinds

    async def provide(self) -> ElementCollection:
        """Every loadable plugin's elements, in plugin order; the rest reported in ``diagnostics()``."""
        diagnostics: list[SourceDiagnostic] = []
        elements: dict[ElementRef, Element] = {}
        owners: dict[ElementRef, _Plugin] = {}
        installed = self._installed()
        # Every import starts now and shares one deadline: blocking plugins cost the load one
        # import_timeout in all, not one each.
        for plugin in installed:
            if plugin not in self._loaded and plugin not in self._importing:
                self._importing[plugin] = _import_in_background(plugin)
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        for plugin in installed:
            loaded = self._loaded.get(plugin)
            if loaded is None:
                try:
                    loaded = await self._load(plugin, deadline)
                except TimeoutError:
                    message = (
                        f"{plugin.label} did not finish importing within {self._timeout:g} s and "
                        "is skipped; its import goes on in the background and a later load "
                        f"serves it if it finishes. Make the plugin's import quick: {_FIX}"
                    )
                    _log.warning("%r: %s", self, message)
                    diagnostics.append(self._diagnostic(message))
                    continue
                except BaseException as exc:
                    if escapes(exc):
                        raise
                    message = f"{plugin.label} failed to load: {type(exc).__name__}: {exc}; {_FIX}"
                    _log.warning("%r: %s", self, message, exc_info=True)
                    diagnostics.append(self._diagnostic(message))
                    continue
                self._loaded[plugin] = loaded
            collection, skipped = loaded
            diagnostics.extend(skipped)
            for element in collection:
                first = owners.get(element.ref)
                if first is not None:
                    diagnostics.append(
                        self._diagnostic(
                            f"{plugin.label} also provides {element.ref}, which {first.label} "
                            "provides first; this one is skipped (rename one of them)",
                            element.ref,
                        )
                    )
                    continue
                owners[element.ref] = plugin
                elements[element.ref] = element
        self._diagnostics = tuple(diagnostics)
        return ElementCollection(elements.values())

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """The plugins (and elements) the last ``provide()`` skipped, and why."""
        return self._diagnostics

    def cache_inputs(self) -> Mapping[str, object]:
        """What the output depends on besides the installed plugins: the group and the kinds."""
        return {"group": self._group, "kinds": self._kinds.label}

    def _installed(self) -> list[_Plugin]:
        found = {
            _Plugin(
                entry.name,
                entry.value,
                entry.dist.name if entry.dist is not None else "an unknown distribution",
                entry,
            )
            for entry in importlib.metadata.entry_points(group=self._group)
        }
        return sorted(found, key=lambda p: (p.name, p.distribution, p.value))

    def _diagnostic(self, message: str, ref: ElementRef | None = None) -> SourceDiagnostic:
        return SourceDiagnostic(source=repr(self), kind="skipped", message=message, ref=ref)

    async def _load(
        self, plugin: _Plugin, deadline: float | None
    ) -> tuple[ElementCollection, tuple[SourceDiagnostic, ...]]:
        """The plugin's import (started by provide()), awaited until ``deadline``, admitted.

        A factory returning several items (a plugin manager's) has each admitted alone: one item
        that cannot be built is skipped with a diagnostic, the plugin's others are served.

        Raises what the import or the plugin raised, or TimeoutError when the import is still
        running at the deadline.
        """
        future = self._importing[plugin]
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            target = await anyio.to_thread.run_sync(
                lambda: future.result(left), abandon_on_cancel=True
            )
        except concurrent.futures.TimeoutError:
            raise TimeoutError from None
        finally:
            if future.done():
                del self._importing[plugin]  # done, one way or the other: retried from scratch
        return await self._collection_of(plugin, target)

    async def _collection_of(
        self, plugin: _Plugin, target: object
    ) -> tuple[ElementCollection, tuple[SourceDiagnostic, ...]]:
        """What an imported plugin names (raising when it names nothing usable)."""
        if _is_marked(target):
            return await FunctionSource(target).provide(), ()
        if callable(target) and not isinstance(target, Element):
            target = target()
        if isinstance(target, Element):
            return ElementCollection([target]), ()
        if isinstance(target, ElementCollection):
            return target, ()
        if not is_item_iterable(target):
            raise TypeError(
                f"a plugin must be (or its factory must return) an Element, an ElementCollection "
                f"or an iterable of Elements (or of builders returning one), or be a function "
                f"marked with @tool/@prompt/@resource; got {type(target).__name__}"
            )
        admitted = await admit_items(target, source=repr(self), owner=plugin.label)
        return admitted.collection, tuple(admitted.diagnostics)


def _import_in_background(plugin: _Plugin) -> concurrent.futures.Future[object]:
    """Start importing ``plugin`` in a daemon thread (one a blocked import cannot keep alive)."""
    future: concurrent.futures.Future[object] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(plugin.entry.load())
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting provide(), which contains it
            future.set_exception(exc)

    threading.Thread(target=run, name=f"import {plugin.value}"[:60], daemon=True).start()
    return future


def _is_marked(target: object) -> TypeGuard[Callable[..., Any]]:
    return callable(target) and any(isinstance(m, ElementMark) for m in marks_of(target))
