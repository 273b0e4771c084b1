"""Hypothesis properties for every law of the reference Registry (docs/architecture.md §3.3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.errors import InvalidElementError, SourceUnavailableError
from mcp_core.registry import Priority, Registry
from mcp_core.sources import StaticSource

KINDS = (ElementKind.TOOL, ElementKind.RESOURCE, ElementKind.PROMPT)
KEYS = ("a", "b", "c", "d")


def make(
    kind: ElementKind, key: str, origin: str, *, tags: frozenset[str] = frozenset()
) -> Element:
    """An element at (kind, key) whose description records where it came from."""
    definition: Tool | Resource | Prompt
    if kind is ElementKind.TOOL:
        definition = Tool(name=key, input_schema={"type": "object"}, description=origin)
    elif kind is ElementKind.RESOURCE:
        definition = Resource(uri=f"test://{key}", name=key, description=origin)
    else:
        definition = Prompt(name=key, description=origin)
    return Element(definition=definition, handler=HandlerRef(f"tests.handlers:{key}"), tags=tags)


@dataclass
class SpySource:
    """A source whose content can change and that counts provide() calls."""

    content: ElementCollection
    declared: ElementKind = ElementKind.ALL
    fail_with: Exception | None = None
    provides: int = 0
    kinds_calls: int = field(default=0)

    def kinds(self) -> ElementKind:
        """The declared kinds; never provides."""
        self.kinds_calls += 1
        return self.declared

    async def provide(self) -> ElementCollection:
        """The current content, or the configured failure."""
        self.provides += 1
        await anyio.lowlevel.checkpoint()
        if self.fail_with is not None:
            raise self.fail_with
        return self.content


Spec = tuple[int, list[tuple[ElementKind, str]]]

source_specs = st.lists(
    st.tuples(
        st.sampled_from([Priority.DISCOVERY, Priority.DEFAULT, Priority.MANUAL, 7]),
        st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(KEYS)), max_size=6, unique=True),
    ),
    max_size=5,
)


def build_sources(specs: Sequence[Spec]) -> list[tuple[SpySource, int]]:
    """One spy source per spec, elements tagged with the source index."""
    return [
        (SpySource(ElementCollection(make(k, key, f"s{i}") for k, key in refs)), priority)
        for i, (priority, refs) in enumerate(specs)
    ]


def expected_winners(specs: Sequence[Spec]) -> dict[ElementRef, str]:
    """The oracle: highest priority wins, then the source added first."""
    winners: dict[ElementRef, tuple[int, int]] = {}
    for index, (priority, refs) in enumerate(specs):
        for kind, key in refs:
            ref = make(kind, key, "").ref
            best = winners.get(ref)
            if best is None or (-priority, index) < (-best[0], best[1]):
                winners[ref] = (priority, index)
    return {ref: f"s{index}" for ref, (_, index) in winners.items()}


async def origins(registry: Registry) -> dict[ElementRef, str]:
    """Which origin each listed element came from."""
    found: dict[ElementRef, str] = {}
    for definitions in (
        await registry.tools(),
        await registry.resources(),
        await registry.prompts(),
    ):
        for definition in definitions:
            assert definition.description is not None
            found[definition.ref] = definition.description
    return found


def run(fn: Callable[[], Awaitable[None]]) -> None:
    """Run an async test body on a fresh event loop."""
    anyio.run(fn)


class TestPrecedence:
    """registry.precedence and registry.model."""

    @given(source_specs)
    def test_winner_is_highest_priority_then_first_added(self, specs: list[Spec]) -> None:
        """Every ref resolves to the oracle's winner, and nothing else is listed."""

        async def body() -> None:
            registry = Registry(build_sources(specs))
            assert await origins(registry) == expected_winners(specs)

        run(body)

    @given(source_specs, st.randoms())
    def test_independent_of_add_order_for_distinct_priorities(
        self, specs: list[Spec], random: st.SearchStrategy[object]
    ) -> None:
        """With distinct priorities, the order sources are added in does not change the winners."""
        distinct = [(i * 10, refs) for i, (_, refs) in enumerate(specs)]
        shuffled = list(enumerate(distinct))
        random.shuffle(shuffled)  # type: ignore[attr-defined]  # st.randoms() draws a random.Random

        async def body() -> None:
            straight = Registry(build_sources(distinct))
            registry = Registry()
            for index, (priority, refs) in shuffled:
                registry.add_source(
                    SpySource(ElementCollection(make(k, key, f"s{index}") for k, key in refs)),
                    priority,
                )
            assert await origins(registry) == await origins(straight)

        run(body)

    @given(
        source_specs,
        st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(KEYS)), unique=True),
    )
    def test_runtime_beats_every_source_before_or_after_load(
        self, specs: list[Spec], runtime: list[tuple[ElementKind, str]]
    ) -> None:
        """Runtime registrations win, whether they happen before or after the first load."""

        async def body() -> None:
            expected = expected_winners(specs)
            expected.update({make(k, key, "").ref: "runtime" for k, key in runtime})
            before, after = Registry(build_sources(specs)), Registry(build_sources(specs))
            for kind, key in runtime:
                await before.register(make(kind, key, "runtime"))
            await after.load()
            for kind, key in runtime:
                await after.register(make(kind, key, "runtime"))
            assert await origins(before) == expected
            assert await origins(after) == expected

        run(body)

    def test_lost_conflicts_are_shadowed_diagnostics(self) -> None:
        """A lower-priority duplicate is reported as shadowed, naming the winner."""

        async def body() -> None:
            low = SpySource(ElementCollection([make(ElementKind.TOOL, "a", "low")]))
            high = SpySource(ElementCollection([make(ElementKind.TOOL, "a", "high")]))
            registry = Registry([(low, Priority.DISCOVERY), (high, Priority.MANUAL)])
            assert (await registry.tools())[0].description == "high"
            shadowed = [d for d in registry.diagnostics() if d.kind == "shadowed"]
            assert len(shadowed) == 1
            assert shadowed[0].ref == ElementRef.tool("a")
            assert "priority 100 vs -100" in shadowed[0].message

        run(body)


