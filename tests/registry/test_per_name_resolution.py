"""Per-name resolution: before a full load the Registry answers exactly what the load would hold.

Sources are asked in precedence order; one with ``lookup`` is asked for the ref alone, any other
is provided (once); an answer counts only if the full load would admit it. The property: for
every ref, a fresh registry's per-name answer equals a loaded twin's, and no source was provided
that a lookup could answer, nor any source twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.handlers import resource_template
from mcp_core.registry import Priority, Registry
from mcp_core.sources import FunctionSource, SourceUnavailableError, StaticSource

KEYS: Final = ("a", "b")
KINDS: Final = (ElementKind.TOOL, ElementKind.PROMPT, ElementKind.RESOURCE)


def handler() -> str:
    """A handler of every kind (no arguments)."""
    return "ok"


def element(kind: ElementKind, key: str, origin: str, *, invalid: bool = False) -> Element:
    """An element whose description says where it came from; ``invalid`` gives it a bad handler."""
    if kind is ElementKind.TOOL:
        definition: Tool | Prompt | Resource = Tool(
            name=key, description=origin, input_schema={"type": "object"}
        )
    elif kind is ElementKind.PROMPT:
        definition = Prompt(name=key, description=origin)
    else:
        definition = Resource(uri=f"res://{key}", name=key, description=origin)
    return Element(definition=definition, handler=object() if invalid else handler)


def ref(kind: ElementKind, key: str) -> ElementRef:
    """The ref ``element(kind, key, ...)`` has."""
    return ElementRef(kind, f"res://{key}" if kind is ElementKind.RESOURCE else key)


@dataclass
class Spec:
    """One source: its content, declared kinds, priority, and whether it can look up."""

    slots: list[tuple[ElementKind, str, bool]]  # (kind, key, invalid)
    declared: ElementKind
    priority: int
    looks_up: bool
    lookup_fails: bool


class Counting:
    """A source that counts its provides and lookups; optionally answers lookup(ref)."""

    def __init__(self, spec: Spec, index: int) -> None:
        self.spec = spec
        self.content = ElementCollection(
            element(kind, key, f"source {index}", invalid=invalid)
            for kind, key, invalid in spec.slots
        )
        self.provides = 0
        self.lookups = 0

    def kinds(self) -> ElementKind:
        return self.spec.declared

    async def provide(self) -> ElementCollection:
        self.provides += 1
        return self.content


class LookingUp:
    """Counting, plus lookup(ref) (which may fail)."""

    def __init__(self, counting: Counting) -> None:
        self.counting = counting

    def kinds(self) -> ElementKind:
        return self.counting.kinds()

    async def provide(self) -> ElementCollection:
        return await self.counting.provide()

    async def lookup(self, wanted: ElementRef) -> Element | None:
        self.counting.lookups += 1
        if self.counting.spec.lookup_fails:
            raise SourceUnavailableError("the backend is down")
        return self.counting.content.get(wanted)


def build(specs: list[Spec]) -> tuple[Registry, list[Counting]]:
    """A registry over fresh sources made from ``specs``."""
    counters = [Counting(spec, index) for index, spec in enumerate(specs)]
    sources = [(LookingUp(c) if c.spec.looks_up else c, c.spec.priority) for c in counters]
    return Registry(sources), counters


slots = st.lists(
    st.tuples(st.sampled_from(KINDS), st.sampled_from(KEYS), st.booleans()),
    max_size=4,
    unique_by=lambda slot: (slot[0], slot[1]),
)
kind_sets = st.sampled_from(
    [ElementKind.ALL, ElementKind.TOOL, ElementKind.TOOL | ElementKind.PROMPT, ElementKind.NONE]
)
specs = st.lists(
    st.builds(
        Spec,
        slots=slots,
        declared=kind_sets,
        priority=st.sampled_from((-1, 0, 1)),
        looks_up=st.booleans(),
        lookup_fails=st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


class TestPerNameResolution:
    """The per-name answer is the full load's answer, at less cost."""

    @given(specs)
    def test_agrees_with_a_full_load(self, configuration: list[Spec]) -> None:
        """Each ref resolves per name to what the loaded registry holds there."""

        async def body() -> None:
            for kind in KINDS:
                for key in KEYS:
                    fresh, counters = build(configuration)
                    loaded, _ = build(configuration)
                    await loaded.load()
                    wanted = ref(kind, key)
                    got = await fresh.get(wanted)
                    expected = await loaded.get(wanted)
                    if any(spec.looks_up and spec.lookup_fails for spec in configuration):
                        # A failed lookup contributes nothing now; the load may still provide it.
                        if got is not None:
                            assert expected is not None
                        continue
                    assert got == expected, (wanted, got, expected)
                    assert not fresh.loaded
                    for counter in counters:
                        assert counter.provides <= 1
                        if counter.spec.looks_up:
                            assert counter.provides == 0

        anyio.run(body)

    async def test_the_lower_source_answers_only_after_the_higher_had_nothing(self) -> None:
        """The first ranked source that holds the ref answers; those below are never asked."""
        high, low = tool_a(0, priority=1), tool_a(1, priority=0)
        registry = Registry([(LookingUp(low), 0), (LookingUp(high), 1)])
        found = await registry.get_tool("a")
        assert found is not None
        assert found.definition.description == "source 0"
        assert (high.lookups, low.lookups) == (1, 0)
        assert (high.provides, low.provides) == (0, 0)

    async def test_an_inadmissible_answer_falls_through(self) -> None:
        """An invalid element, or one of an undeclared kind, yields to the next source, as a load."""
        invalid = tool_a(0, priority=2, invalid=True)
        undeclared = tool_a(1, priority=1, declared=ElementKind.PROMPT)
        valid = tool_a(2, priority=0, looks_up=False)
        registry = Registry(
            [(LookingUp(invalid), 2), (LookingUp(undeclared), 1), (valid, Priority.DEFAULT)]
        )
        found = await registry.get_tool("a")
        assert found is not None
        assert found.definition.description == "source 2"
        assert valid.provides == 1
        await registry.load()
        assert valid.provides == 1  # the load completes the rest, and provides nothing twice

    async def test_runtime_registrations_beat_every_source_before_a_load(self) -> None:
        """The writer's overlay is consulted first, per name as always."""
        source = tool_a(0, priority=0)
        registry = Registry([(LookingUp(source), 0)])
        await registry.register(element(ElementKind.TOOL, "a", "runtime"))
        found = await registry.get_tool("a")
        assert found is not None
        assert found.definition.description == "runtime"
        assert source.lookups == 0


