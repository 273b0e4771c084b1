"""ElementCollection: uniqueness, order, views, merge, fingerprint and the versioned JSON form."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import (
    COLLECTION_FORMAT,
    COLLECTION_VERSION,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    freeze,
)
from mcp_core.elements._json import MAX_JSON_DEPTH, thaw
from mcp_core.errors import (
    CollectionFormatError,
    DuplicateElementError,
    InvalidElementError,
    NotSerializableError,
)


def tool(name: str, handler: object = None, **kwargs: object) -> Element:
    """A tool element with a reference handler unless one is given."""
    return Element(
        definition=Tool(name=name, input_schema={"type": "object"}, **kwargs),  # type: ignore[arg-type]  # test helper passes through
        handler=handler if handler is not None else HandlerRef(f"pkg.tools:{name}"),
    )


def sample() -> ElementCollection:
    """One element of every kind."""
    return ElementCollection(
        [
            tool("add", description="Add."),
            Element(definition=Resource(uri="test://r", name="r"), handler=HandlerRef("pkg:r")),
            Element(
                definition=ResourceTemplate(uri_template="test://items/{id}", name="items"),
                handler=HandlerRef("pkg:items"),
                completions={"id": HandlerRef("pkg:complete_id")},
            ),
            Element(
                definition=Prompt(
                    name="p", arguments=[PromptArgument(name="topic", required=True)]
                ),
                handler=HandlerRef("container.service.p"),
                tags=frozenset({"beta"}),
            ),
        ]
    )


class TestCollection:
    """Construction, lookup and views."""

    def test_duplicate_ref_is_an_error_naming_the_ref(self) -> None:
        """Two elements with one ref cannot share a collection."""
        with pytest.raises(DuplicateElementError, match="tool 'add'") as caught:
            ElementCollection([tool("add"), tool("add", description="again")])
        assert caught.value.ref == ElementRef.tool("add")

    def test_same_name_in_different_kinds_is_fine(self) -> None:
        """Kinds are independent namespaces."""
        collection = ElementCollection(
            [tool("x"), Element(definition=Prompt(name="x"), handler=HandlerRef("p:x"))]
        )
        assert len(collection) == 2
        assert collection.kinds == ElementKind.TOOL | ElementKind.PROMPT

    def test_non_elements_are_refused(self) -> None:
        """A bare definition is not an element, and the message says how to wrap it."""
        with pytest.raises(InvalidElementError, match="Element\\(definition="):
            ElementCollection([Tool(name="t", input_schema={"type": "object"})])  # type: ignore[list-item]  # the bug under test

    def test_views_keep_order(self) -> None:
        """Per-kind views list definitions in the collection's order."""
        collection = ElementCollection([tool("b"), tool("a"), tool("c")])
        assert [t.name for t in collection.tools] == ["b", "a", "c"]
        assert collection.prompts == ()
        assert collection.of_kind(ElementKind.PROMPT) == ElementCollection()
        assert collection.get(ElementRef.tool("a")) == tool("a")
        assert ElementRef.tool("zz") not in collection

    @given(
        st.lists(st.sampled_from("abcdef"), unique=True),
        st.lists(st.sampled_from("abcdef"), unique=True),
    )
    def test_merged_over_prefers_self_and_keeps_everything_else(
        self, top: list[str], bottom: list[str]
    ) -> None:
        """Self wins on conflicts; every ref of either side appears exactly once."""
        upper = ElementCollection(tool(n, description="top") for n in top)
        lower = ElementCollection(tool(n, description="bottom") for n in bottom)
        merged = upper.merged_over(lower)
        assert [t.name for t in merged.tools] == top + [n for n in bottom if n not in top]
        assert all(t.description == "top" for t in merged.tools if t.name in top)

    def test_completions_must_name_declared_arguments(self) -> None:
        """A provider for an argument the prompt does not declare is refused."""
        with pytest.raises(InvalidElementError, match="'nope'"):
            Element(
                definition=Prompt(name="p"),
                handler=HandlerRef("p:p"),
                completions={"nope": HandlerRef("p:c")},
            )
        with pytest.raises(InvalidElementError, match="only prompts and resource templates"):
            Element(
                definition=Tool(name="t", input_schema={"type": "object"}),
                handler=HandlerRef("p:t"),
                completions={"x": HandlerRef("p:c")},
            )

    def test_element_without_handler_is_refused(self) -> None:
        """An element needs something to serve it."""
        with pytest.raises(InvalidElementError, match="needs a handler"):
            Element(definition=Prompt(name="p"), handler=None)