class TestLifecycle:
    """registry.lazy, registry.load-idempotent and registry.single-flight."""

    @given(source_specs)
    def test_nothing_is_provided_before_the_first_read(self, specs: list[Spec]) -> None:
        """Construction, kinds(), diagnostics() and writes never provide."""

        async def body() -> None:
            sources = build_sources(specs)
            registry = Registry(sources)
            registry.kinds()
            registry.diagnostics()
            await registry.register(make(ElementKind.TOOL, "z", "runtime"))
            await registry.unregister(ElementRef.tool("z"))
            assert not registry.loaded
            assert all(source.provides == 0 for source, _ in sources)

        run(body)

    @given(source_specs, st.integers(min_value=2, max_value=8))
    def test_concurrent_first_reads_provide_each_source_once(
        self, specs: list[Spec], readers: int
    ) -> None:
        """Concurrent first calls share one load; a second load() provides nothing."""

        async def body() -> None:
            sources = build_sources(specs)
            registry = Registry(sources)
            results: list[object] = []

            async def read(index: int) -> None:
                reads = (registry.tools, registry.prompts, registry.resources)
                results.append(await reads[index % 3]())

            async with anyio.create_task_group() as group:
                for index in range(readers):
                    group.start_soon(read, index)
            catalogue = await origins(registry)
            await registry.load()
            await registry.load()
            assert registry.loaded
            assert all(source.provides == 1 for source, _ in sources)
            assert await origins(registry) == catalogue

        run(body)

    def test_reload_provides_every_source_again(self) -> None:
        """reload() provides each source once more and picks up new content."""

        async def body() -> None:
            source = SpySource(ElementCollection([make(ElementKind.TOOL, "a", "v1")]))
            registry = Registry([(source, Priority.DEFAULT)])
            assert (await registry.tools())[0].description == "v1"
            source.content = ElementCollection([make(ElementKind.TOOL, "a", "v2")])
            assert (await registry.tools())[0].description == "v1"
            await registry.reload()
            assert source.provides == 2
            assert (await registry.tools())[0].description == "v2"

        run(body)

    def test_source_added_after_load_is_provided_on_next_read(self) -> None:
        """A late source is provided once, on the next read, and announced as a change."""

        async def body() -> None:
            registry = Registry(
                [(SpySource(ElementCollection([make(ElementKind.TOOL, "a", "s0")])), 0)]
            )
            await registry.load()
            changes: list[ElementKind] = []
            registry.subscribe(changes.append)
            late = SpySource(ElementCollection([make(ElementKind.PROMPT, "p", "late")]))
            registry.add_source(late)
            assert [p.name for p in await registry.prompts()] == ["p"]
            assert late.provides == 1
            assert changes == [ElementKind.PROMPT]

        run(body)


