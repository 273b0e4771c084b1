"""Definitions: validation with clear errors, deep immutability, value semantics, wire round trip."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import (
    Annotations,
    Element,
    ElementKind,
    ElementRef,
    FrozenDict,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from mcp_core.elements._definitions import shared_wire
from mcp_core.errors import InvalidElementError, InvalidUriTemplateError
from mcp_core.handlers import Admission, tool_from_function

OBJECT: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}


class TestValidation:
    """Bad input is refused with a message that names the culprit and the fix."""

    @pytest.mark.parametrize("name", ["", "has space", "x" * 129, "slash/name", "tab\t", "ünï"])
    def test_invalid_tool_names(self, name: str) -> None:
        """Tool names outside the spec's character set or length are refused."""
        with pytest.raises(InvalidElementError) as caught:
            Tool(name=name, input_schema=OBJECT)
        assert caught.value.field == "name"

    def test_tool_name_message_explains_the_rule(self) -> None:
        """The message says which characters are allowed."""
        with pytest.raises(
            InvalidElementError, match=re.escape("letters, digits, '_', '-' and '.'")
        ):
            Tool(name="bad/name", input_schema=OBJECT)

    @pytest.mark.parametrize(
        "schema", [{"type": "string"}, {}, {"type": "array"}, {"properties": {}}]
    )
    def test_input_schema_root_must_be_object(self, schema: dict[str, Any]) -> None:
        """A schema whose root is not type object is refused, with the wrapping advice."""
        with pytest.raises(InvalidElementError, match='"type": "object"') as caught:
            Tool(name="t", input_schema=schema)
        assert caught.value.field == "input_schema"
        assert "wrap a scalar" in str(caught.value)

    def test_input_schema_must_be_a_mapping(self) -> None:
        """A non-mapping schema is refused naming its type."""
        with pytest.raises(InvalidElementError, match="must be a JSON object"):
            Tool(name="t", input_schema=["type", "object"])  # type: ignore[arg-type]  # the bug under test

    def test_output_schema_root_must_be_object(self) -> None:
        """Structured results are objects too."""
        with pytest.raises(InvalidElementError, match="output_schema"):
            Tool(name="t", input_schema=OBJECT, output_schema={"type": "integer"})

    def test_schema_must_be_json(self) -> None:
        """A schema holding a non-JSON value says where it is."""
        with pytest.raises(InvalidElementError, match=r"input_schema\.default.*set"):
            Tool(name="t", input_schema={"type": "object", "default": {1, 2}})

    def test_nan_is_not_json(self) -> None:
        """NaN cannot be carried by JSON, so it is refused."""
        with pytest.raises(InvalidElementError, match="finite"):
            Tool(name="t", input_schema={"type": "object", "maximum": float("nan")})

    @pytest.mark.parametrize("uri", ["no-scheme", "/absolute/path", "", "1http://x", "://x"])
    def test_resource_uri_needs_a_scheme(self, uri: str) -> None:
        """A resource URI without a scheme is refused with an example of a good one."""
        with pytest.raises(InvalidElementError, match="has no scheme") as caught:
            Resource(uri=uri, name="r")
        assert caught.value.field == "uri"

    def test_resource_rejects_bad_mime_type_and_size(self) -> None:
        """mime_type must look like type/subtype and size must be a non-negative int."""
        with pytest.raises(InvalidElementError, match="MIME type"):
            Resource(uri="a://b", name="r", mime_type="text")
        with pytest.raises(InvalidElementError, match="non-negative"):
            Resource(uri="a://b", name="r", size=-1)

    def test_template_without_expression_is_refused(self) -> None:
        """A template with no {variable} is a plain resource, and the error says so."""
        with pytest.raises(InvalidUriTemplateError, match="Resource") as caught:
            ResourceTemplate(uri_template="test://fixed", name="t")
        assert caught.value.template == "test://fixed"

    def test_unmatchable_template_is_refused(self) -> None:
        """Two adjacent simple expressions cannot be matched back and are refused."""
        with pytest.raises(InvalidUriTemplateError):
            ResourceTemplate(uri_template="test://{a}{b}", name="t")

    def test_template_needs_a_scheme(self) -> None:
        """A template is a URI too."""
        with pytest.raises(InvalidElementError, match="no scheme"):
            ResourceTemplate(uri_template="items/{id}", name="t")

    def test_prompt_arguments_must_be_unique(self) -> None:
        """Two arguments with one name are refused, naming it."""
        with pytest.raises(InvalidElementError, match=r"\['a'\]"):
            Prompt(name="p", arguments=[PromptArgument(name="a"), PromptArgument(name="a")])

    def test_annotations_are_checked(self) -> None:
        """Priority in [0, 1], audience roles, ISO timestamps."""
        with pytest.raises(InvalidElementError, match=r"\[0, 1\]"):
            Annotations(priority=1.5)
        with pytest.raises(InvalidElementError, match="user"):
            Annotations(audience=["robot"])  # type: ignore[list-item]  # the bug under test
        with pytest.raises(InvalidElementError, match="ISO 8601"):
            Annotations(last_modified="yesterday")

    def test_icon_and_execution_are_checked(self) -> None:
        """Icon needs a src; task support is one of three words."""
        with pytest.raises(InvalidElementError, match="src"):
            Icon(src="")
        with pytest.raises(InvalidElementError, match="forbidden"):
            ToolExecution(task_support="sometimes")  # type: ignore[arg-type]  # the bug under test


