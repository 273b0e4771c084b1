"""Registry laws: one check each, model-based where a sequence of operations matters."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final, final

import anyio
import anyio.lowlevel
from hypothesis import strategies as st

from mcp_conformance._contract import (
    ROLE_NAMES,
    LawViolation,
    RegistryUnderTest,
    Role,
    RoleStatus,
    probe_roles,
)
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._machine import PLANS, make_registry, run_machine
from mcp_conformance._universe import (
    ALL_SLOTS,
    Slot,
    SourceSpec,
    collection,
    element,
    ref_of,
    source_specs,
)
from mcp_conformance.faults import MutableSource, SlowSource
from mcp_conformance.strategies import element_kinds
from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Resource,
    ResourceTemplate,
    UriTemplate,
    most_specific_first,
)

# -- what each law needs -------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Needs:
    roles: tuple[Role, ...] = ()
    sources: bool = False  # only meaningful for a registry built over sources
    content: bool = True  # the kit must be able to put elements in (sources or writer)


_NEEDS: Final[dict[str, _Needs]] = {
    "registry.model": _Needs(roles=("catalog",)),
    "registry.resolver-agrees": _Needs(roles=("catalog", "resolver")),
    "registry.load-idempotent": _Needs(roles=("deferred", "catalog"), sources=True),
    "registry.single-flight": _Needs(roles=("catalog",), sources=True),
    "registry.lazy": _Needs(sources=True),
    "registry.precedence": _Needs(roles=("catalog",), sources=True),
    "registry.element-isolation": _Needs(roles=("catalog",)),
    "registry.source-isolation": _Needs(roles=("catalog",), sources=True),
    "registry.unavailable-keeps-last-good": _Needs(roles=("catalog", "deferred"), sources=True),
    "registry.register-inverse": _Needs(roles=("catalog", "writer")),
    "registry.templates": _Needs(roles=("resolver",)),
    "registry.honest-kinds": _Needs(roles=("honest_kinds",)),
    "registry.change-events": _Needs(roles=("change_events", "catalog")),
}


def _require(kit: Kit, law_id: str) -> dict[Role, RoleStatus]:
    """The target's roles, after ending the check as N/A (or FAIL) if it cannot apply."""
    needs = _NEEDS[law_id]
    capabilities = kit.capabilities
    roles: dict[Role, RoleStatus] = {}

    async def probe() -> None:
        registry = kit.target.factory([])
        roles.update(probe_roles(registry, capabilities))

    anyio.run(probe)
    for role in needs.roles:
        status = roles[role]
        if status.claimed_but_missing:
            raise LawViolation(f"the target claims {ROLE_NAMES[role]}, but {status.reason}")
        if not status.present:
            kit.not_applicable(status.reason, why="declared" if status.declared else "absent")
    if needs.sources and not capabilities.composes_sources:
        kit.not_applicable(
            f"needs a registry built over sources; not claimed (composes_sources=False): "
            f"{capabilities.reason}",
            why="declared",
        )
    if needs.content and not capabilities.composes_sources and not roles["writer"].present:
        kit.not_applicable(
            "the kit cannot put elements into it: it composes no sources (composes_sources=False) "
            f"and {roles['writer'].reason}",
            why="declared",
        )
    if law_id == "registry.element-isolation" and not capabilities.validates_elements:
        kit.not_applicable(
            f"not claimed (validates_elements=False): {capabilities.reason}", why="declared"
        )
    if law_id == "registry.change-events" and not (
        roles["writer"].present or roles["deferred"].present
    ):
        kit.not_applicable(
            "nothing can change its catalogue: it has neither an ElementWriter nor reload()",
            why="absent",
        )
    return roles


def _sources(specs: Sequence[SourceSpec]) -> list[tuple[MutableSource, int]]:
    return [
        (MutableSource(collection(spec.content, f"source {index}")), spec.priority)
        for index, spec in enumerate(specs)
    ]


def _reads(registry: RegistryUnderTest) -> dict[str, Callable[[], Coroutine[Any, Any, object]]]:
    reads: dict[str, Callable[[], Coroutine[Any, Any, object]]] = {}
    if registry.plays("catalog"):
        reads.update(
            tools=registry.tools,
            resources=registry.resources,
            resource_templates=registry.resource_templates,
            prompts=registry.prompts,
        )
    if registry.plays("resolver"):
        reads.update(
            get_tool=lambda: registry.get_tool("a"),
            get_prompt=lambda: registry.get_prompt("a"),
            get_resource=lambda: registry.get_resource("kit://res/a"),
        )
    return reads


def _provided(sources: Sequence[tuple[MutableSource | SlowSource, int]]) -> list[int]:
    return [source.provides for source, _ in sources]


# -- model-based laws ----------------------------------------------------------------------------