class TestIsolation:
    """registry.element-isolation, registry.source-isolation, registry.unavailable-keeps-last-good."""

    @given(source_specs, st.data())
    def test_invalid_element_costs_only_itself(
        self, specs: list[Spec], data: st.DataObject
    ) -> None:
        """An element the validator rejects is skipped with a diagnostic; the rest is served."""
        refs = [(i, k, key) for i, (_, rs) in enumerate(specs) for k, key in rs]
        if not refs:
            return
        bad_index, bad_kind, bad_key = data.draw(st.sampled_from(refs))

        def validator(element: Element) -> None:
            if "invalid" in element.tags:
                raise InvalidElementError("tagged invalid", ref=element.ref)

        async def body() -> None:
            sources = []
            for index, (priority, rs) in enumerate(specs):
                elements = [
                    make(
                        k,
                        key,
                        f"s{index}",
                        tags=frozenset({"invalid"})
                        if (index, k, key) == (bad_index, bad_kind, bad_key)
                        else frozenset(),
                    )
                    for k, key in rs
                ]
                sources.append((SpySource(ElementCollection(elements)), priority))
            registry = Registry(sources, validator=validator)
            pruned = [
                (p, [(k, key) for k, key in rs if (i, k, key) != (bad_index, bad_kind, bad_key)])
                for i, (p, rs) in enumerate(specs)
            ]
            assert await origins(registry) == expected_winners(pruned)
            bad_ref = make(bad_kind, bad_key, "").ref
            skipped = [d.ref for d in registry.diagnostics() if d.kind == "skipped"]
            shadowed = [d.ref for d in registry.diagnostics() if d.kind == "shadowed"]
            # A loser is shadowed before it is validated: validation is spent on winners only.
            assert skipped in ([bad_ref], [])
            assert bad_ref in skipped or bad_ref in shadowed

        run(body)

    @given(
        source_specs,
        st.data(),
        st.sampled_from([RuntimeError("boom"), SourceUnavailableError("db down")]),
    )
    def test_raising_source_costs_at_most_its_own_elements(
        self, specs: list[Spec], data: st.DataObject, error: Exception
    ) -> None:
        """A source raising on first load contributes nothing; every read still succeeds."""
        if not specs:
            return
        broken = data.draw(st.integers(min_value=0, max_value=len(specs) - 1))

        async def body() -> None:
            sources = build_sources(specs)
            sources[broken][0].fail_with = error
            registry = Registry(sources)
            remaining = [s if i != broken else (s[0], []) for i, s in enumerate(specs)]
            assert await origins(registry) == expected_winners(remaining)
            assert await registry.get_tool("nope") is None
            kinds = {d.kind for d in registry.diagnostics() if d.kind in {"failed", "unavailable"}}
            assert kinds == {
                "unavailable" if isinstance(error, SourceUnavailableError) else "failed"
            }

        run(body)

    @given(
        source_specs,
        st.data(),
        st.sampled_from([RuntimeError("boom"), SourceUnavailableError("db down")]),
    )
    def test_source_failing_on_reload_keeps_its_last_good_collection(
        self, specs: list[Spec], data: st.DataObject, error: Exception
    ) -> None:
        """After a successful load, a source that raises on reload keeps serving what it had."""
        if not specs:
            return
        broken = data.draw(st.integers(min_value=0, max_value=len(specs) - 1))

        async def body() -> None:
            sources = build_sources(specs)
            registry = Registry(sources)
            before = await origins(registry)
            sources[broken][0].fail_with = error
            sources[broken][0].content = ElementCollection()
            await registry.reload()
            assert await origins(registry) == before
            messages = [
                d.message for d in registry.diagnostics() if d.kind in {"failed", "unavailable"}
            ]
            assert len(messages) == 1
            assert "last good collection" in messages[0]

        run(body)

    def test_default_validator_skips_a_wrong_kind_handler(self) -> None:
        """A tool served by a prompt handler object costs only itself, with a diagnostic."""

        class PromptOnly:
            async def get(self, arguments: object, gateway: object) -> str:
                return "never a tool"

        async def body() -> None:
            wrong = Element(
                definition=Tool(name="wrong", input_schema={"type": "object"}), handler=PromptOnly()
            )
            source = SpySource(ElementCollection([wrong, make(ElementKind.TOOL, "fine", "s")]))
            registry = Registry([(source, 0)])
            assert [t.name for t in await registry.tools()] == ["fine"]
            [skipped] = [d for d in registry.diagnostics() if d.kind == "skipped"]
            assert skipped.ref == ElementRef.tool("wrong")
            assert "cannot serve a tool" in skipped.message

        run(body)

    def test_undeclared_kind_is_skipped_to_keep_capabilities_honest(self) -> None:
        """A source that provides a prompt while declaring only tools has the prompt skipped."""

        async def body() -> None:
            source = SpySource(
                ElementCollection(
                    [make(ElementKind.TOOL, "a", "s"), make(ElementKind.PROMPT, "p", "s")]
                ),
                declared=ElementKind.TOOL,
            )
            registry = Registry([(source, 0)])
            assert [t.name for t in await registry.tools()] == ["a"]
            assert await registry.prompts() == ()
            assert any(
                d.kind == "skipped" and d.ref == ElementRef.prompt("p")
                for d in registry.diagnostics()
            )

        run(body)

    def test_source_returning_a_non_collection_is_a_failure_not_a_crash(self) -> None:
        """A provide() returning a list is reported as failed; reads succeed."""

        class ListSource:
            def kinds(self) -> ElementKind:
                return ElementKind.TOOL

            async def provide(self) -> ElementCollection:
                return [make(ElementKind.TOOL, "a", "x")]  # type: ignore[return-value]  # the bug under test

        async def body() -> None:
            registry = Registry([(ListSource(), 0)])
            assert await registry.tools() == ()
            [diagnostic] = registry.diagnostics()
            assert diagnostic.kind == "failed"
            assert "expected an ElementCollection" in diagnostic.message

        run(body)


