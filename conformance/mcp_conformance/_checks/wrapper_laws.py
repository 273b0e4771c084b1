"""Wrapper laws: what ``wrap(s)`` provides and advertises, over healthy and failing sources.

Over failing inner sources only where the wrapper claims to isolate failures (``isolates``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from hypothesis import strategies as st

from mcp_conformance._checks._subjects import (
    Subject,
    for_each_subject,
    inner_contents,
    kinds_of,
    provide,
)
from mcp_conformance._contract import LawViolation
from mcp_conformance._diff import diff_collections
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance.faults import MutableSource
from mcp_core.elements import ElementCollection, ElementKind, ElementRef
from mcp_core.errors import SourceError, SourceUnavailableError
from mcp_core.sources import SourceDiagnostic


@checks("wrapper.transparent")
def test_wrapper_transparent(kit: Kit) -> None:
    """wrap(s) provides exactly what s provides (or what its declared relation says)."""
    capabilities = kit.capabilities
    relation = capabilities.relation
    if not capabilities.transparent and relation is None:
        kit.not_applicable(
            f"not claimed (transparent=False): {capabilities.reason}", why="declared"
        )

    async def body(subject: Subject) -> None:
        assert subject.inner is not None  # noqa: S101 -- wrapper targets always have an inner source
        content = subject.inner.content
        expected = relation(content) if relation is not None else content
        got = await provide(subject.source)
        if got != expected:
            what = "the declared relation of" if relation is not None else "what"
            raise LawViolation(
                f"wrap(s) does not provide {what} s provides: {diff_collections(expected, got)}"
            )

    for_each_subject(kit, body, name="wrapper_transparent")


@checks("wrapper.kinds")
def test_wrapper_kinds(kit: Kit) -> None:
    """wrap(s).kinds() advertises nothing its inner source (or declared relation) cannot provide."""
    relation = kit.capabilities.relation
    wrong = ""

    async def body(subject: Subject) -> None:
        nonlocal wrong
        assert subject.inner is not None  # noqa: S101 -- wrapper targets always have an inner source
        inner = subject.inner.kinds()
        bound = inner
        if relation is not None:
            bound |= kinds_of(relation(subject.inner.content)) or ElementKind.NONE
        advertised = subject.source.kinds()  # type: ignore[attr-defined]  # duck-typed target
        if not isinstance(advertised, ElementKind):
            wrong = f"wrap(s).kinds() returned {type(advertised).__qualname__}, not an ElementKind"
            return  # source.returns-collection fails for it
        if advertised & ~bound:
            raise LawViolation(
                f"wrap(s).kinds() is {advertised.label}, advertising {(advertised & ~bound).label} "
                f"that s (kinds() = {inner.label or 'none'}) cannot provide"
            )

    for_each_subject(kit, body, name="wrapper_kinds")
    if wrong:
        kit.not_applicable(
            f"{wrong}, so there is nothing to compare (see source.returns-collection)"
        )


class _Abort(BaseException):
    """Not an ``Exception``: what cancellation and interpreter exits look like to a wrapper."""


class _SourceBugError(Exception):
    """An exception class of the source's own."""


_FAILURES: Final[dict[str, Callable[[], BaseException]]] = {
    "SourceUnavailableError": lambda: SourceUnavailableError("kit: the backend is down"),
    "SourceError": lambda: SourceError("kit: the manifest is corrupt"),
    "RuntimeError": lambda: RuntimeError("kit: unexpected state"),
    "ValueError": lambda: ValueError("kit: bad value"),
    "KeyError": lambda: KeyError("kit-key"),
    "ConnectionResetError": lambda: ConnectionResetError(104, "kit: connection reset"),
    "TimeoutError": lambda: TimeoutError("kit: timed out"),
    "its own Exception subclass": lambda: _SourceBugError("kit: a bug of the source's own"),
    "ExceptionGroup": lambda: ExceptionGroup(
        "kit: two failures", [OSError("kit: disk"), ValueError("kit: parse")]
    ),
    "BaseException": lambda: _Abort("kit: not an Exception"),
}
"""One of each class of failure a source may raise, by name, built afresh for each raise."""

_STEPS: Final = st.lists(
    st.one_of(
        inner_contents().map(lambda drawn: ("heal", drawn[0])),
        st.sampled_from(sorted(_FAILURES)).map(lambda name: ("fail", name)),
    ),
    min_size=1,
    max_size=6,
)
"""What s does on each ``provide()``: heal with new content, or raise a failure."""


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@checks("wrapper.isolates")
def test_wrapper_isolates(kit: Kit) -> None:
    """Over a failing s, wrap(s) serves its last good collection and reports the failure."""
    capabilities = kit.capabilities
    if not capabilities.isolates:
        kit.not_applicable(
            "not claimed (Capabilities(isolates=True) claims it for a wrapper that isolates "
            "its inner source's failures)",
            why="declared",
        )
    relation = capabilities.relation

    def expected(content: ElementCollection) -> ElementCollection:
        return relation(content) if relation is not None else content

    async def body(
        drawn: tuple[
            tuple[ElementCollection, ElementKind],
            list[tuple[str, ElementCollection] | tuple[str, str]],
        ],
    ) -> None:
        (content, extra), steps = drawn
        inner = MutableSource(content, kinds=content.kinds | extra)
        wrapper = kit.target.factory(inner)
        last_good: ElementCollection | None = None
        # s is down from the start (nothing good yet), then does what the steps say.
        for step, argument in [("fail", "SourceUnavailableError"), *steps]:
            if step == "heal":
                assert isinstance(argument, ElementCollection)  # noqa: S101 -- drawn so
                inner.content, inner.fail_with = argument, None
                got = await provide(wrapper)
                last_good = expected(argument)
                if got != last_good:
                    raise LawViolation(
                        "after its inner source recovered, wrap(s) does not provide what s "
                        f"provides: {diff_collections(last_good, got)}"
                    )
                reported = _diagnostics(wrapper)
                if reported:
                    raise LawViolation(
                        f"after its inner source recovered, wrap(s) still reports {reported!r}"
                    )
                continue
            assert isinstance(argument, str)  # noqa: S101 -- drawn so
            error = _FAILURES[argument]()
            inner.fail_with = error
            await _check_failing(wrapper, inner, error, last_good)

    kit.given(st.tuples(inner_contents(), _STEPS), body, name="wrapper_isolates")