@checks("registry.model")
def test_registry_model(kit: Kit) -> None:
    """The catalogue lists exactly the model's refs, each a definition some input holds now."""
    run_machine(kit, PLANS["registry.model"], _require(kit, "registry.model"))


@checks("registry.resolver-agrees")
def test_registry_resolver_agrees(kit: Kit) -> None:
    """Everything listed resolves to the listed definition; nothing unlisted resolves."""
    run_machine(kit, PLANS["registry.resolver-agrees"], _require(kit, "registry.resolver-agrees"))


@checks("registry.precedence")
def test_registry_precedence(kit: Kit) -> None:
    """Each listed ref shows the winner: runtime, then priority, then the source added first."""
    run_machine(kit, PLANS["registry.precedence"], _require(kit, "registry.precedence"))


@checks("registry.element-isolation")
def test_registry_element_isolation(kit: Kit) -> None:
    """Invalid elements (wrong-kind handlers) cost only themselves."""
    run_machine(
        kit, PLANS["registry.element-isolation"], _require(kit, "registry.element-isolation")
    )


@checks("registry.source-isolation")
def test_registry_source_isolation(kit: Kit) -> None:
    """Raising sources cost at most their own elements, and every read succeeds."""
    run_machine(kit, PLANS["registry.source-isolation"], _require(kit, "registry.source-isolation"))


@checks("registry.unavailable-keeps-last-good")
def test_registry_unavailable_keeps_last_good(kit: Kit) -> None:
    """A source raising SourceUnavailableError keeps serving its last good collection."""
    law_id = "registry.unavailable-keeps-last-good"
    run_machine(kit, PLANS[law_id], _require(kit, law_id))


@checks("registry.register-inverse")
def test_registry_register_inverse(kit: Kit) -> None:
    """register(e) then unregister(e.ref) gives back the catalogue exactly, in any state."""
    run_machine(kit, PLANS["registry.register-inverse"], _require(kit, "registry.register-inverse"))


@checks("registry.change-events")
def test_registry_change_events(kit: Kit) -> None:
    """One coalesced change per reload or write, covering exactly what changed; none on load."""
    run_machine(kit, PLANS["registry.change-events"], _require(kit, "registry.change-events"))


# -- lifecycle laws, checked directly ------------------------------------------------------------

_writes: Final = st.lists(st.tuples(st.booleans(), st.sampled_from(ALL_SLOTS)), max_size=4)


@checks("registry.lazy")
def test_registry_lazy(kit: Kit) -> None:
    """Construction, subscriptions, writes and `loaded` provide nothing."""
    roles = _require(kit, "registry.lazy")

    async def body(example: tuple[list[SourceSpec], list[tuple[bool, Slot]]]) -> None:
        specs, writes = example
        sources = _sources(specs)
        registry = await make_registry(kit, sources)
        # Give anything the factory scheduled on the loop (an eager background load) its chance.
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        if roles["change_events"].present:
            unsubscribe = registry.subscribe(lambda _: None)
            unsubscribe()
        if roles["deferred"].present:
            _ = registry.loaded
        if roles["writer"].present:
            for register, (kind, key) in writes:
                if register:
                    await registry.register(element(kind, key, "runtime"))
                else:
                    await registry.unregister(ref_of(kind, key))
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        eager = [index for index, count in enumerate(_provided(sources)) if count]
        if eager:
            raise LawViolation(
                f"source(s) {eager} were provided before any catalogue or resolver call or load() "
                f"(after construction{', writes' if writes and roles['writer'].present else ''})"
            )

    kit.given(st.tuples(source_specs(min_sources=1), _writes), body, name="registry_lazy")


@checks("registry.single-flight")
def test_registry_single_flight(kit: Kit) -> None:
    """Concurrent first catalogue/resolver calls share one load: each source provided once."""
    _require(kit, "registry.single-flight")

    async def body(example: tuple[list[SourceSpec], list[int]]) -> None:
        specs, picks = example
        # Slow sources keep the first load in flight while the other readers arrive.
        sources = [
            (SlowSource(collection(spec.content, f"source {index}"), delay=0.001), spec.priority)
            for index, spec in enumerate(specs)
        ]
        registry = await make_registry(kit, sources)
        reads = _reads(registry)
        names = [sorted(reads)[pick % len(reads)] for pick in picks]
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(reads[name])
        # A per-name read may provide only the sources it needs; the catalogue then completes the
        # load, providing each of the others once and none twice.
        await registry.tools()
        counts = [source.provides for source, _ in sources]
        if any(count != 1 for count in counts):
            overlapping = max(source.max_in_flight for source, _ in sources)
            raise LawViolation(
                f"{len(names)} concurrent first reads ({', '.join(names)}) provided the sources "
                f"{counts} times, up to {overlapping} at once (each must be provided exactly once)"
            )

    readers = st.lists(st.integers(min_value=0, max_value=6), min_size=2, max_size=6)
    kit.given(st.tuples(source_specs(min_sources=1), readers), body, name="registry_single_flight")