class TestSerialization:
    """to_json / from_json and fingerprint."""

    def test_round_trip_is_lossless(self) -> None:
        """A collection of reference handlers survives JSON exactly."""
        collection = sample()
        assert collection.is_serializable
        again = ElementCollection.from_json(collection.to_json())
        assert again == collection
        assert again.fingerprint == collection.fingerprint

    def test_live_handlers_refuse_json_with_the_culprits(self) -> None:
        """A collection holding callables says which elements and what to do."""
        collection = ElementCollection([tool("live", handler=lambda: 1), tool("ref")])
        assert not collection.is_serializable
        with pytest.raises(NotSerializableError, match="HandlerRef") as caught:
            collection.to_json()
        assert caught.value.refs == (ElementRef.tool("live"),)

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("{not json", "corrupt"),
            ("[]", "not an element collection"),
            ('{"format": "other"}', "not an element collection"),
            ('{"format": "mcp-core/element-collection", "version": "1"}', "invalid version"),
            ('{"format": "mcp-core/element-collection", "version": 1}', 'no "elements"'),
            (
                (
                    '{"format": "mcp-core/element-collection", "version": 1, "elements": [{"kind": "tool", '
                    '"definition": {"name": "bad name", "inputSchema": {"type": "object"}}, "handler": "a:b"}]}'
                ),
                "element #0",
            ),
            (
                '{"format": "mcp-core/element-collection", "version": 1, "elements": [{"kind": "widget"}]}',
                "element #0",
            ),
        ],
    )
    def test_corrupt_documents_are_refused_clearly(self, text: str, message: str) -> None:
        """Each way a document can be broken gets its own message."""
        with pytest.raises(CollectionFormatError, match=message):
            ElementCollection.from_json(text)

    def test_future_version_asks_for_an_upgrade(self) -> None:
        """A document from a newer mcp-core says to upgrade rather than half-reading it."""
        document = json.loads(sample().to_json())
        document["version"] = COLLECTION_VERSION + 1
        with pytest.raises(CollectionFormatError, match="upgrade mcp-core"):
            ElementCollection.from_json(json.dumps(document))

    def test_duplicate_in_document_is_a_format_error(self) -> None:
        """A hand-edited document with a duplicate ref is refused as a document error."""
        document = json.loads(ElementCollection([tool("a")]).to_json())
        document["elements"] *= 2
        with pytest.raises(CollectionFormatError, match="appears twice"):
            ElementCollection.from_json(json.dumps(document))

    @given(st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1), st.randoms())
    def test_fingerprint_is_content_and_order_sensitive(
        self, names: list[str], random: object
    ) -> None:
        """Equal collections share a fingerprint; a changed description changes it."""
        a = ElementCollection(tool(n) for n in names)
        b = ElementCollection(tool(n) for n in names)
        assert a.fingerprint == b.fingerprint
        changed = ElementCollection(
            [tool(names[0], description="changed"), *(tool(n) for n in names[1:])]
        )
        assert changed.fingerprint != a.fingerprint


def schema_of(value: str) -> dict[str, object]:
    """A distinct tool input schema (its one property's description is ``value``)."""
    return {"type": "object", "properties": {"v": {"type": "string", "description": value}}}


def inlined(collection: ElementCollection) -> dict[str, Any]:
    """``collection``'s document with every schema written inline and no schema list."""
    document: dict[str, Any] = json.loads(collection.to_json())
    for record in document["elements"]:
        definition = record["definition"]
        for field in ("inputSchema", "outputSchema"):
            if field in definition:
                definition[field] = document["schemas"][definition[field]]
    del document["schemas"]
    return document


