"""PrefixedSource: namespacing for mounting several apps."""

from __future__ import annotations

import pytest

from mcp_core.elements import ElementCollection, ElementKind, ElementRef, HandlerRef, UriTemplate
from mcp_core.sources import PrefixedSource
from tests.strategies import (
    CountingSource,
    prompt_element,
    resource_element,
    template_element,
    tool_element,
)

COLLECTION = ElementCollection(
    [
        tool_element("add"),
        prompt_element("greet"),
        resource_element("file:///notes.txt"),
        template_element("app://items/{id}{?fields}"),
    ]
)


class TestPrefixedSource:
    """PrefixedSource renames by a documented, reversible rule and changes nothing else."""

    async def test_names_get_prefix_and_separator(self) -> None:
        """Tools and prompts become prefix + separator + name."""
        provided = await PrefixedSource(CountingSource(COLLECTION), "math").provide()
        assert provided.get(ElementRef.tool("math_add")) is not None
        assert provided.get(ElementRef.prompt("math_greet")) is not None
        custom = await PrefixedSource(CountingSource(COLLECTION), "math", separator=".").provide()
        assert custom.get(ElementRef.tool("math.add")) is not None

    async def test_uris_get_the_prefix_joined_to_their_scheme(self) -> None:
        """Resources and templates become prefix + '+' + uri, like git+https."""
        provided = await PrefixedSource(CountingSource(COLLECTION), "math").provide()
        assert [e.ref.key for e in provided][2:] == [
            "math+file:///notes.txt",
            "math+app://items/{id}{?fields}",
        ]

    async def test_templates_still_match_the_same_variables(self) -> None:
        """The renamed template parses and reads the same variables out of a prefixed URI."""
        provided = await PrefixedSource(CountingSource(COLLECTION), "math").provide()
        [template] = provided.resource_templates
        assert template.template.match("math+app://items/42?fields=a") == {
            "id": "42",
            "fields": "a",
        }
        assert UriTemplate.parse(template.uri_template) == template.template

    async def test_everything_but_the_name_is_kept(self) -> None:
        """Handlers, tags and the other definition fields are unchanged."""
        element = tool_element("add", tags=frozenset({"math"}))
        [renamed] = await PrefixedSource(
            CountingSource(ElementCollection([element])), "m"
        ).provide()
        assert renamed.handler == HandlerRef("tests.handlers:add")
        assert renamed.tags == {"math"}
        assert renamed.definition.to_wire() == {**element.definition.to_wire(), "name": "m_add"}

    def test_rename_is_reversible(self) -> None:
        """Stripping the prefix (and separator or '+') gives the original key back."""
        source = PrefixedSource(CountingSource(COLLECTION), "app-1", separator="__")
        for ref in COLLECTION.refs:
            renamed = source.rename(ref).key
            joiner = "__" if ref.kind in ElementKind.TOOL | ElementKind.PROMPT else "+"
            assert renamed.removeprefix("app-1" + joiner) == ref.key

    @pytest.mark.parametrize("prefix", ["", "1app", "my app", "a+b", "a_b", "a/b", "ü"])
    def test_invalid_prefixes_are_refused(self, prefix: str) -> None:
        """A prefix must start with a letter and be usable in tool names and URI schemes."""
        with pytest.raises(ValueError, match="must start with a letter"):
            PrefixedSource(CountingSource(COLLECTION), prefix)

    @pytest.mark.parametrize("separator", ["", " ", "/", ":"])
    def test_invalid_separators_are_refused(self, separator: str) -> None:
        """A separator must use characters a tool name may hold."""
        with pytest.raises(ValueError, match="separator"):
            PrefixedSource(CountingSource(COLLECTION), "app", separator=separator)

    async def test_too_long_names_cost_their_element_only(self) -> None:
        """Attacker: a hostile backend. A renamed tool past 128 characters is left out alone.

        It used to fail the whole provide(), dropping every element of the backend; now the
        others are served and a diagnostic names the element and the fix.
        """
        long, short = tool_element("t" * 125), tool_element("ok")
        source = PrefixedSource(CountingSource(ElementCollection([long, short])), "prefix")
        collection = await source.provide()
        assert [element.ref.key for element in collection] == ["prefix_ok"]
        (diagnostic,) = source.diagnostics()
        assert diagnostic.kind == "skipped"
        assert diagnostic.ref == ElementRef.tool("t" * 125)
        assert "use a shorter prefix" in diagnostic.message
        assert await source.lookup(ElementRef.tool("prefix_" + "t" * 125)) is None
        source_ok = PrefixedSource(CountingSource(ElementCollection([short])), "prefix")
        await source_ok.provide()
        assert not source_ok.diagnostics()

    def test_kinds_are_the_inners(self) -> None:
        """kinds() delegates without providing."""
        inner = CountingSource(COLLECTION)
        assert PrefixedSource(inner, "app").kinds() == COLLECTION.kinds
        assert inner.provides == 0

    def test_repr_shows_prefix(self) -> None:
        """The repr names the inner source, the prefix and a non-default separator."""
        source = PrefixedSource(CountingSource(ElementCollection()), "app", separator=".")
        assert repr(source) == (
            "PrefixedSource(CountingSource(ElementCollection(<0 elements, kinds=none>)), 'app', "
            "separator='.')"
        )