@checks("registry.load-idempotent")
def test_registry_load_idempotent(kit: Kit) -> None:
    """A second and third load() provide nothing and change nothing; `loaded` says so."""
    _require(kit, "registry.load-idempotent")

    async def body(example: tuple[list[SourceSpec], bool]) -> None:
        specs, read_first = example
        sources = _sources(specs)
        registry = await make_registry(kit, sources)
        if read_first:
            await registry.tools()
        else:
            await registry.load()
        if not registry.loaded:
            raise LawViolation(f"`loaded` is False after {'a read' if read_first else 'load()'}")
        before, counts = await registry.listing(), _provided(sources)
        await registry.load()
        await registry.load()
        after = await registry.listing()
        if _provided(sources) != counts or any(count != 1 for count in counts):
            raise LawViolation(
                f"load() after {'a read' if read_first else 'load()'} provided again: sources "
                f"provided {_provided(sources)} times in all (each must be provided once)"
            )
        if after != before:
            raise LawViolation("a second load() changed the catalogue")

    kit.given(
        st.tuples(source_specs(min_sources=1), st.booleans()), body, name="registry_load_idempotent"
    )


# -- honest kinds --------------------------------------------------------------------------------


@st.composite
def _declared_sources(draw: st.DrawFn) -> list[tuple[ElementKind, list[Slot]]]:
    """Sources whose declared kinds cover their content, and may claim more."""
    found = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        declared = draw(element_kinds())
        candidates = [slot for slot in ALL_SLOTS if slot[0] in declared]
        content = (
            draw(st.lists(st.sampled_from(candidates), unique=True, max_size=4))
            if candidates
            else []
        )
        found.append((declared, content))
    return found


@final
class _KindsWatch:
    """What a registry's kinds() must answer, and the check that it does, without providing."""

    def __init__(
        self, registry: RegistryUnderTest, sources: list[tuple[MutableSource, int]]
    ) -> None:
        self.registry = registry
        self.sources = sources
        self.runtime: dict[ElementRef, ElementKind] = {}

    def expect(self, moment: str) -> None:
        counts = _provided(self.sources)
        answered = self.registry.kinds()
        if _provided(self.sources) != counts:
            raise LawViolation(f"kinds() provided a source ({moment})")
        declared = [source.declared for source, _ in self.sources]
        expected = ElementKind.NONE
        for kinds in (*declared, *self.runtime.values()):
            expected |= kinds
        if answered != expected:
            raise LawViolation(
                f"kinds() is {answered.label or 'none'} {moment}; the sources declare "
                f"{[kinds.label or 'none' for kinds in declared]} and the runtime registrations "
                f"are of {sorted({k.label for k in self.runtime.values()})}, so it must be "
                f"{expected.label or 'none'}"
            )

    async def write(self, register: bool, slot: Slot) -> None:
        kind, key = slot
        ref = ref_of(kind, key)
        if register:
            await self.registry.register(element(kind, key, "runtime"))
            self.runtime[ref] = kind
        else:
            await self.registry.unregister(ref)
            self.runtime.pop(ref, None)
        self.expect(f"after {'register' if register else 'unregister'}({ref})")


@checks("registry.honest-kinds")
def test_registry_honest_kinds(kit: Kit) -> None:
    """kinds() is the sources' kinds() plus the runtime kinds, at every moment, without providing."""
    roles = _require(kit, "registry.honest-kinds")
    composes = kit.capabilities.composes_sources

    async def body(
        example: tuple[list[tuple[ElementKind, list[Slot]]], list[tuple[bool, Slot]]],
    ) -> None:
        declared, writes = example
        sources = [
            (
                MutableSource(
                    collection([(slot, False) for slot in content], "source"), kinds=kinds
                ),
                0,
            )
            for kinds, content in (declared if composes else [])
        ]
        watch = _KindsWatch(await make_registry(kit, sources), sources)
        watch.expect("right after construction")
        for register, slot in writes if roles["writer"].present else []:
            await watch.write(register, slot)
        if roles["deferred"].present:
            await watch.registry.load()
            watch.expect("after load()")
            await watch.registry.reload()
            watch.expect("after reload()")
        elif roles["catalog"].present:
            await watch.registry.tools()
            watch.expect("after the first read")

    kit.given(st.tuples(_declared_sources(), _writes), body, name="registry_honest_kinds")


# -- templates -----------------------------------------------------------------------------------

_TEMPLATES: Final = (
    "kit://{+path}",
    "kit://items/{id}",
    "kit://items/{id}{?fields}",
    "kit://items/{id}/meta",
    "kit://items/{id}/{part}",
    "kit://users/{user}/items/{id}",
    "kit://files{/path*}",
)
_values: Final = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=6)


