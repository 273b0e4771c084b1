"""Visibility rules and combinators behave as boolean algebra over per-session verdicts."""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import (
    Element,
    ElementCollection,
    ElementRef,
    HandlerRef,
    ResourceTemplate,
    Tool,
)
from mcp_core.registry import Registry
from mcp_core.sources import StaticSource
from mcp_core.visibility import (
    ALWAYS,
    NEVER,
    ElementVisibility,
    SessionInfo,
    all_of,
    any_of,
    by_tag,
    handler_access,
    not_,
    per_uri,
    predicate,
    requires_scopes,
    scoped_by_tag,
    visible_at,
)

REF = ElementRef.tool("t")
SESSION = SessionInfo(session_id="s1", scopes=frozenset({"read"}))


def verdict(rule: ElementVisibility, ref: ElementRef = REF, session: SessionInfo = SESSION) -> bool:
    """Evaluate a rule synchronously."""

    async def body() -> bool:
        return await rule.is_visible(ref, session)

    return anyio.run(body)


constants = st.lists(st.booleans(), max_size=5)


def rules(values: list[bool]) -> list[ElementVisibility]:
    """Constant rules for a list of verdicts."""
    return [ALWAYS if v else NEVER for v in values]


class TestCombinators:
    """all_of / any_of / not_ / predicate."""

    @given(constants)
    def test_all_of_is_conjunction(self, values: list[bool]) -> None:
        """all_of is visible exactly when every rule is (and for no rules)."""
        assert verdict(all_of(*rules(values))) == all(values)

    @given(constants)
    def test_any_of_is_disjunction(self, values: list[bool]) -> None:
        """any_of is visible exactly when some rule is (hidden for no rules)."""
        assert verdict(any_of(*rules(values))) == any(values)

    @given(constants)
    def test_de_morgan(self, values: list[bool]) -> None:
        """not_(all_of(rs)) == any_of(not_(r) for r in rs)."""
        rs = rules(values)
        assert verdict(not_(all_of(*rs))) == verdict(any_of(*(not_(r) for r in rs)))

    def test_all_of_short_circuits(self) -> None:
        """A hiding rule stops evaluation, so cheap rules first saves lookups."""
        calls: list[str] = []

        def spy(ref: ElementRef, session: SessionInfo) -> bool:
            calls.append(ref.key)
            return True

        assert not verdict(all_of(NEVER, predicate(spy)))
        assert calls == []

    def test_predicate_accepts_sync_and_async_functions(self) -> None:
        """A plain or async function of (ref, session) becomes a rule."""

        async def is_read(ref: ElementRef, session: SessionInfo) -> bool:
            await anyio.lowlevel.checkpoint()
            return "read" in session.scopes

        assert verdict(predicate(lambda ref, session: ref.key == "t"))
        assert verdict(predicate(is_read))
        assert not verdict(predicate(is_read), session=SessionInfo())


def tagged(name: str, *tags: str) -> Element:
    """A tool with tags."""
    return Element(
        definition=Tool(name=name, input_schema={"type": "object"}),
        handler=HandlerRef(f"pkg:{name}"),
        tags=frozenset(tags),
    )


def registry() -> Registry:
    """A registry with a public, a beta, an admin and a two-scope tool."""
    collection = ElementCollection(
        [
            tagged("public"),
            tagged("beta", "beta"),
            tagged("admin", "scope:admin"),
            tagged("both", "scope:admin", "scope:write"),
        ]
    )
    return Registry([(StaticSource(collection), 0)])


class TestTagRules:
    """by_tag, scoped_by_tag, requires_scopes."""

    def test_by_tag_hides_and_shows_only(self) -> None:
        """Hide removes tagged elements; show_only keeps only tagged ones."""
        reg = registry()
        hide_beta = by_tag(reg, hide=["beta"])
        only_beta = by_tag(reg, show_only=["beta"])
        assert not verdict(hide_beta, ElementRef.tool("beta"))
        assert verdict(hide_beta, ElementRef.tool("public"))
        assert verdict(only_beta, ElementRef.tool("beta"))
        assert not verdict(only_beta, ElementRef.tool("public"))

    @given(st.sets(st.sampled_from(["admin", "write", "read"])))
    def test_scoped_by_tag_needs_every_scope(self, scopes: set[str]) -> None:
        """An element tagged scope:X is visible only to sessions holding every such X."""
        reg = registry()
        rule = scoped_by_tag(reg)
        session = SessionInfo(scopes=frozenset(scopes))
        assert verdict(rule, ElementRef.tool("public"), session)
        assert verdict(rule, ElementRef.tool("admin"), session) == ("admin" in scopes)
        assert verdict(rule, ElementRef.tool("both"), session) == ({"admin", "write"} <= scopes)

    def test_unknown_ref_is_not_hidden_by_a_tag_rule(self) -> None:
        """A tag rule leaves missing elements to resolution (which answers 'not found')."""
        assert verdict(scoped_by_tag(registry()), ElementRef.tool("missing"), SessionInfo())

    @given(st.sets(st.sampled_from(["a", "b", "c"])), st.sets(st.sampled_from(["a", "b", "c"])))
    def test_requires_scopes_is_subset_check(self, needed: set[str], held: set[str]) -> None:
        """A listed ref is visible iff the session holds all of its scopes; others always."""
        rule = requires_scopes({REF: needed})
        session = SessionInfo(scopes=frozenset(held))
        assert verdict(rule, REF, session) == (needed <= held)
        assert verdict(rule, ElementRef.prompt("other"), session)


