"""Wrapper laws: what ``wrap(s)`` provides and advertises, over healthy generated sources."""

from __future__ import annotations

from mcp_conformance._checks._subjects import Subject, for_each_subject, kinds_of, provide
from mcp_conformance._contract import LawViolation
from mcp_conformance._diff import diff_collections
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_core.elements import ElementKind


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
