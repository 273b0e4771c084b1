"""ValidatedSource: drops individually invalid elements, one diagnostic each."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from mcp_core.elements import Element, ElementCollection, ElementRef
from mcp_core.sources import ValidatedSource
from tests.strategies import CountingSource, prompt_element, tool_element

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
TUPLE_ITEMS: dict[str, object] = {"type": "array", "items": [{"type": "string"}]}  # draft-07 only


def with_property(name: str, schema: dict[str, object], **extra: object) -> Element:
    """A tool whose input schema has one property ``x`` with ``schema``."""
    return tool_element(name, input_schema={"type": "object", "properties": {"x": schema}, **extra})


class RejectNamed:
    """An invoker stand-in: complains about elements whose name starts with 'bad'."""

    def check(self, element: Element) -> Sequence[str]:
        """One problem for 'bad*' elements."""
        return (
            ["handler tests.handlers:bad does not exist"]
            if element.ref.key.startswith("bad")
            else []
        )


class Crashing:
    """An invoker whose check itself crashes."""

    def check(self, element: Element) -> Sequence[str]:
        """Always raises."""
        raise LookupError("container not ready")


class TestValidatedSource:
    """ValidatedSource costs an invalid element only itself."""

    async def test_drops_exactly_the_invalid_element(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """One bad input schema: that tool goes, with a diagnostic; the rest stays, in order."""
        bad = with_property("bad", {"type": "strng"})
        inner = CountingSource(ElementCollection([tool_element("a"), bad, prompt_element("p")]))
        source = ValidatedSource(inner)
        with caplog.at_level(logging.DEBUG, logger="mcp_core.sources"):
            provided = await source.provide()
        assert provided.refs == (ElementRef.tool("a"), ElementRef.prompt("p"))
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "skipped"
        assert diagnostic.ref == ElementRef.tool("bad")
        assert diagnostic.message.startswith(
            "input_schema is not a valid JSON Schema at $.properties.x.type"
        )
        # Logged for debugging only: whoever serves the source reports the diagnostic once.
        assert [r.levelno for r in caplog.records if "tool 'bad'" in r.getMessage()] == [
            logging.DEBUG
        ]

    async def test_a_healthy_collection_passes_unchanged(self) -> None:
        """With nothing to drop, the inner collection itself is returned."""
        collection = ElementCollection([tool_element("a"), prompt_element("p")])
        source = ValidatedSource(CountingSource(collection))
        assert await source.provide() is collection
        assert source.diagnostics() == ()

    async def test_output_schemas_are_checked_too(self) -> None:
        """An invalid output schema drops the tool as well."""
        bad = tool_element("bad", output_schema={"type": "object", "required": "x"})
        source = ValidatedSource(CountingSource(ElementCollection([bad])))
        assert len(await source.provide()) == 0
        assert source.diagnostics()[0].message.startswith(
            "output_schema is not a valid JSON Schema at $.required"
        )

    async def test_format_assertions_catch_bad_regexes(self) -> None:
        """A pattern that is not a regex is caught (the meta-schema's format check)."""
        bad = with_property("bad", {"type": "string", "pattern": "(unclosed"})
        source = ValidatedSource(CountingSource(ElementCollection([bad])))
        assert len(await source.provide()) == 0

    async def test_the_dialect_follows_schema(self) -> None:
        """Array-form items is valid under a draft-07 $schema and invalid under the 2020-12 default."""
        draft7 = with_property("draft7", TUPLE_ITEMS, **{"$schema": DRAFT_07})
        default = with_property("default", TUPLE_ITEMS)
        source = ValidatedSource(CountingSource(ElementCollection([draft7, default])))
        assert (await source.provide()).refs == (ElementRef.tool("draft7"),)

    async def test_an_unknown_dialect_falls_back_to_2020_12(self) -> None:
        """An unknown $schema is checked as Draft 2020-12 (and raises no warning)."""
        unknown = with_property(
            "unknown", TUPLE_ITEMS, **{"$schema": "https://example.com/dialect"}
        )
        source = ValidatedSource(CountingSource(ElementCollection([unknown])))
        assert len(await source.provide()) == 0

    async def test_invoker_problems_drop_the_element(self) -> None:
        """The invoker's check() problems are diagnostics too."""
        inner = CountingSource(
            ElementCollection([tool_element("good"), tool_element("bad_handler")])
        )
        source = ValidatedSource(inner, invoker=RejectNamed())
        assert (await source.provide()).refs == (ElementRef.tool("good"),)
        assert source.diagnostics()[0].message == "handler tests.handlers:bad does not exist"

    async def test_a_crashing_invoker_costs_each_element_only_itself(self) -> None:
        """A check() that raises is reported as that element's problem, not a source failure."""
        source = ValidatedSource(
            CountingSource(ElementCollection([tool_element("a")])), invoker=Crashing()
        )
        assert len(await source.provide()) == 0
        assert "LookupError: container not ready" in source.diagnostics()[0].message

    async def test_diagnostics_describe_the_last_provide(self) -> None:
        """Once the bad element is fixed, the next provide() reports nothing."""
        inner = CountingSource(ElementCollection([with_property("bad", {"type": "strng"})]))
        source = ValidatedSource(inner)
        await source.provide()
        inner.collection = ElementCollection([tool_element("bad")])
        await source.provide()
        assert source.diagnostics() == ()

    def test_invoker_needs_a_check_method(self) -> None:
        """An invoker without check() is refused at construction."""
        with pytest.raises(TypeError, match=r"check\(element\)"):
            ValidatedSource(CountingSource(ElementCollection()), invoker=object())  # type: ignore[arg-type]  # the mistake under test

    def test_repr_names_the_invoker(self) -> None:
        """The repr names the inner source and the invoker's type."""
        source = ValidatedSource(CountingSource(ElementCollection()), invoker=RejectNamed())
        assert repr(source) == (
            "ValidatedSource(CountingSource(ElementCollection(<0 elements, kinds=none>)), "
            "invoker=RejectNamed)"
        )
