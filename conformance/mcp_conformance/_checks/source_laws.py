"""Source laws, for a source target and for a wrapper target over healthy sources.

Each check tests its own law only: where ``provide()`` returns something that is not an
ElementCollection, that is ``source.returns-collection``'s FAIL, and the other checks use what
they can of it (elements to take kinds from, values to compare) or are N/A.
"""

from __future__ import annotations

import anyio

from mcp_conformance._checks._subjects import (
    Subject,
    for_each_group,
    for_each_subject,
    kinds_of,
    provide,
)
from mcp_conformance._contract import LawViolation, check_collection, checked, provide_calls
from mcp_conformance._diff import diff_collections
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_core.elements import ElementCollection, ElementKind

# Instances provided from at once: calls interleave, so state shared between them shows.
_INSTANCES = 3
_CALLS_PER_WRAPPER = 10


@checks("source.returns-collection")
def test_source_returns_collection(kit: Kit) -> None:
    """provide() returns an ElementCollection of Elements; kinds() an ElementKind."""

    async def body(subject: Subject) -> None:
        checked(subject.source.kinds(), ElementKind, what="kinds()")  # type: ignore[attr-defined]  # duck-typed target
        check_collection(await provide(subject.source), what="provide()")

    for_each_subject(kit, body, name="source_returns_collection")


@checks("source.idempotent")
def test_source_idempotent(kit: Kit) -> None:
    """Many provide() calls, interleaved across instances, agree with each instance's first."""
    # A source target is one object: many calls are what catches a source failing now and then.
    # A wrapper target is checked over many generated sources, each its own example.
    calls = kit.profile.provide_calls if kit.target.kind == "source" else _CALLS_PER_WRAPPER

    async def body(group: list[Subject]) -> None:
        answers: list[list[object]] = [[] for _ in group]

        async def call(index: int) -> None:
            try:
                answers[index].append(await provide(group[index].source))
            except Exception as exc:  # noqa: BLE001 -- a raise is an answer that disagrees
                answers[index].append(exc)

        for number in range(calls):
            # Each round starts the instances in another order, so calls interleave differently.
            async with anyio.create_task_group() as together:
                for offset in range(len(group)):
                    together.start_soon(call, (number + offset) % len(group))
        for index, got in enumerate(answers):
            _agree(got, f"on instance {index + 1} of {len(group)}, calls interleaved with others'")

    for_each_group(kit, body, name="source_idempotent", size=_INSTANCES)


def _agree(answers: list[object], where: str) -> None:
    """Every answer equals the first; raising some of the time is a disagreement."""
    raised = [(n, a) for n, a in enumerate(answers, start=1) if isinstance(a, Exception)]
    if (raised and len(raised) < len(answers)) or len({type(a) for _, a in raised}) > 1:
        number, error = raised[0]
        raise LawViolation(
            f"provide() call {number} of {len(answers)} ({where}) raised "
            f"{type(error).__name__}: {error}, while {len(answers) - len(raised)} of the calls "
            "returned a collection"
        ) from error
    if raised:
        return  # raising every time is source.returns-collection's FAIL
    for number, answer in enumerate(answers[1:], start=2):
        if answer != answers[0]:
            raise LawViolation(
                f"provide() call {number} of {len(answers)} ({where}) differs from the first: "
                f"{diff_collections(answers[0], answer)}"  # type: ignore[arg-type]  # a collection, or the diff says what else
            )


@checks("source.kinds-cover")
def test_source_kinds_cover(kit: Kit) -> None:
    """Every provided element's kind is among kinds()."""
    judged = 0
    unjudged = ""

    async def body(subject: Subject) -> None:
        nonlocal judged
        nonlocal unjudged
        declared = subject.source.kinds()  # type: ignore[attr-defined]  # duck-typed target
        answer = await provide(subject.source)
        provided = kinds_of(answer)
        if not isinstance(declared, ElementKind):
            unjudged = f"kinds() returned {type(declared).__qualname__}, not an ElementKind"
            return  # source.returns-collection fails for it
        if provided is None:
            unjudged = f"provide() returned {type(answer).__qualname__}, not elements"
            return  # source.returns-collection fails for it
        judged += 1
        if provided & ~declared:
            raise LawViolation(
                f"provide() returned {(provided & ~declared).label} elements, but kinds() is "
                f"{declared.label or 'none'}"
            )

    for_each_subject(kit, body, name="source_kinds_cover")
    if not judged:
        kit.not_applicable(
            f"{unjudged}, so there is nothing to compare (see source.returns-collection)"
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
            live.append(next(str(e.ref) for e in provided if not e.is_serializable))
            return
        judged += 1
        again = ElementCollection.from_json(provided.to_json())
        if again != provided:
            raise LawViolation(f"from_json(to_json(c)) != c: {diff_collections(provided, again)}")

    live: list[str] = []
    for_each_subject(kit, body, name="source_json_roundtrip")
    if not judged and live:
        kit.not_applicable(
            f"provide() returns live handlers ({live[0]}, for one), so its collection is not "
            "serializable and the law does not apply (declare serializable=False to say so)",
            why="live-handlers",
        )
    if not judged:
        kit.not_applicable(
            "provide() returned no collection (see source.returns-collection): nothing to serialize"
        )