class TestWriter:
    """registry.register-inverse and writer behaviour."""

    @given(source_specs, st.sampled_from(KINDS), st.sampled_from((*KEYS, "fresh")), st.booleans())
    def test_register_then_unregister_restores_the_catalogue(
        self, specs: list[Spec], kind: ElementKind, key: str, loaded_first: bool
    ) -> None:
        """register(e) then unregister(e.ref) leaves every list as it was."""

        async def body() -> None:
            registry = Registry(build_sources(specs))
            if loaded_first:
                await registry.load()
            element = make(kind, key, "runtime")
            await registry.register(element)
            assert (await registry.get(element.ref)) == element
            assert await registry.unregister(element.ref)
            assert not await registry.unregister(element.ref)
            assert await origins(registry) == expected_winners(specs)

        run(body)

    def test_register_rejects_what_the_validator_rejects(self) -> None:
        """A writer call with an invalid element raises instead of being skipped silently."""

        def validator(element: Element) -> None:
            raise InvalidElementError("never valid", ref=element.ref)

        async def body() -> None:
            registry = Registry(validator=validator)
            with pytest.raises(InvalidElementError, match="never valid"):
                await registry.register(make(ElementKind.TOOL, "a", "x"))
            assert await registry.tools() == ()

        run(body)


class TestHonestKinds:
    """registry.honest-kinds."""

    @given(
        st.lists(st.sampled_from([*KINDS, ElementKind.RESOURCE_TEMPLATE, ElementKind.NONE])),
        st.lists(st.sampled_from(KINDS)),
    )
    def test_kinds_is_the_union_of_sources_and_runtime(
        self, declared: list[ElementKind], runtime: list[ElementKind]
    ) -> None:
        """kinds() equals the union of declared kinds and runtime kinds, without providing."""

        async def body() -> None:
            sources = [(SpySource(ElementCollection(), declared=k), 0) for k in declared]
            registry = Registry(sources)
            expected = ElementKind.NONE
            for k in declared:
                expected |= k
            for index, k in enumerate(runtime):
                await registry.register(make(k, f"r{index}", "runtime"))
                expected |= k
            assert registry.kinds() == expected
            assert all(s.provides == 0 for s, _ in sources)

        run(body)


