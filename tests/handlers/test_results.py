"""Result normalisation and content values: exact MCP 2025-11-25 wire shapes."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pydantic
import pytest

from mcp_core.elements import Annotations
from mcp_core.handlers import (
    Audio,
    EmbeddedResource,
    Image,
    Message,
    ResourceLink,
    Text,
    ToolResult,
)
from mcp_core.handlers._functions import WRAPPED_MARKER
from mcp_core.handlers._results import (
    normalize_prompt_messages,
    normalize_resource_contents,
    normalize_tool_result,
)

WRAPPED = {"type": "object", "properties": {"result": {}}, WRAPPED_MARKER: True}


@dataclasses.dataclass
class Point:
    """A dataclass result."""

    x: int
    y: int


class Model(pydantic.BaseModel):
    """A pydantic result."""

    name: str


class TestContentValues:
    """Content values render the specification's ContentBlock shapes."""

    def test_text(self) -> None:
        """Text, with optional annotations and _meta."""
        text = Text("hi", annotations=Annotations(audience=["user"], priority=0.5), meta={"k": [1]})
        assert text.to_wire() == {
            "type": "text",
            "text": "hi",
            "annotations": {"audience": ["user"], "priority": 0.5},
            "_meta": {"k": [1]},
        }

    def test_image_and_audio_encode_bytes(self) -> None:
        """Bytes are base64-encoded; a base64 string is kept as is."""
        image, audio = Image(b"\x89PNG", "image/png"), Audio("UklGRg==", "audio/wav")
        assert image.to_wire() == {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
        assert audio.to_wire() == {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}

    def test_embedded_resource(self) -> None:
        """Text or blob contents under ``resource``."""
        text = EmbeddedResource("test://embedded", mime_type="text/plain", text="body")
        blob = EmbeddedResource("test://blob", blob=b"\x00")
        assert text.to_wire() == {
            "type": "resource",
            "resource": {"uri": "test://embedded", "mimeType": "text/plain", "text": "body"},
        }
        assert blob.to_wire() == {
            "type": "resource",
            "resource": {"uri": "test://blob", "blob": "AA=="},
        }

    def test_resource_link(self) -> None:
        """A link carries the resource's name and optional details."""
        link = ResourceLink("file:///a.txt", "a", mime_type="text/plain", size=3)
        assert link.to_wire() == {
            "type": "resource_link",
            "uri": "file:///a.txt",
            "name": "a",
            "mimeType": "text/plain",
            "size": 3,
        }

    @pytest.mark.parametrize(
        ("build", "error"),
        [
            (lambda: Text(3), TypeError),  # type: ignore[arg-type]  # the invalid text under test
            (lambda: Image("not base64!", "image/png"), ValueError),
            (lambda: Image(b"x", "png"), ValueError),
            (lambda: EmbeddedResource("x://y"), ValueError),
            (lambda: EmbeddedResource("x://y", text="a", blob=b"b"), ValueError),
            (lambda: EmbeddedResource("no-scheme", text="a"), ValueError),
            (lambda: ResourceLink("x://y", ""), ValueError),
            (lambda: Message("system", "hi"), ValueError),  # type: ignore[arg-type]  # the invalid role under test
            (lambda: Message("user", 3), TypeError),  # type: ignore[arg-type]  # the invalid content under test
            (lambda: ToolResult([3]), TypeError),  # type: ignore[list-item]  # the invalid item under test
        ],
    )
    def test_invalid_values_fail_on_construction(self, build: Any, error: type[Exception]) -> None:
        """A malformed value fails where it is built."""
        with pytest.raises(error):
            build()

    def test_values_are_frozen(self) -> None:
        """Content values are immutable."""
        text = Text("a")
        with pytest.raises(dataclasses.FrozenInstanceError):
            text.text = "b"  # type: ignore[misc]  # the mutation under test


class TestNormalizeToolResult:
    """Everything a tool may return, as a CallToolResult."""

    @pytest.mark.parametrize(
        ("value", "content"),
        [
            (None, []),
            ("hi", [{"type": "text", "text": "hi"}]),
            (42, [{"type": "text", "text": "42"}]),
            (True, [{"type": "text", "text": "true"}]),
            (Text("a"), [{"type": "text", "text": "a"}]),
            (
                ["a", Image(b"\x00", "image/png"), None, 1.5],
                [
                    {"type": "text", "text": "a"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "text", "text": "1.5"},
                ],
            ),
        ],
    )
    def test_content(self, value: object, content: list[dict[str, Any]]) -> None:
        """Text, scalars, content values and mixed lists become content blocks."""
        assert normalize_tool_result(value) == {"content": content}

    @pytest.mark.parametrize("value", [{"x": 1, "y": 2}, Point(1, 2)])
    def test_objects_are_text_and_structured(self, value: object) -> None:
        """An object is its JSON text and its structured content."""
        assert normalize_tool_result(value) == {
            "content": [{"type": "text", "text": '{"x": 1, "y": 2}'}],
            "structuredContent": {"x": 1, "y": 2},
        }

    def test_pydantic_model(self) -> None:
        """A pydantic model is dumped in JSON mode."""
        assert normalize_tool_result(Model(name="é"))["structuredContent"] == {"name": "é"}

    def test_plain_results_do_not_import_pydantic_models(self) -> None:
        """A server's first call of a tool returning plain values imports no model machinery.

        ``pydantic.BaseModel`` is imported lazily (several milliseconds): asking whether a
        result is a model must not be what imports it.
        """
        script = (
            "import sys\n"
            "from mcp_core.handlers._results import normalize_tool_result as t, "
            "normalize_resource_contents as r, normalize_prompt_messages as p\n"
            "t({'a': 1}); t(3); t('s'); t([1, 'x']); t(None)\n"
            "r({'a': 1}, uri='x://y'); r('text', uri='x://y'); p('hi'); p({'role': 'user', "
            "'content': 'hi'})\n"
            "assert 'pydantic.main' not in sys.modules, 'pydantic.main was imported'\n"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)  # noqa: S603 -- our own script

    @pytest.mark.parametrize(
        ("value", "text"), [(3, "3"), ("s", "s"), ([1, 2], "[1, 2]"), (None, "null")]
    )
    def test_wrapped_results(self, value: object, text: str) -> None:
        """With the wrapped marker, the value is ``{"result": value}`` and its text."""
        assert normalize_tool_result(value, output_schema=WRAPPED) == {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": value},
        }

    def test_bytes_are_refused(self) -> None:
        """Bytes must say what they are."""
        with pytest.raises(TypeError, match="Image"):
            normalize_tool_result(b"\x00")


class TestNormalizeResourceContents:
    """Everything a resource may return, as ReadResourceResult contents."""

    def test_text_mime_types(self) -> None:
        """Declared type first, then a guess from the URI, then text/plain."""
        assert normalize_resource_contents("a", uri="x://y", mime_type="text/csv") == [
            {"uri": "x://y", "mimeType": "text/csv", "text": "a"}
        ]
        assert normalize_resource_contents("a", uri="file:///a.html") == [
            {"uri": "file:///a.html", "mimeType": "text/html", "text": "a"}
        ]
        assert normalize_resource_contents("a", uri="x://y") == [
            {"uri": "x://y", "mimeType": "text/plain", "text": "a"}
        ]

    def test_bytes_are_blobs(self) -> None:
        """Bytes are base64, application/octet-stream without a better type."""
        assert normalize_resource_contents(b"\x00", uri="x://y") == [
            {"uri": "x://y", "mimeType": "application/octet-stream", "blob": "AA=="}
        ]
        assert normalize_resource_contents(b"\x00", uri="file:///i.png") == [
            {"uri": "file:///i.png", "mimeType": "image/png", "blob": "AA=="}
        ]

    def test_content_values_and_objects(self) -> None:
        """Text, images, embedded resources and objects, in order."""
        value = [
            Text("t"),
            Image(b"\x00", "image/gif"),
            EmbeddedResource("z://e", text="e"),
            {"k": 1},
        ]
        assert normalize_resource_contents(value, uri="x://y") == [
            {"uri": "x://y", "mimeType": "text/plain", "text": "t"},
            {"uri": "x://y", "mimeType": "image/gif", "blob": "AA=="},
            {"uri": "z://e", "text": "e"},
            {"uri": "x://y", "mimeType": "application/json", "text": '{"k": 1}'},
        ]

    def test_links_are_not_contents(self) -> None:
        """A ResourceLink cannot be read as contents."""
        with pytest.raises(TypeError, match="ResourceLink"):
            normalize_resource_contents(ResourceLink("x://y", "y"), uri="x://y")


class TestNormalizePromptMessages:
    """Everything a prompt may return, as GetPromptResult messages."""

    def test_shapes(self) -> None:
        """Messages, strings, role/content mappings and bare content values."""
        value = [
            Message.assistant("a"),
            "plain",
            {"role": "assistant", "content": "mapped"},
            {"role": "user", "content": {"type": "text", "text": "wire"}},
            Image(b"\x00", "image/png"),
        ]
        assert normalize_prompt_messages(value) == [
            {"role": "assistant", "content": {"type": "text", "text": "a"}},
            {"role": "user", "content": {"type": "text", "text": "plain"}},
            {"role": "assistant", "content": {"type": "text", "text": "mapped"}},
            {"role": "user", "content": {"type": "text", "text": "wire"}},
            {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
        ]

    def test_role_tuples_are_refused(self) -> None:
        """``("user", "hi")`` is ambiguous with a tuple of messages: the error shows the fix."""
        with pytest.raises(TypeError, match=r"Message\.user"):
            normalize_prompt_messages(("user", "hi"))
        with pytest.raises(TypeError, match=r"Message\.assistant"):
            normalize_prompt_messages([("assistant", "hi")])

    def test_bad_roles_and_shapes(self) -> None:
        """Unknown roles and unknown values are refused with what is accepted."""
        with pytest.raises(ValueError, match="role"):
            normalize_prompt_messages({"role": "system", "content": "x"})
        with pytest.raises(TypeError, match="return a Message"):
            normalize_prompt_messages(3)