class TestImmutability:
    """Definitions are deeply immutable values."""

    def test_caller_mutation_does_not_reach_the_definition(self) -> None:
        """Editing the dict passed in changes nothing in the tool."""
        schema: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}
        tool = Tool(name="t", input_schema=schema)
        schema["properties"]["x"]["type"] = "string"
        assert tool.input_schema["properties"]["x"]["type"] == "integer"

    def test_nested_documents_cannot_be_mutated(self) -> None:
        """The frozen schema has no item assignment at any depth."""
        tool = Tool(name="t", input_schema=OBJECT, meta={"k": [1, {"a": 2}]})
        assert isinstance(tool.input_schema, FrozenDict)
        with pytest.raises(TypeError):
            tool.input_schema["type"] = "array"  # type: ignore[index]  # the bug under test
        assert tool.meta is not None
        assert isinstance(tool.meta["k"], tuple)

    def test_fields_cannot_be_reassigned(self) -> None:
        """Frozen dataclasses refuse assignment; replace() validates anew."""
        tool = Tool(name="t", input_schema=OBJECT)
        with pytest.raises(dataclasses.FrozenInstanceError):
            tool.name = "u"  # type: ignore[misc]  # the bug under test
        with pytest.raises(InvalidElementError):
            dataclasses.replace(tool, name="bad name")

    def test_equal_values_are_equal_and_hash_alike(self) -> None:
        """Equality is by value, including nested schemas, and equal values hash alike."""
        a = Tool(name="t", input_schema={"type": "object", "properties": {"x": {}}})
        b = Tool(name="t", input_schema={"properties": {"x": {}}, "type": "object"})
        assert a == b
        assert hash(a) == hash(b)
        assert len({a, b}) == 1


def add(a: int, b: int = 1) -> int:
    """Add two integers (module level: elements serving it can be pickled)."""
    return a + b


class TestCopies:
    """Definitions and elements copy, deep-copy and pickle as equal values, whatever they cache."""

    @staticmethod
    def values() -> list[object]:
        """Each kind fresh, then with its caches filled: a wire form, a verdict, a vouch."""
        fresh: list[Any] = [
            Tool(name="t", input_schema=OBJECT, meta={"k": [1.5]}),
            Resource(uri="res://x", name="x"),
            ResourceTemplate(uri_template="res://{id}", name="i"),
            Prompt(name="p", arguments=(PromptArgument(name="a"),)),
        ]
        derived = tool_from_function(add)  # vouched for
        cached: list[Any] = [Tool(name="c", input_schema=OBJECT), tool_from_function(add, name="d")]
        shared_wire(cached[0])
        Admission().check(Element(definition=cached[0], handler=add))
        Admission().check(cached[1])
        return [*fresh, derived, *cached]

    @pytest.mark.parametrize(
        "copier",
        [
            copy.copy,
            copy.deepcopy,
            lambda value: pickle.loads(pickle.dumps(value)),  # noqa: S301 -- our own bytes
        ],
        ids=["copy", "deepcopy", "pickle"],
    )
    def test_a_copy_is_an_equal_value(self, copier: Any) -> None:
        """No private cache (an unset slot) breaks copying; the copy equals the original."""
        for value in self.values():
            twin = copier(value)
            assert twin == value
            assert type(twin) is type(value)

    def test_asdict_reads_every_field(self) -> None:
        """``dataclasses.asdict`` works on every definition (no field is left unset)."""
        for value in self.values():
            definition = value.definition if isinstance(value, Element) else value
            assert dataclasses.asdict(definition)["name"] == definition.name  # type: ignore[call-overload,attr-defined]  # a definition