class TestChangeEvents:
    """registry.change-events."""

    @given(source_specs, source_specs)
    def test_reload_emits_once_for_exactly_the_changed_kinds(
        self, first: list[Spec], second: list[Spec]
    ) -> None:
        """Initial load emits nothing; a reload emits one union of exactly the changed kinds."""
        count = max(len(first), len(second))
        first = first + [(0, [])] * (count - len(first))
        second = second + [(0, [])] * (count - len(second))
        second = [(p, rs) for (p, _), (_, rs) in zip(first, second, strict=True)]

        async def body() -> None:
            sources = build_sources(first)
            registry = Registry(sources)
            events: list[ElementKind] = []
            registry.subscribe(events.append)
            await registry.load()
            assert events == []
            by_kind_before = {k: list(await _defs(registry, k)) for k in KINDS}
            for (source, _), (replacement, _) in zip(sources, build_sources(second), strict=True):
                source.content = replacement.content
            await registry.reload()
            changed = ElementKind.NONE
            for k in KINDS:
                # As multisets: a change of order alone is no change.
                if Counter(await _defs(registry, k)) != Counter(by_kind_before[k]):
                    changed |= k
            assert events == ([changed] if changed else [])

        run(body)

    def test_writes_emit_their_kind_only_when_the_catalogue_changes(self) -> None:
        """Register emits the element's kind; re-registering the same definition emits nothing."""

        async def body() -> None:
            registry = Registry(
                [(SpySource(ElementCollection([make(ElementKind.TOOL, "a", "s")])), 0)]
            )
            await registry.load()
            events: list[ElementKind] = []
            unsubscribe = registry.subscribe(events.append)
            await registry.register(make(ElementKind.PROMPT, "p", "runtime"))
            await registry.register(make(ElementKind.PROMPT, "p", "runtime"))
            await registry.register(make(ElementKind.TOOL, "a", "s"))
            await registry.unregister(ElementRef.prompt("p"))
            unsubscribe()
            await registry.register(make(ElementKind.TOOL, "b", "runtime"))
            assert events == [ElementKind.PROMPT, ElementKind.PROMPT]

        run(body)

    def test_a_raising_listener_does_not_break_writes(self) -> None:
        """A listener that raises is logged; other listeners still hear about the change."""

        def bad(_: ElementKind) -> None:
            raise RuntimeError("listener bug")

        async def body() -> None:
            registry = Registry()
            await registry.load()
            events: list[ElementKind] = []
            registry.subscribe(bad)
            registry.subscribe(events.append)
            await registry.register(make(ElementKind.TOOL, "a", "x"))
            assert events == [ElementKind.TOOL]

        run(body)

    def test_nothing_is_emitted_before_the_first_load(self) -> None:
        """Writes before the first load emit nothing; the first read still shows them."""

        async def body() -> None:
            registry = Registry()
            events: list[ElementKind] = []
            registry.subscribe(events.append)
            await registry.register(make(ElementKind.TOOL, "a", "x"))
            await registry.register(make(ElementKind.PROMPT, "p", "x"))
            await registry.unregister(ElementRef.prompt("p"))
            assert [t.name for t in await registry.tools()] == ["a"]
            assert events == []
            await registry.register(make(ElementKind.PROMPT, "p", "x"))
            assert events == [ElementKind.PROMPT]

        run(body)