class TestSessionInfo:
    """SessionInfo is an immutable value."""

    def test_mappings_are_read_only_copies(self) -> None:
        """Claims and attributes cannot be changed through the session."""
        claims = {"sub": "alice"}
        session = SessionInfo(principal="alice", claims=claims)
        claims["sub"] = "mallory"
        assert session.claims["sub"] == "alice"
        assert hash(session) == hash(SessionInfo(principal="alice"))

    def test_scopes_must_be_a_set(self) -> None:
        """A single string is a common slip and is refused."""
        import pytest

        with pytest.raises(TypeError, match="set of strings"):
            SessionInfo(scopes="admin")  # type: ignore[arg-type]  # the bug under test


TEMPLATE = ElementRef.resource_template("node://{id}")


def at(rule: ElementVisibility, node: str, session: SessionInfo = SESSION) -> bool:
    """The whole decision for reading ``node://<node>`` through the template."""

    async def body() -> bool:
        uri, variables = f"node://{node}", {"id": node}
        return await visible_at(rule, TEMPLATE, session, uri=uri, variables=variables)

    return anyio.run(body)


def own(ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo) -> bool:
    """Only the node whose id is the session's principal."""
    return variables["id"] == session.principal


def admitting(node: str) -> ElementVisibility:
    """A per-URI rule admitting node ``node`` only."""
    return per_uri(lambda ref, uri, variables, session: variables["id"] == node)


# A rule tree: a constant (a list-time rule), a per-URI rule admitting one node, or a combination.
trees = st.recursive(
    st.one_of(st.sampled_from([ALWAYS, NEVER]), st.sampled_from(["1", "2"]).map(admitting)),
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda rs: all_of(*rs)),
        st.lists(children, max_size=3).map(lambda rs: any_of(*rs)),
        children.map(not_),
    ),
    max_leaves=8,
)


class TestUriVisibility:
    """A rule may decide on the concrete URI a template is read at; lists are unaffected."""

    def test_per_uri_decides_reads_not_lists(self) -> None:
        """per_uri leaves the template listed and admits only the URIs its function admits."""
        rule = per_uri(own)
        user_1 = SessionInfo(principal="1")
        assert verdict(rule, TEMPLATE, user_1)
        assert at(rule, "1", user_1)
        assert not at(rule, "2", user_1)

    def test_async_functions(self) -> None:
        """The function may be async."""

        async def own_async(
            ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
        ) -> bool:
            await anyio.lowlevel.checkpoint()
            return own(ref, uri, variables, session)

        assert at(per_uri(own_async), "1", SessionInfo(principal="1"))

    def test_rules_without_uri_decisions_decide_by_ref(self) -> None:
        """A plain rule's verdict on the template is its verdict on every URI."""
        assert at(ALWAYS, "1")
        assert not at(NEVER, "1")

    @given(trees, st.sampled_from(["1", "2"]))
    def test_uri_narrows(self, rule: ElementVisibility, node: str) -> None:
        """visibility.uri-narrows: what lists hide, no URI reveals."""
        if at(rule, node):
            assert verdict(rule, TEMPLATE)

    @given(st.lists(trees, min_size=1, max_size=3), st.sampled_from(["1", "2"]))
    def test_combinators_combine_whole_decisions(
        self, rules: list[ElementVisibility], node: str
    ) -> None:
        """all_of and any_of combine whole decisions; not_ negates the list-time decision."""
        decisions = [at(rule, node) for rule in rules]
        assert at(all_of(*rules), node) == all(decisions)
        assert at(any_of(*rules), node) == any(decisions)
        assert at(not_(rules[0]), node) == (not verdict(rules[0], TEMPLATE))


class _Plugin:
    """A handler with its own access check: only the target named like the session's principal."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def check_access(self, target: str, session: SessionInfo) -> bool:
        self.asked.append(target)
        return target.endswith(session.principal or "-")


class _Lookup:
    """The elements by ref (what ``Registry.get`` answers)."""

    def __init__(self, collection: ElementCollection) -> None:
        self.collection = collection

    async def get(self, ref: ElementRef) -> Element | None:
        return self.collection.get(ref)


class TestHandlerAccess:
    """handler_access: each handler's check_access(target, session), with a concrete target."""

    def plugins(self) -> tuple[_Lookup, _Plugin]:
        plugin = _Plugin()
        node = ResourceTemplate(uri_template="node://{id}", name="node")
        schema = {"type": "object"}
        collection = ElementCollection(
            [
                Element(definition=node, handler=plugin),
                Element(definition=Tool(name="tool_1", input_schema=schema), handler=plugin),
                Element(definition=Tool(name="plain", input_schema=schema), handler=len),
            ]
        )
        return _Lookup(collection), plugin

    def test_templates_listed_uris_decided_by_the_plugin(self) -> None:
        """The template stays listed; each concrete URI is the plugin's decision."""
        registry, plugin = self.plugins()
        rule = handler_access(registry)
        user_1 = SessionInfo(principal="1")
        assert verdict(rule, TEMPLATE, user_1)
        assert at(rule, "1", user_1)
        assert not at(rule, "2", user_1)
        assert plugin.asked == ["node://1", "node://2"]

    def test_tools_by_name_and_handlers_without_a_check(self) -> None:
        """A tool's check gets its name; a handler without check_access is not hidden."""
        registry, plugin = self.plugins()
        rule = handler_access(registry)
        assert verdict(rule, ElementRef.tool("tool_1"), SessionInfo(principal="1"))
        assert not verdict(rule, ElementRef.tool("tool_1"), SessionInfo(principal="2"))
        assert verdict(rule, ElementRef.tool("plain"), SessionInfo(principal="2"))
        assert plugin.asked == ["tool_1", "tool_1"]

    def test_method_must_be_a_name(self) -> None:
        """A method that is not an identifier is refused at once."""
        registry, _ = self.plugins()
        with pytest.raises(ValueError, match="must name a method"):
            handler_access(registry, method="check access")
