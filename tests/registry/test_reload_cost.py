"""A reload costs what changed: admission and change detection follow the changed elements only.

Admission is decided once per element object (elements are immutable), and the change a reload
announces is computed by cancelling the element objects both catalogues share before comparing
what is left by value. These tests hold both to the plain definitions: the same catalogue, the
same diagnostics and the same announced kinds as a fresh registry and a by-value comparison.
"""

from __future__ import annotations

from collections import Counter

import anyio
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.errors import InvalidElementError
from mcp_core.registry import Registry
from tests.registry.test_registry_laws import KEYS, KINDS, SpySource, make

SINGLE = (ElementKind.TOOL, ElementKind.RESOURCE, ElementKind.PROMPT)

# One source's content: (kind, key, origin) per element; "bad" origins are refused.
contents = st.lists(
    st.tuples(st.sampled_from(KINDS), st.sampled_from(KEYS), st.sampled_from(["x", "y", "bad"])),
    max_size=8,
    unique_by=lambda t: (t[0], t[1]),
)


def _refuse_bad(element: Element) -> None:
    if element.definition.description == "bad":
        raise InvalidElementError("refused", ref=element.ref)


def _by_value(collection: ElementCollection) -> dict[ElementKind, Counter[object]]:
    return {kind: Counter(collection.definitions(kind)) for kind in SINGLE}


@given(
    others=st.lists(contents, max_size=3),
    first=contents,
    second=contents,
    reuse=st.booleans(),
    shuffle=st.randoms(use_true_random=False),
)
def test_reload_admits_only_new_elements_and_announces_exactly_what_changed(
    others: list[list[tuple[ElementKind, str, str]]],
    first: list[tuple[ElementKind, str, str]],
    second: list[tuple[ElementKind, str, str]],
    reuse: bool,
    shuffle: object,
) -> None:
    """Reloading one source: no element object is admitted twice; the outcome is a fresh one's."""
    asked: list[int] = []
    alive: list[Element] = []  # every element made, so that no id is reused during the test

    def validator(element: Element) -> None:
        asked.append(id(element))
        _refuse_bad(element)

    def elements(spec: list[tuple[ElementKind, str, str]], tag: str) -> list[Element]:
        made = [make(kind, key, origin, tags=frozenset({tag})) for kind, key, origin in spec]
        alive.extend(made)
        return made

    async def body() -> None:
        changing = SpySource(ElementCollection(elements(first, "changing")))
        sources = [
            (SpySource(ElementCollection(elements(o, f"o{i}"))), i) for i, o in enumerate(others)
        ]
        registry = Registry([*sources, (changing, 1)], validator=validator)
        await registry.load()
        announced: list[ElementKind] = []
        registry.subscribe(announced.append)
        before = ElementCollection(await registry.elements())

        # The new content keeps some element objects (when reused) and makes the rest anew.
        kept = {(e.ref.kind, e.ref.key): e for e in changing.content} if reuse else {}
        fresh = elements(second, "changing")
        content = [kept.get((e.ref.kind, e.ref.key), e) for e in fresh]
        shuffle.shuffle(content)  # type: ignore[attr-defined]  # a hypothesis Random
        changing.content = ElementCollection(content)
        await registry.reload(changing)
        after = ElementCollection(await registry.elements())

        assert len(asked) == len(set(asked)), "an element provided again was admitted again"
        fresh_registry = Registry(
            [(SpySource(s.content), p) for s, p in [*sources, (changing, 1)]], validator=_refuse_bad
        )
        assert list(after) == list(await fresh_registry.elements())
        assert sorted((d.kind, str(d.ref)) for d in registry.diagnostics()) == sorted(
            (d.kind, str(d.ref)) for d in fresh_registry.diagnostics()
        )
        old, new = _by_value(before), _by_value(after)
        expected = ElementKind.NONE
        for kind in SINGLE:
            if old[kind] != new[kind]:
                expected |= kind
        assert (announced[0] if announced else ElementKind.NONE) == expected

    anyio.run(body)