async def _defs(registry: Registry, kind: ElementKind) -> list[object]:
    if kind is ElementKind.TOOL:
        return list(await registry.tools())
    if kind is ElementKind.RESOURCE:
        return list(await registry.resources())
    return list(await registry.prompts())


class TestTemplates:
    """registry.templates."""

    @staticmethod
    def template(uri_template: str) -> Element:
        """A template element named after its own template."""
        return Element(
            definition=ResourceTemplate(uri_template=uri_template, name="t"),
            handler=HandlerRef("tests.handlers:read"),
        )

    def test_exact_resource_beats_a_matching_template(self) -> None:
        """An exact URI resolves to the resource, with no variables."""

        async def body() -> None:
            exact = make(ElementKind.RESOURCE, "items", "exact")
            registry = Registry(
                [(SpySource(ElementCollection([self.template("test://{id}"), exact])), 0)]
            )
            resolved = await registry.get_resource("test://items")
            assert resolved is not None
            assert resolved.element == exact
            assert dict(resolved.variables) == {}

        run(body)

    @given(
        st.permutations(
            ["test://{+path}", "test://template/{id}/{rest}", "test://template/{id}/data"]
        )
    )
    def test_most_specific_template_wins_whatever_the_order(self, order: list[str]) -> None:
        """The template with the most literal text matches first, independent of insertion order."""

        async def body() -> None:
            registry = Registry(
                [(SpySource(ElementCollection(self.template(t) for t in order)), 0)]
            )
            resolved = await registry.get_resource("test://template/123/data")
            assert resolved is not None
            assert resolved.element.ref.key == "test://template/{id}/data"
            assert dict(resolved.variables) == {"id": "123"}
            other = await registry.get_resource("test://template/1/other")
            assert other is not None
            assert other.element.ref.key == "test://template/{id}/{rest}"
            deep = await registry.get_resource("test://x/y/z")
            assert deep is not None
            assert dict(deep.variables) == {"path": "x/y/z"}

        run(body)

    @given(st.text(min_size=1))
    def test_variables_are_percent_decoded(self, value: str) -> None:
        """Whatever the value, encoding it into the URI and resolving gives it back decoded."""
        from urllib.parse import quote

        async def body() -> None:
            registry = Registry(
                [(SpySource(ElementCollection([self.template("test://items/{id}")])), 0)]
            )
            resolved = await registry.get_resource("test://items/" + quote(value, safe=""))
            assert resolved is not None
            assert dict(resolved.variables) == {"id": value}

        run(body)

    def test_unknown_uri_resolves_to_none(self) -> None:
        """A URI matching nothing is None, not an error."""

        async def body() -> None:
            registry = Registry(
                [(SpySource(ElementCollection([self.template("test://items/{id}")])), 0)]
            )
            assert await registry.get_resource("other://x") is None

        run(body)