class TestFormatVersions:
    """Version 2 stores each distinct schema once; version 1 documents still load."""

    @given(st.lists(st.sampled_from("xyz"), min_size=1, max_size=30))
    def test_each_distinct_schema_is_written_once(self, uses: list[str]) -> None:
        """The schema table holds one entry per distinct schema; elements index it; it round-trips."""
        collection = ElementCollection(
            Element(
                definition=Tool(name=f"t{i}", input_schema=schema_of(value)),
                handler=HandlerRef(f"pkg:t{i}"),
            )
            for i, value in enumerate(uses)
        )
        document = json.loads(collection.to_json())
        assert document["version"] == COLLECTION_VERSION == 2
        assert sorted(s["properties"]["v"]["description"] for s in document["schemas"]) == sorted(
            set(uses)
        )
        indexes = [record["definition"]["inputSchema"] for record in document["elements"]]
        assert [document["schemas"][i] for i in indexes] == [schema_of(v) for v in uses]
        again = ElementCollection.from_json(collection.to_json())
        assert again == collection
        assert again.fingerprint == collection.fingerprint

    def test_loaded_schemas_are_shared(self) -> None:
        """Definitions that index one schema hold one frozen value."""
        same = [tool(name) for name in ("a", "b", "c")]
        a, b, c = ElementCollection.from_json(ElementCollection(same).to_json())
        assert a.definition.input_schema is b.definition.input_schema  # type: ignore[union-attr]  # tools
        assert b.definition.input_schema is c.definition.input_schema  # type: ignore[union-attr]  # tools

    def test_version_1_documents_load(self) -> None:
        """A document written inline (version 1) reads as the same collection."""
        collection = sample()
        document = inlined(collection)
        document["version"] = 1
        assert ElementCollection.from_json(json.dumps(document)) == collection

    @pytest.mark.parametrize(
        ("index", "message"),
        [
            (-1, "the index of one"),
            (7, "the index of one"),
            (True, "the index of one"),
            ("0", "the index of one"),
            (0.0, "the index of one"),
            ([], "the index of one"),
            (1, "must be a JSON object"),
        ],
    )
    def test_a_bad_schema_reference_costs_only_its_element(
        self, index: object, message: str
    ) -> None:
        """An index out of the table, or to an entry that is no schema: that element, named."""
        document = json.loads(ElementCollection([tool("good"), tool("bad")]).to_json())
        document["schemas"].append(["not", "a", "schema"])
        document["elements"][1]["definition"]["inputSchema"] = index
        text = json.dumps(document)
        with pytest.raises(CollectionFormatError, match=rf"element #1 is invalid: .*{message}"):
            ElementCollection.from_json(text)
        errors: list[CollectionFormatError] = []
        kept = ElementCollection.from_json(text, on_invalid=errors.append)
        assert [e.ref for e in kept] == [ElementRef.tool("good")]
        assert [(e.index, e.ref) for e in errors] == [(1, ElementRef.tool("bad"))]

    @pytest.mark.parametrize("table", [{}, "schemas", 3])
    def test_a_schema_list_that_is_no_list_is_refused(self, table: object) -> None:
        """A version 2 "schemas" that is not a list makes the whole document unusable."""
        document = json.loads(ElementCollection([tool("a")]).to_json())
        document["schemas"] = table
        with pytest.raises(CollectionFormatError, match='"schemas" is not a list'):
            ElementCollection.from_json(json.dumps(document))

    def test_version_2_reads_inline_schemas_too(self) -> None:
        """Records written inline (as version 1 wrote them) are valid version 2 records."""
        collection = sample()
        document = inlined(collection)
        assert document["version"] == 2
        assert ElementCollection.from_json(json.dumps(document)) == collection
        document["elements"][0]["definition"]["inputSchema"] = 0
        with pytest.raises(CollectionFormatError, match=r"element #0 .*0 long\), got 0"):
            ElementCollection.from_json(json.dumps(document))

    def test_a_deep_schema_in_the_table_is_bounded(self) -> None:
        """A table entry nested beyond MAX_JSON_DEPTH makes its elements invalid, not a crash."""
        document = json.loads(ElementCollection([tool("a")]).to_json())
        deep: dict[str, object] = {}
        for _ in range(MAX_JSON_DEPTH + 1):
            deep = {"items": deep}
        document["schemas"][0] = {"type": "object", "properties": {"a": deep}}
        with pytest.raises(CollectionFormatError, match="element #0 is invalid"):
            ElementCollection.from_json(json.dumps(document))


