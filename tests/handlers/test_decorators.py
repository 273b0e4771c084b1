"""The marking decorators: bare or with options, functions returned unchanged."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import ElementKind, ElementRef, Prompt, Resource, ResourceTemplate, Tool
from mcp_core.handlers import completion, prompt, resource, resource_template, tool
from mcp_core.handlers._decorators import CompletionMark, ElementMark, marks_of


@tool
def bare(x: int) -> int:
    """Double x."""
    return x * 2


@tool(name="named", description="Given.", tags=("a",), output_schema=None)
def configured(x: int) -> int:
    """Ignored."""
    return x


@prompt(completions={"topic": ["a", "b"]})
def explain(topic: str) -> str:
    """Explain a topic."""
    return topic


@resource("res://config", mime_type="application/json")
def config() -> str:
    """The configuration."""
    return "{}"


@resource_template("res://items/{id}")
def item(id: str) -> str:  # noqa: A002 -- the template variable's name
    """An item."""
    return id


@completion(explain, "topic")
@completion("res://items/{id}", "id")
def suggestions(value: str) -> list[str]:
    """Suggestions for two targets."""
    return [value]


class TestDecorators:
    """Marks, not registrations: nothing is derived until a source asks."""

    def test_functions_stay_callable_and_unchanged(self) -> None:
        """The decorated function is the function."""
        assert bare(2) == 4
        assert bare.__name__ == "bare"
        assert configured(3) == 3

    def test_bare_mark(self) -> None:
        """``@tool`` records the kind, no options, and where it was applied."""
        (mark,) = marks_of(bare)
        assert isinstance(mark, ElementMark)
        assert mark.kind is ElementKind.TOOL
        assert dict(mark.options) == {}
        assert mark.where == f"{__file__}:{inspect.getsourcelines(bare)[1]}"
        assert mark.ref(bare) == ElementRef.tool("bare")

    def test_options_are_kept(self) -> None:
        """Only the options given are recorded; ``output_schema=None`` is meaningful."""
        (mark,) = marks_of(configured)
        assert isinstance(mark, ElementMark)
        assert dict(mark.options) == {
            "name": "named",
            "description": "Given.",
            "tags": ("a",),
            "output_schema": None,
        }
        assert mark.key(configured) == "named"

    @given(
        name=st.none() | st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        description=st.none() | st.text(max_size=8),
        tags=st.lists(st.text(max_size=3), max_size=3),
    )
    def test_options_read_as_the_mapping_given(
        self, name: str | None, description: str | None, tags: list[str]
    ) -> None:
        """A mark's options read as a read-only mapping of exactly the options given."""

        @tool(name=name, description=description, tags=tags)
        def fn(x: int) -> int:
            return x

        (mark,) = marks_of(fn)
        assert isinstance(mark, ElementMark)
        expected = {
            key: value
            for key, value in (("name", name), ("description", description), ("tags", tuple(tags)))
            if value not in (None, ())
        }
        options = mark.options
        assert dict(options) == expected == options
        assert len(options) == len(expected)
        assert [options.get(key) for key in expected] == list(expected.values())
        assert options.get("title", "absent") == "absent"
        assert "title" not in options
        with pytest.raises(KeyError):
            options["title"]
        with pytest.raises(TypeError):
            options["name"] = "x"  # type: ignore[index]  # the mutation under test
        assert mark.key(fn) == (name or "fn")

    def test_derive_from_the_mark(self) -> None:
        """Each mark derives its kind's element."""
        marked: list[Any] = [bare, configured, explain, config, item]
        definitions = [
            m.derive(fn).definition
            for fn in marked
            for m in marks_of(fn)
            if isinstance(m, ElementMark)
        ]
        assert [type(d) for d in definitions] == [Tool, Tool, Prompt, Resource, ResourceTemplate]
        named = definitions[1]
        assert isinstance(named, Tool)
        assert named == Tool(name="named", description="Given.", input_schema=named.input_schema)
        assert isinstance(definitions[3], Resource)
        assert definitions[3].mime_type == "application/json"

    def test_completion_marks_stack(self) -> None:
        """A provider may serve several targets; the innermost mark comes first."""
        marks = marks_of(suggestions)
        assert [type(m) for m in marks] == [CompletionMark, CompletionMark]
        assert [(m.target, m.argument) for m in marks if isinstance(m, CompletionMark)] == [
            ("res://items/{id}", "id"),
            (explain, "topic"),
        ]

    def test_a_second_element_mark_is_recorded(self) -> None:
        """Marking twice is not refused here: the collecting source reports both places."""

        @tool
        @prompt
        def both() -> str:
            return "x"

        assert [m.kind for m in marks_of(both) if isinstance(m, ElementMark)] == [
            ElementKind.PROMPT,
            ElementKind.TOOL,
        ]

    def test_a_marked_class_keeps_its_mark_to_itself(self) -> None:
        """A class is marked in its own namespace: its subclasses and instances are unmarked."""
        handler = tool(type("Handler", (), {"__call__": lambda self: None}))
        assert len(marks_of(handler)) == 1
        assert marks_of(type("Sub", (handler,), {})) == ()
        assert marks_of(handler()) == ()

    def test_a_class_is_no_completion_provider(self) -> None:
        """Completion providers are functions; a class is refused at once."""
        with pytest.raises(TypeError, match="completion provider is a function"):
            completion("review", "code")(type("Handler", (), {}))

    def test_resource_needs_its_uri(self) -> None:
        """``@resource`` without a URI is a usage error caught at once."""
        with pytest.raises(TypeError, match="URI"):
            resource(config)  # type: ignore[arg-type]  # the misuse under test

    def test_unmarked_objects_have_no_marks(self) -> None:
        """``marks_of`` is empty for anything unmarked."""
        assert marks_of(len) == ()
        assert marks_of(object()) == ()
