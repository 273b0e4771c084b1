"""SourceDiagnostic: what a source, a wrapper or the registry skipped, lost or served stale.

Diagnostics are plain values so that a registry can merge its own with its sources', a server can
log them, and a test can compare them. A source that records diagnostics has the
:class:`~mcp_core.sources.DiagnosticsReport` capability: the state of its most recent
``provide()``, not an ever-growing log (:func:`~mcp_core.sources.diagnostics_of` adds those of
the sources a wrapper wraps).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final, get_args

from mcp_core.elements import ElementRef

__all__ = ["DiagnosticKind", "SourceDiagnostic", "describe_source"]

DiagnosticKind: TypeAlias = Literal["failed", "unavailable", "stale", "skipped", "shadowed"]
"""Why something is missing or old.

- ``failed``: a source raised; it contributes its last good collection or nothing.
- ``unavailable``: a source raised :class:`~mcp_core.errors.SourceUnavailableError`: its backend
  is temporarily unreachable (as opposed to broken).
- ``stale``: an expired cached collection was served because the fresh one could not be had.
- ``skipped``: one element (``ref``) or one cache entry was dropped as invalid; the rest stands.
- ``shadowed``: an element (``ref``) lost a precedence conflict to another source's.
"""

_KINDS: Final = frozenset(get_args(DiagnosticKind))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SourceDiagnostic:
    """One thing a source or registry could not serve as asked, and why.

    ``source`` describes the source concerned (see :func:`describe_source`); ``message`` says what
    happened and, where there is one, what to do; ``ref`` names the element when the diagnostic is
    about one element; ``at`` is the wall-clock time it was recorded (``time.time()``).
    """

    source: str
    kind: DiagnosticKind
    message: str
    ref: ElementRef | None = None
    at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(
                f"SourceDiagnostic.kind must be one of {sorted(_KINDS)}, got {self.kind!r}"
            )

    def __str__(self) -> str:
        about = f" {self.ref}:" if self.ref is not None else ""
        return f"[{self.kind}] {self.source}:{about} {self.message}"


def describe_source(source: object) -> str:
    """A readable description of ``source``, e.g. ``CachedSource(DiscoverySource(['pkg']))``.

    Uses the source's ``__repr__`` (every built-in source and wrapper nests its inner source's);
    a class that kept ``object.__repr__`` is described by its qualified name, without the memory
    address that would make diagnostics differ from run to run.
    """
    cls = type(source)
    if cls.__repr__ is object.__repr__:
        return f"{cls.__module__}.{cls.__qualname__}"
    return repr(source)


def callable_name(function: object) -> str:
    """``module.qualname`` of a function or callable object, for reprs and cache inputs."""
    module = getattr(function, "__module__", None) or type(function).__module__
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{qualname}"