class TestBoundedDecoding:
    """from_json is bounded: a hostile document fails like a corrupt one, never otherwise."""

    @pytest.mark.parametrize(
        "text",
        [
            "[" * 200_000,
            "{" * 100_000,
            '{"format": "mcp-core/element-collection", "version": 1, "elements": ' + "[" * 5000,
        ],
    )
    def test_deep_nesting_is_corrupt(self, text: str) -> None:
        """Nesting deeper than the decoder allows is a CollectionFormatError, not a RecursionError."""
        with pytest.raises(CollectionFormatError, match=r"nested too deeply|corrupt"):
            ElementCollection.from_json(text)

    def test_schema_depth_is_bounded(self) -> None:
        """A schema nested beyond MAX_JSON_DEPTH is an invalid element; at the bound it decodes."""

        def document(depth: int) -> str:
            schema: dict[str, object] = {}
            for _ in range(depth - 1):
                schema = {"items": schema}
            tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": schema}}}
            record = {"kind": "tool", "definition": tool, "handler": "m:f"}
            return json.dumps({"format": COLLECTION_FORMAT, "version": 1, "elements": [record]})

        ElementCollection.from_json(document(MAX_JSON_DEPTH - 3))
        with pytest.raises(CollectionFormatError, match="nested too deeply"):
            ElementCollection.from_json(document(MAX_JSON_DEPTH + 1))

    def test_size_is_bounded(self) -> None:
        """With max_bytes, a longer document is refused before it is parsed."""
        text = ElementCollection([tool("t")]).to_json()
        assert ElementCollection.from_json(text, max_bytes=len(text)) == ElementCollection(
            [tool("t")]
        )
        with pytest.raises(CollectionFormatError, match="more than the 10 allowed"):
            ElementCollection.from_json(text, max_bytes=10)

    def test_expansion_is_bounded(self) -> None:
        """With max_expanded_bytes, shared schemas count once per use; beyond, corrupt.

        A 4 KB schema shared by 100 tools: the document is small, written out it is 100 times
        the schema. Read without the bound (a trusted writer's document) it decodes.
        """
        schema = {"type": "object", "properties": {"a": {"description": "d" * 4000}}}
        shared = ElementCollection(
            [
                Element(
                    definition=Tool(name=f"t{n}", input_schema=schema),
                    handler=HandlerRef(f"pkg.tools:t{n}"),
                )
                for n in range(100)
            ]
        ).to_json()
        assert len(shared) < 20_000
        assert len(ElementCollection.from_json(shared)) == 100
        assert len(ElementCollection.from_json(shared, max_expanded_bytes=500_000)) == 100
        with pytest.raises(CollectionFormatError, match="expands to more than the 100000 bytes"):
            ElementCollection.from_json(shared, max_expanded_bytes=100_000)
        inline = json.loads(shared)
        inline["version"] = 1
        for record in inline["elements"]:
            record["definition"]["inputSchema"] = schema
        text = json.dumps(inline)  # written out already: its own size is its expansion
        assert len(ElementCollection.from_json(text, max_expanded_bytes=len(text))) == 100


class TestFreezeDepth:
    """freeze(max_depth=...) bounds nesting; without it, values nest freely."""

    @given(st.integers(0, 10), st.integers(1, 10))
    def test_bound(self, depth: int, limit: int) -> None:
        """A value nested ``depth`` levels freezes under a bound of at least ``depth``."""
        value: object = 1
        for _ in range(depth):
            value = [value]
        if depth <= limit:
            assert thaw(freeze(value, max_depth=limit)) == value
        else:
            with pytest.raises(ValueError, match="nested too deeply"):
                freeze(value, max_depth=limit)
        assert thaw(freeze(value)) == value