async def _check_failing(
    wrapper: object, inner: MutableSource, error: BaseException, last_good: ElementCollection | None
) -> None:
    what = f"{type(error).__qualname__}({error})"
    if not isinstance(error, Exception):
        try:
            await provide(wrapper)
        except _Abort:
            return
        raise LawViolation(
            f"wrap(s).provide() swallowed {what}, which is not an Exception: cancellation and "
            "exits must propagate"
        )
    with _logged() as records:
        try:
            got = await provide(wrapper)
        except Exception as exc:  # whatever escapes is the violation
            raise LawViolation(
                f"wrap(s).provide() raised {type(exc).__qualname__}: {exc} when s raised {what}; "
                "it claims to isolate its inner source's failures"
            ) from exc
    fallback = last_good if last_good is not None else ElementCollection()
    served = "its last good collection" if last_good is not None else "an empty collection"
    if got != fallback:
        raise LawViolation(
            f"while s raises {what}, wrap(s) must provide {served}: "
            f"{diff_collections(fallback, got)}"
        )
    _check_diagnostic(wrapper, error, what)
    _check_log(records, error, "provide()")
    await _check_lookup(wrapper, inner, error, fallback, served)


@contextmanager
def _logged() -> Iterator[list[logging.LogRecord]]:
    """The warnings (and worse) logged anywhere while the block runs."""
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)


def _check_log(records: list[logging.LogRecord], error: Exception, call: str) -> None:
    """A swallowed failure is logged as a warning, a failure (not unavailable) with its traceback."""
    what = f"{type(error).__qualname__}({error})"
    if not records:
        raise LawViolation(f"wrap(s).{call} swallowed {what} without logging a warning")
    if not isinstance(error, SourceUnavailableError) and not any(
        record.exc_info for record in records
    ):
        raise LawViolation(f"wrap(s).{call} logged {what}, a failure, without its traceback")


async def _check_lookup(
    wrapper: object,
    inner: MutableSource,
    error: Exception,
    fallback: ElementCollection,
    served: str,
) -> None:
    """Where wrap(s) has lookup(ref), it answers from what provide() served while s fails.

    A lookup that asked s (s has no lookup of its own, so asking is providing) swallowed its
    failure, and logs it as ``provide()`` does.
    """
    lookup = getattr(wrapper, "lookup", None)
    if lookup is None:
        return
    what = f"{type(error).__qualname__}({error})"
    refs = [element.ref for element in fallback] + [ElementRef(ElementKind.TOOL, "kit-absent")]
    for ref in refs:
        asked = inner.provides
        with _logged() as records:
            try:
                found = await lookup(ref)
            except Exception as exc:  # whatever escapes is the violation
                raise LawViolation(
                    f"wrap(s).lookup({ref}) raised {type(exc).__qualname__}: {exc} when s raised "
                    f"{what}"
                ) from exc
        if inner.provides != asked:
            _check_log(records, error, f"lookup({ref})")
        if found != fallback.get(ref):
            raise LawViolation(
                f"while s raises {what}, wrap(s).lookup({ref}) must answer from {served}: "
                f"got {found!r}, expected {fallback.get(ref)!r}"
            )


def _diagnostics(wrapper: object) -> tuple[SourceDiagnostic, ...]:
    report = getattr(wrapper, "diagnostics", None)
    if report is None:
        raise LawViolation(
            "wrap(s) claims isolates=True but has no diagnostics(): a failure it isolates must "
            "be reported there"
        )
    return tuple(report())


def _check_diagnostic(wrapper: object, error: Exception, what: str) -> None:
    reported = _diagnostics(wrapper)
    kind = "unavailable" if isinstance(error, SourceUnavailableError) else "failed"
    if len(reported) != 1 or reported[0].kind != kind:
        raise LawViolation(
            f"while s raises {what}, wrap(s).diagnostics() must be one {kind!r} diagnostic, "
            f"got {reported!r}"
        )
    message = reported[0].message
    if type(error).__qualname__ not in message or str(error) not in message:
        raise LawViolation(
            f"wrap(s)'s diagnostic {message!r} must carry the exception's type "
            f"({type(error).__qualname__}) and text ({error})"
        )