class TestRefs:
    """Kinds and refs."""

    def test_kinds_are_independent_namespaces(self) -> None:
        """A tool and a prompt may share a name without sharing a ref."""
        assert Tool(name="x", input_schema=OBJECT).ref != Prompt(name="x").ref
        assert Tool(name="x", input_schema=OBJECT).ref == ElementRef.tool("x")

    def test_a_ref_names_exactly_one_kind(self) -> None:
        """Combined kinds and empty keys are refused."""
        with pytest.raises(ValueError, match="exactly one kind"):
            ElementRef(ElementKind.TOOL | ElementKind.PROMPT, "x")
        with pytest.raises(ValueError, match="non-empty"):
            ElementRef(ElementKind.TOOL, "")

    def test_kind_labels_round_trip(self) -> None:
        """Every single kind has a label that maps back to it."""
        for kind in (
            ElementKind.TOOL,
            ElementKind.RESOURCE,
            ElementKind.RESOURCE_TEMPLATE,
            ElementKind.PROMPT,
        ):
            assert ElementKind.from_label(kind.label) is kind
        with pytest.raises(ValueError, match="unknown element kind"):
            ElementKind.from_label("widget")


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.from_regex(r"[A-Za-z0-9_.\-]{1,20}", fullmatch=True)
texts = st.none() | st.text(max_size=20)
icons = st.lists(
    st.builds(
        Icon,
        src=st.just("https://example.com/i.png"),
        mime_type=st.none() | st.just("image/png"),
        sizes=st.none() | st.lists(st.sampled_from(["48x48", "any"]), max_size=2),
        theme=st.none() | st.sampled_from(["dark", "light"]),
    ),
    max_size=2,
)
annotation_values = st.builds(
    Annotations,
    audience=st.none() | st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
    priority=st.none() | st.floats(min_value=0, max_value=1),
    last_modified=st.none() | st.just("2025-01-12T15:00:58+00:00"),
)
metas = st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3)
schemas = st.dictionaries(
    st.sampled_from(["properties", "required", "$defs", "additionalProperties"]),
    json_values,
    max_size=3,
).map(lambda d: {**d, "type": "object"})
definitions = st.one_of(
    st.builds(
        Tool,
        name=names,
        input_schema=schemas,
        title=texts,
        description=texts,
        output_schema=st.none() | schemas,
        annotations=st.none()
        | st.builds(
            ToolAnnotations,
            title=texts,
            read_only_hint=st.none() | st.booleans(),
            destructive_hint=st.none() | st.booleans(),
        ),
        execution=st.none()
        | st.builds(
            ToolExecution, task_support=st.sampled_from(["forbidden", "optional", "required"])
        ),
        icons=st.none() | icons,
        meta=metas,
    ),
    st.builds(
        Resource,
        uri=names.map(lambda n: f"test://{n}"),
        name=names,
        title=texts,
        description=texts,
        mime_type=st.none() | st.just("text/plain"),
        size=st.none() | st.integers(min_value=0),
        annotations=st.none() | annotation_values,
        icons=st.none() | icons,
        meta=metas,
    ),
    st.builds(
        ResourceTemplate,
        uri_template=names.map(lambda n: f"test://{n}/{{id}}"),
        name=names,
        description=texts,
        annotations=st.none() | annotation_values,
        meta=metas,
    ),
    st.builds(
        Prompt,
        name=names,
        description=texts,
        arguments=st.none()
        | st.lists(
            st.builds(PromptArgument, name=names, required=st.none() | st.booleans()),
            max_size=3,
            unique_by=lambda a: a.name,
        ),
        icons=st.none() | icons,
        meta=metas,
    ),
)


class TestWire:
    """to_wire() / from_wire()."""

    @given(definitions)
    def test_wire_round_trip_is_lossless(
        self, definition: Tool | Resource | ResourceTemplate | Prompt
    ) -> None:
        """from_wire(to_wire(d)) == d for every generated definition."""
        assert type(definition).from_wire(definition.to_wire()) == definition

    def test_wire_shape_uses_mcp_field_names(self) -> None:
        """CamelCase keys, absent fields omitted, _meta spelled as on the wire."""
        tool = Tool(
            name="t",
            input_schema=OBJECT,
            annotations=ToolAnnotations(read_only_hint=True),
            meta={"k": 1},
        )
        assert tool.to_wire() == {
            "name": "t",
            "inputSchema": OBJECT,
            "annotations": {"readOnlyHint": True},
            "_meta": {"k": 1},
        }
        template = ResourceTemplate(uri_template="a://{x}", name="n", mime_type="text/plain")
        assert template.to_wire() == {
            "uriTemplate": "a://{x}",
            "name": "n",
            "mimeType": "text/plain",
        }

    def test_wire_copy_is_independent(self) -> None:
        """Mutating a wire dict does not touch the definition."""
        tool = Tool(name="t", input_schema=OBJECT)
        wire = tool.to_wire()
        wire["inputSchema"]["type"] = "array"
        assert tool.input_schema["type"] == "object"

    def test_unknown_wire_fields_are_refused(self) -> None:
        """A field this version does not know is an error, not silently dropped."""
        with pytest.raises(InvalidElementError, match="unknown wire field"):
            Tool.from_wire({"name": "t", "inputSchema": OBJECT, "future": 1})