def tool_a(
    index: int,
    *,
    priority: int,
    looks_up: bool = True,
    invalid: bool = False,
    declared: ElementKind = ElementKind.ALL,
) -> Counting:
    """A counting source holding tool 'a' (``invalid``: with a wrong-kind handler)."""
    spec = Spec(
        [(ElementKind.TOOL, "a", invalid)], declared, priority, looks_up, lookup_fails=False
    )
    return Counting(spec, index)


class TestTemplateTies:
    """Equally specific templates: the higher-precedence source's wins."""

    @pytest.mark.parametrize(("low_first", "equal"), [(True, False), (False, False), (True, True)])
    async def test_precedence_breaks_ties(self, low_first: bool, equal: bool) -> None:
        """Priority first; at equal priority the source added first; never the template text."""

        def template(text: str, name: str) -> Element:
            def read(**variables: str) -> str:
                return name

            return Element(definition=ResourceTemplate(uri_template=text, name=name), handler=read)

        low = (ElementCollection([template("t://doc/{aa}", "low")]), 0)
        high = (ElementCollection([template("t://doc/{zz}", "high")]), 0 if equal else 10)
        ordered = [low, high] if low_first else [high, low]
        registry = Registry([(StaticSource(content), priority) for content, priority in ordered])
        resolved = await registry.get_resource("t://doc/x")
        assert resolved is not None
        expected = ordered[0][0] if equal else high[0]
        assert resolved.element == next(iter(expected))


async def test_a_template_that_inherits_a_completion_keeps_its_origin() -> None:
    """The winner of an override completes as the shadowed one did, and is still its source's."""

    def codes(value: str) -> list[str]:
        return [code for code in ("OSL", "BER") if code.startswith(value)]

    @resource_template("station://{code}")
    def station(code: str) -> str:
        return code

    shadowed = ResourceTemplate(uri_template="station://{code}", name="station")
    completing = Element(definition=shadowed, handler=handler, completions={"code": codes})
    registry = Registry()
    registry.add_source(StaticSource(ElementCollection([completing])), Priority.DISCOVERY)
    registry.add_source(FunctionSource(station), Priority.MANUAL)
    await registry.load()
    found = await registry.get_resource("station://OSL")
    origin = registry.origin(ElementRef(ElementKind.RESOURCE_TEMPLATE, "station://{code}"))
    assert found is not None
    assert found.element.completions == {"code": codes}
    assert found.element.handler is not handler  # the manual template's, completing as before
    assert origin is not None
    assert origin.startswith("FunctionSource(")
