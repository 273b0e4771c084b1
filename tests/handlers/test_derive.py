"""Elements derived from functions: names, descriptions, input and output schemas, arguments."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typing_extensions import TypedDict

from mcp_core.elements import (
    Element,
    HandlerRef,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.elements._json import thaw
from mcp_core.errors import InvalidElementError
from mcp_core.handlers import (
    ClientGateway,
    Image,
    RequestedUri,
    Text,
    ToolResult,
    prompt_from_function,
    resource_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.handlers._functions import EMPTY, WRAPPED_MARKER, _SchemaGenerator, shape_of


class Color(enum.Enum):
    """A string enum."""

    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Address:
    """A postal address."""

    street: str
    number: int = 1


class Movie(TypedDict):
    """A movie."""

    title: str
    year: int


class Opaque:
    """A type pydantic cannot describe."""


class User(pydantic.BaseModel):
    """A user."""

    name: str
    age: int | None = None


def tool_of(fn: Any, **options: Any) -> Tool:
    """The Tool definition derived from ``fn``."""
    definition = tool_from_function(fn, **options).definition
    assert isinstance(definition, Tool)
    return definition


def input_schema(fn: Any) -> dict[str, Any]:
    """The plain input schema derived from ``fn``."""
    schema: dict[str, Any] = thaw(tool_of(fn).input_schema)
    return schema


def output_schema(fn: Any) -> dict[str, Any] | None:
    """The plain output schema derived from ``fn``, or None."""
    schema = tool_of(fn).output_schema
    return None if schema is None else thaw(schema)


class TestToolFromFunction:
    """Names, descriptions and input schemas of derived tools."""

    def test_name_and_description_from_the_function(self) -> None:
        """``__name__`` and the docstring without its parameter section."""

        def search(query: str, limit: int = 10) -> list[str]:
            """Search the catalogue.

            Matches titles and authors.

            Args:
                query: What to look for.
                limit: At most this many results,
                    counted after de-duplication.

            Returns:
                Matching titles.
            """
            return []

        tool = tool_of(search)
        assert tool.name == "search"
        assert tool.description == (
            "Search the catalogue.\n\nMatches titles and authors.\n\nReturns:\n    Matching titles."
        )
        assert input_schema(search) == {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {
                    "type": "integer",
                    "default": 10,
                    "description": "At most this many results, counted after de-duplication.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }

    def test_options_override_what_is_derived(self) -> None:
        """``name``, ``title``, ``description``, ``tags`` and ``meta`` are taken as given."""

        def f() -> None:
            """Ignored."""

        element = tool_from_function(
            f, name="g", title="G", description="Given.", tags={"x"}, meta={"k": 1}
        )
        assert element.definition == Tool(
            name="g", title="G", description="Given.", input_schema=input_schema(f), meta={"k": 1}
        )
        assert element.tags == frozenset({"x"})
        assert element.handler is f

    def test_rich_types_keep_their_defs(self) -> None:
        """Annotated descriptions, Literal, enums, optionals, dataclasses, TypedDict, models."""

        def book(  # noqa: PLR0917, D417 -- a wide signature on purpose; some parameters stay undocumented
            title: Annotated[str, pydantic.Field(description="The title.", min_length=1)],
            mode: Literal["fast", "slow"],
            color: Color,
            address: Address,
            movie: Movie,
            user: User | None = None,
        ) -> None:
            """Book something.

            Args:
                title: Overridden by the Field description.
                mode: How fast.
            """

        schema = input_schema(book)
        properties = schema["properties"]
        assert properties["title"] == {
            "type": "string",
            "description": "The title.",
            "minLength": 1,
        }
        assert properties["mode"] == {
            "type": "string",
            "enum": ["fast", "slow"],
            "description": "How fast.",
        }
        assert properties["color"] == {"$ref": "#/$defs/Color"}
        assert properties["address"] == {"$ref": "#/$defs/Address"}
        assert properties["user"] == {
            "anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}],
            "default": None,
        }
        assert set(schema["$defs"]) == {"Color", "Address", "Movie", "User"}
        assert schema["$defs"]["Address"]["required"] == ["street"]
        assert schema["required"] == ["title", "mode", "color", "address", "movie"]
        assert "title" not in schema

    def test_parameter_names_pydantic_reserves(self) -> None:
        """``_private``, ``model_config`` and ``json`` are ordinary argument names here."""

        def odd(_private: list[int], model_config: str, json: dict[str, int]) -> None:
            """Odd names."""

        assert list(input_schema(odd)["properties"]) == ["_private", "model_config", "json"]

    def test_numpy_and_sphinx_docstrings(self) -> None:
        """Parameter descriptions are read from NumPy and Sphinx docstrings too."""

        def numpy_style(a: int, b: int) -> None:
            """Do a thing.

            Parameters
            ----------
            a : int
                The first.
            b : int
                The second.
            """

        def sphinx_style(a: int) -> None:
            """Do a thing.

            :param a: The first.
            :type a: int
            """

        assert input_schema(numpy_style)["properties"]["b"]["description"] == "The second."
        assert tool_of(numpy_style).description == "Do a thing."
        assert input_schema(sphinx_style)["properties"]["a"]["description"] == "The first."
        assert tool_of(sphinx_style).description == "Do a thing."

    def test_kwargs_allow_extra_arguments(self) -> None:
        """``**kwargs`` publishes ``additionalProperties: true``."""

        def loose(a: int, **rest: Any) -> None:
            """Loose."""

        assert input_schema(loose)["additionalProperties"] is True

    def test_star_args_cannot_be_published(self) -> None:
        """Arguments arrive by name, so ``*args`` is refused with a fix."""

        def variadic(*numbers: int) -> int:
            return sum(numbers)

        with pytest.raises(InvalidElementError, match=r"\*numbers cannot receive arguments"):
            tool_from_function(variadic)

    def test_unresolvable_annotation_names_the_parameter(self) -> None:
        """A string annotation that names nothing is reported with the parameter."""
        namespace: dict[str, Any] = {}
        exec(  # noqa: S102 -- a function whose annotation cannot be resolved
            "from __future__ import annotations\ndef f(x: Missing) -> None:\n    pass\n", namespace
        )
        with pytest.raises(InvalidElementError, match="'Missing' of parameter 'x'"):
            tool_from_function(namespace["f"])

    def test_requested_uri_is_for_resources_only(self) -> None:
        """A tool cannot take the RequestedUri."""

        def f(uri: RequestedUri) -> None:
            """No."""

        with pytest.raises(InvalidElementError, match="RequestedUri"):
            tool_from_function(f)

    def test_gateway_never_appears_in_the_schema(self) -> None:
        """Regression: gateways in any position and spelling are injected, not published."""

        def f(a: int, gw: ClientGateway, *, b: str = "x") -> None:
            """F."""

        def g(gw: ClientGateway | None = None) -> None:
            """G."""

        assert set(input_schema(f)["properties"]) == {"a", "b"}
        assert input_schema(g) == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }

    def test_simple_signatures_skip_pydantic(self) -> None:
        """Scalar-only signatures derive their schema without building a pydantic model."""
        functions = []
        for index in range(2000):
            namespace: dict[str, Any] = {}
            exec(f"def tool_{index}(x: int) -> int:\n    'Echo.'\n    return x\n", namespace)  # noqa: S102 -- many distinct functions
            functions.append(namespace[f"tool_{index}"])
        elements = [tool_from_function(fn) for fn in functions]
        assert len({e.ref.key for e in elements}) == 2000
        assert all(shape_of(fn)._model is None for fn in functions)


class TestToolOutputSchema:
    """Output schemas from return annotations."""

    def test_scalar_results_are_wrapped(self) -> None:
        """A non-object result is published as ``{"result": ...}`` with the marker."""

        def count() -> int:
            return 1

        assert output_schema(count) == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
            WRAPPED_MARKER: True,
        }

    def test_wrapped_defs_move_to_the_root(self) -> None:
        """``$defs`` of a wrapped type stay resolvable from the root."""

        def colors() -> list[Color]:
            return []

        schema = output_schema(colors)
        assert schema is not None
        assert schema["properties"]["result"] == {
            "type": "array",
            "items": {"$ref": "#/$defs/Color"},
        }
        assert "Color" in schema["$defs"]

    @pytest.mark.parametrize("returns", [Address, Movie, User, dict[str, int]])
    def test_object_results_are_published_as_is(self, returns: Any) -> None:
        """Dataclasses, TypedDicts, models and string-keyed dicts are objects already."""

        def f() -> None:
            """F."""

        f.__annotations__["return"] = returns
        schema = output_schema(f)
        assert schema is not None
        assert schema["type"] == "object"
        assert WRAPPED_MARKER not in schema

    @pytest.mark.parametrize(
        "returns", [str, None, Any, Text, Image | Text, list[Text], ToolResult, bytes]
    )
    def test_no_schema_for_text_and_content(self, returns: Any) -> None:
        """Text, nothing, anything and content values publish no output schema."""

        def f() -> None:
            """F."""

        f.__annotations__["return"] = returns
        assert output_schema(f) is None

    def test_explicit_output_schema_wins(self) -> None:
        """``output_schema=None`` publishes none; a mapping is published as given."""

        def count() -> int:
            return 1

        assert tool_of(count, output_schema=None).output_schema is None
        assert tool_of(count, output_schema={"type": "object"}).output_schema == {"type": "object"}

    def test_undescribable_return_type(self) -> None:
        """A return type pydantic cannot describe is an error suggesting output_schema=None."""

        def f() -> Opaque:
            return Opaque()

        with pytest.raises(InvalidElementError, match="output_schema=None"):
            tool_from_function(f)


class TestResourceFromFunction:
    """Fixed resources."""

    def test_definition(self) -> None:
        """Name from the function, description from the docstring, type guessed from the URI."""

        def config() -> str:
            """The configuration."""
            return "{}"

        element = resource_from_function(config, "file:///etc/app.json")
        assert element.definition == Resource(
            uri="file:///etc/app.json",
            name="config",
            description="The configuration.",
            mime_type="application/json",
        )

    def test_required_parameters_are_refused(self) -> None:
        """A fixed resource is read without arguments."""

        def by_id(id: str) -> str:  # noqa: A002 -- the parameter being refused
            return id

        with pytest.raises(InvalidElementError, match="resource template"):
            resource_from_function(by_id, "res://x")


class TestResourceTemplateFromFunction:
    """Resource templates: variables bind to parameters by name."""

    def test_definition(self) -> None:
        """The template is parsed; options pass through."""

        def item(id: int) -> str:  # noqa: A002 -- the template variable's name
            """An item."""
            return str(id)

        element = resource_template_from_function(item, "res://items/{id}", mime_type="text/plain")
        assert element.definition == ResourceTemplate(
            uri_template="res://items/{id}",
            name="item",
            description="An item.",
            mime_type="text/plain",
        )

    def test_variable_named_uri_binds_by_name(self) -> None:
        """Regression: ``{uri}`` is an ordinary variable; RequestedUri is separate."""

        def page(uri: str, requested: RequestedUri) -> str:
            return uri

        element = resource_template_from_function(page, "web://{uri}")
        assert isinstance(element.definition, ResourceTemplate)
        assert element.definition.template.variables == ("uri",)

    def test_unbound_variables_and_missing_parameters(self) -> None:
        """Both directions of a mismatch are reported in one message."""

        def item(name: str) -> str:
            return name

        with pytest.raises(InvalidElementError, match=r"\['id'\].*\['name'\]"):
            resource_template_from_function(item, "res://items/{id}")

    def test_kwargs_take_any_variable(self) -> None:
        """``**variables`` receives variables without a parameter (dotted names, for one)."""

        def anything(**variables: str) -> str:
            return repr(variables)

        resource_template_from_function(anything, "res://{a}/{b}")

    def test_completions_are_attached(self) -> None:
        """Completion providers are validated against the template variables."""

        def item(kind: str) -> str:
            return kind

        element = resource_template_from_function(
            item, "res://{kind}", completions={"kind": ["a", "b"]}
        )
        assert element.completions == {"kind": ["a", "b"]}
        with pytest.raises(InvalidElementError, match="not among"):
            resource_template_from_function(item, "res://{kind}", completions={"other": ["a"]})


class TestPromptFromFunction:
    """Prompts: parameters become arguments."""

    def test_arguments(self) -> None:
        """Required without a default; descriptions and titles from docstrings and Fields."""

        def review(  # noqa: D417 -- the Field describes ``language``; the gateway is not an argument
            code: str,
            language: Annotated[
                str, pydantic.Field(title="Language", description="Its language.")
            ] = "python",
            gateway: ClientGateway | None = None,
        ) -> str:
            """Review code.

            Args:
                code: The code to review.
            """
            return code

        element = prompt_from_function(review)
        assert element.definition == Prompt(
            name="review",
            description="Review code.",
            arguments=[
                PromptArgument(name="code", description="The code to review.", required=True),
                PromptArgument(
                    name="language", title="Language", description="Its language.", required=False
                ),
            ],
        )

    def test_handler_is_the_function(self) -> None:
        """The element's handler is the function itself (live, not serializable)."""

        def p() -> str:
            return "x"

        element = prompt_from_function(p)
        assert element.handler is p
        assert not element.is_serializable
        assert Element(definition=element.definition, handler=HandlerRef("m:p")).is_serializable


