"""Source laws, for a source target and for a wrapper target over healthy sources.

Each check tests its own law only: where ``provide()`` returns something that is not an
ElementCollection, that is ``source.returns-collection``'s FAIL, and the other checks use what
they can of it (elements to take kinds from, values to compare) or are N/A.
"""

from __future__ import annotations

from mcp_conformance._checks._subjects import Subject, for_each_subject, kinds_of, provide
from mcp_conformance._contract import LawViolation, check_collection, checked, provide_calls
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_core.elements import ElementCollection, ElementKind


@checks("source.returns-collection")
def test_source_returns_collection(kit: Kit) -> None:
    """provide() returns an ElementCollection of Elements; kinds() an ElementKind."""

    async def body(subject: Subject) -> None:
        checked(subject.source.kinds(), ElementKind, what="kinds()")  # type: ignore[attr-defined]  # duck-typed target
        check_collection(await provide(subject.source), what="provide()")

    for_each_subject(kit, body, name="source_returns_collection")


@checks("source.idempotent")
def test_source_idempotent(kit: Kit) -> None:
    """Two provide() calls with no outside change in between give equal results."""

    async def body(subject: Subject) -> None:
        first = await provide(subject.source)
        second = await provide(subject.source)
        if first != second:
            raise LawViolation(f"two provide() calls in a row differ: {first!r} != {second!r}")

    for_each_subject(kit, body, name="source_idempotent")


@checks("source.kinds-cover")
def test_source_kinds_cover(kit: Kit) -> None:
    """Every provided element's kind is among kinds()."""
    judged = 0

    async def body(subject: Subject) -> None:
        nonlocal judged
        declared = subject.source.kinds()  # type: ignore[attr-defined]  # duck-typed target
        provided = kinds_of(await provide(subject.source))
        if provided is None or not isinstance(declared, ElementKind):
            return  # not elements, or not kinds: source.returns-collection reports it
        judged += 1
        if provided & ~declared:
            raise LawViolation(
                f"provide() returned {(provided & ~declared).label} elements, but kinds() is "
                f"{declared.label or 'none'}"
            )

    for_each_subject(kit, body, name="source_kinds_cover")
    if not judged:
        kit.not_applicable(
            "provide() never returned elements to take kinds from (see source.returns-collection)"
        )


@checks("source.kinds-without-provide")
def test_source_kinds_without_provide(kit: Kit) -> None:
    """kinds() never runs provide(), on a fresh source or after it has provided."""

    async def body(subject: Subject) -> None:
        for moment in ("on a fresh source", "after a provide()"):
            inner_before = subject.inner.provides if subject.inner is not None else 0
            with provide_calls(subject.source) as calls:
                subject.source.kinds()  # type: ignore[attr-defined]  # duck-typed target
            if calls:
                raise LawViolation(f"kinds() called provide() {moment}: {calls[0]}")
            if subject.inner is not None and subject.inner.provides != inner_before:
                raise LawViolation(f"kinds() made the inner source provide {moment}")
            await provide(subject.source)

    for_each_subject(kit, body, name="source_kinds_without_provide")


@checks("source.json-roundtrip")
def test_source_json_roundtrip(kit: Kit) -> None:
    """A serializable provided collection survives to_json() and from_json() unchanged."""
    capabilities = kit.capabilities
    if capabilities.serializable is False:
        kit.not_applicable(
            f"not claimed (serializable=False): {capabilities.reason}", why="declared"
        )
    judged = 0

    async def body(subject: Subject) -> None:
        nonlocal judged
        provided = await provide(subject.source)
        if not isinstance(provided, ElementCollection):
            return  # source.returns-collection reports it
        if not provided.is_serializable:
            if capabilities.serializable:
                raise LawViolation(
                    "claimed serializable=True, but provide() returned live handlers"
                )
            return
        judged += 1
        again = ElementCollection.from_json(provided.to_json())
        if again != provided:
            changed = [str(a.ref) for a, b in zip(provided, again, strict=False) if a != b]
            raise LawViolation(f"from_json(to_json(c)) != c; the elements that differ: {changed}")

    for_each_subject(kit, body, name="source_json_roundtrip")
    if not judged:
        kit.not_applicable(
            "provide() returned no serializable collection (live handlers, or not a collection): "
            "the law applies only where the collection is serializable"
        )