class TestResolverAgrees:
    """registry.resolver-agrees."""

    @given(source_specs)
    def test_everything_listed_resolves_and_nothing_else_does(self, specs: list[Spec]) -> None:
        """Listed tools/prompts/resources resolve to the listed definition; unlisted keys do not."""

        async def body() -> None:
            registry = Registry(build_sources(specs))
            listed = {t.name: t for t in await registry.tools()}
            for key in (*KEYS, "zz"):
                element = await registry.get_tool(key)
                assert (element.definition if element else None) == listed.get(key)
            prompts = {p.name: p for p in await registry.prompts()}
            for key in (*KEYS, "zz"):
                element = await registry.get_prompt(key)
                assert (element.definition if element else None) == prompts.get(key)
            resources = {r.uri: r for r in await registry.resources()}
            for key in (*KEYS, "zz"):
                resolved = await registry.get_resource(f"test://{key}")
                assert (resolved.element.definition if resolved else None) == resources.get(
                    f"test://{key}"
                )

        run(body)


# -- registry.candidates (ResourceCandidates) -------------------------------------------------

TEMPLATE_POOL = (
    "files://{+path}",
    "files://{name}",
    "files://{name}/secret",
    "files://docs/{name}",
    "files://{dir}/{name}",
    "other://{x}",
)
URI_POOL = ("files://readme", "files://docs/a", "files://x/secret", "files://a/b/c", "other://1")


def template(pattern: str) -> Element:
    """A template element for ``pattern``."""
    definition = ResourceTemplate(uri_template=pattern, name=pattern)
    return Element(definition=definition, handler=HandlerRef("tests.handlers:template"))


def resource(uri: str) -> Element:
    """An exact resource element at ``uri``."""
    return Element(
        definition=Resource(uri=uri, name=uri), handler=HandlerRef("tests.handlers:resource")
    )


class TestCandidates:
    """registry.candidates: every element that could answer a URI, in the order that decides."""

    @given(
        st.sets(st.sampled_from(TEMPLATE_POOL)),
        st.sets(st.sampled_from(URI_POOL)),
        st.sampled_from(URI_POOL),
    )
    def test_candidates_are_the_successive_winners(
        self, templates: set[str], resources: set[str], uri: str
    ) -> None:
        """The first candidate is get_resource's answer; removing it makes the next one win."""
        elements = [template(t) for t in sorted(templates)] + [
            resource(r) for r in sorted(resources)
        ]

        async def body() -> None:
            registry = Registry([(StaticSource(ElementCollection(elements)), 0)])
            candidates = list(await registry.resource_candidates(uri))
            refs = [c.element.ref for c in candidates]
            assert len(refs) == len(set(refs))
            if uri in resources:
                assert candidates[0].element.ref == ElementRef(ElementKind.RESOURCE, uri)
            remaining = list(elements)
            for candidate in candidates:
                current = Registry([(StaticSource(ElementCollection(remaining)), 0)])
                assert await current.get_resource(uri) == candidate
                remaining.remove(candidate.element)
            left = Registry([(StaticSource(ElementCollection(remaining)), 0)])
            assert await left.get_resource(uri) is None

        anyio.run(body)

    def test_lazy(self) -> None:
        """Candidates are produced on demand: taking the first matches no further template."""

        async def body() -> None:
            registry = Registry(
                [
                    (
                        StaticSource(
                            ElementCollection(
                                [resource("files://readme"), template("files://{+path}")]
                            )
                        ),
                        0,
                    )
                ]
            )
            candidates = iter(await registry.resource_candidates("files://readme"))
            first = next(candidates)
            assert first.element.kind is ElementKind.RESOURCE
            second = next(candidates)
            assert second.variables == {"path": "readme"}
            assert next(candidates, None) is None

        anyio.run(body)