@final
@dataclass(frozen=True, slots=True)
class _TemplateCase:
    templates: tuple[str, ...]  # listed, in the order they were added
    probes: tuple[tuple[str, dict[str, str]], ...]  # (template expanded, values)
    exact: tuple[int, ...]  # probes that also get a resource at exactly their URI


@st.composite
def _template_cases(draw: st.DrawFn) -> _TemplateCase:
    templates = tuple(
        draw(st.permutations(_TEMPLATES))[
            : draw(st.integers(min_value=1, max_value=len(_TEMPLATES)))
        ]
    )
    probes = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        template = draw(st.sampled_from(_TEMPLATES))
        names = UriTemplate.parse(template).variables
        probes.append((template, {name: draw(_values) for name in names}))
    exact = tuple(
        draw(st.lists(st.integers(min_value=0, max_value=len(probes) - 1), unique=True, max_size=2))
    )
    return _TemplateCase(templates, tuple(probes), exact)


@checks("registry.templates")
def test_registry_templates(kit: Kit) -> None:
    """Exact resources beat templates, the most specific template wins, variables are decoded."""
    _require(kit, "registry.templates")

    async def body(case: _TemplateCase) -> None:
        listed = {
            text: Element(
                definition=ResourceTemplate(uri_template=text, name=f"template{index}"),
                handler=HandlerRef("mcp_conformance._handlers:resource_template"),
            )
            for index, text in enumerate(case.templates)
        }
        uris = [UriTemplate.parse(template).expand(values) for template, values in case.probes]
        resources = {
            uris[index]: Element(
                definition=Resource(uri=uris[index], name=f"resource{index}"),
                handler=HandlerRef("mcp_conformance._handlers:resource"),
            )
            for index in case.exact
        }
        elements = [*listed.values(), *resources.values()]
        if kit.capabilities.composes_sources:
            registry = await make_registry(kit, [(MutableSource(ElementCollection(elements)), 0)])
        else:
            # Not composing sources: _require made sure there is a writer to fill it through.
            registry = await make_registry(kit, [])
            for item in elements:
                await registry.register(item)
        for (template, values), uri in zip(case.probes, uris, strict=True):
            await _check_resolution(
                registry, uri, listed=listed, resources=resources, expanded=template, values=values
            )

    kit.given(_template_cases(), body, name="registry_templates")


async def _check_resolution(
    registry: RegistryUnderTest,
    uri: str,
    *,
    listed: dict[str, Element],
    resources: dict[str, Element],
    expanded: str,
    values: dict[str, str],
) -> None:
    resolved = await registry.get_resource(uri)
    if uri in resources:
        if resolved is None or resolved.element != resources[uri] or dict(resolved.variables):
            got = (
                "nothing"
                if resolved is None
                else f"{resolved.element.ref} {dict(resolved.variables)}"
            )
            raise LawViolation(f"{uri!r} is exactly a listed resource, but resolved to {got}")
        return
    matching = [
        t
        for t in most_specific_first(UriTemplate.parse(text) for text in listed)
        if t.match(uri) is not None
    ]
    if not matching:
        if resolved is not None:
            raise LawViolation(
                f"{uri!r} matches no listed template but resolved to {resolved.element.ref}"
            )
        return
    best = [t.text for t in matching if t.specificity == matching[0].specificity]
    if resolved is None:
        raise LawViolation(f"{uri!r} matches {best[0]!r} but resolved to nothing")
    key = resolved.element.ref.key
    if key not in best:
        raise LawViolation(
            f"{uri!r} resolved to {key!r}, but the most specific matching template is {best[0]!r} "
            f"(matching, most specific first: {[t.text for t in matching]})"
        )
    expected = UriTemplate.parse(key).match(uri)
    if key == expanded and "+" not in key and "#" not in key:
        expected = {name: value for name, value in values.items() if name in (expected or {})}
    if dict(resolved.variables) != expected:
        raise LawViolation(
            f"{uri!r} resolved to {key!r} with variables {dict(resolved.variables)}, expected "
            f"{expected} (extracted and percent-decoded)"
        )


# -- server laws ---------------------------------------------------------------------------------


@checks("server.visibility-agrees")
def test_server_visibility_agrees(kit: Kit) -> None:
    """Needs a server factory, which the kit does not take yet."""
    kit.not_applicable(
        "needs a server factory (the kit has no server target yet)", why="unsupported"
    )


@checks("server.pagination")
def test_server_pagination(kit: Kit) -> None:
    """Needs a server factory, which the kit does not take yet."""
    kit.not_applicable(
        "needs a server factory (the kit has no server target yet)", why="unsupported"
    )
