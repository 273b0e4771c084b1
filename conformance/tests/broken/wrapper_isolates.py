"""Breaks wrapper.isolates: it swallows a failure but forgets the last good collection.

Over a healthy source it is transparent, and when the source raises it reports and logs the
failure as ``IsolatedSource`` does, but it serves an empty collection instead of the last one
the source provided: a registry over it empties the catalogue on every outage.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mcp_conformance import Capabilities
from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.errors import SourceUnavailableError
from mcp_core.sources import ElementSource, SourceDiagnostic

MCP_CONFORMANCE = Capabilities(isolates=True)

_log = logging.getLogger("broken.wrapper_isolates")


class _ForgetsLastGood:
    def __init__(self, inner: ElementSource) -> None:
        self.inner = inner
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()

    def kinds(self) -> ElementKind:
        return self.inner.kinds()

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        return self._diagnostics

    async def provide(self) -> ElementCollection:
        try:
            collection = await self.inner.provide()
        except Exception as exc:  # noqa: BLE001 -- isolating is its purpose
            unavailable = isinstance(exc, SourceUnavailableError)
            diagnostic = SourceDiagnostic(
                source=repr(self.inner),
                kind="unavailable" if unavailable else "failed",
                message=f"{type(exc).__qualname__}: {exc}",
            )
            self._diagnostics = (diagnostic,)
            _log.warning("%s", diagnostic, exc_info=None if unavailable else exc)
            return ElementCollection()  # the bug: the last good collection is not kept
        self._diagnostics = ()
        return collection


def wrap(inner: ElementSource) -> _ForgetsLastGood:
    """``inner`` isolated, without its last good collection."""
    return _ForgetsLastGood(inner)