SIMPLE_TYPES = st.sampled_from([int, float, str, bool, EMPTY])
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)


class TestDirectSchemaPath:
    """The pydantic-free path for simple signatures writes exactly the schema pydantic would."""

    @given(
        st.lists(
            st.tuples(
                SIMPLE_TYPES,
                st.one_of(st.just(EMPTY), JSON_SCALARS),
                st.one_of(st.none(), st.text(max_size=8)),
            ),
            max_size=5,
        )
    )
    def test_same_schema_as_pydantic(self, specs: list[tuple[Any, Any, str | None]]) -> None:
        """For every simple signature, the direct schema equals the pydantic-derived one."""
        names = [f"p{index}" for index in range(len(specs))]
        doc_lines = [
            f"    {name}: {desc}"
            for name, (_, _, desc) in zip(names, specs, strict=True)
            if desc and desc.strip()
        ]
        doc = "Summary.\n\nArgs:\n" + "\n".join(doc_lines) if doc_lines else "Summary."
        namespace: dict[str, Any] = {"EMPTY": EMPTY}
        params = []
        for index, (annotation, default, _) in enumerate(specs):
            namespace[f"T{index}"] = annotation
            namespace[f"D{index}"] = default
            text = f"p{index}" if annotation is EMPTY else f"p{index}: T{index}"
            params.append(text if default is EMPTY else f"{text} = D{index}")
        source = (
            f"def f(*, {', '.join(params)}) -> None:\n    pass\n"
            if params
            else "def f() -> None:\n    pass\n"
        )
        exec(source, namespace)  # noqa: S102 -- builds the signature under test
        fn = namespace["f"]
        fn.__doc__ = doc
        shape = shape_of(fn)
        assert shape.direct
        direct = thaw(shape.input_schema())
        assert direct == shape.model().model_json_schema(schema_generator=_SchemaGenerator)
