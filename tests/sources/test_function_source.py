"""FunctionSource: marked functions become elements, derived lazily and once."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_core.elements import ElementKind, ElementRef, Tool
from mcp_core.handlers import Invoker, completion, prompt, resource, resource_template, tool
from mcp_core.handlers._decorators import ElementMark, marks_of
from mcp_core.handlers._functions import shape_of
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.sources import ElementSource
from mcp_core.sources._function import FunctionSource
from mcp_core.sources._marked import STRETCH


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


@resource("res://motd")
def motd() -> str:
    """Message of the day."""
    return "hi"


@resource_template("res://users/{user}")
def user(user: str) -> str:
    """A user."""
    return user


@completion(greet, "name")
def names(value: str) -> list[str]:
    """Names."""
    return [n for n in ("Ada", "Alan") if n.startswith(value)]


@completion("res://users/{user}", "user")
def users(value: str) -> list[str]:
    """Users."""
    return ["root"]


def plain(x: str) -> str:
    """An unmarked function: a tool."""
    return x


class TestFunctionSource:
    """Kinds from marks, elements derived on the first provide and kept."""

    def test_is_an_element_source(self) -> None:
        """It conforms to the ElementSource protocol."""
        source: ElementSource = FunctionSource(add)
        assert source.kinds() is ElementKind.TOOL

    def test_kinds_come_from_the_marks_without_deriving(self) -> None:
        """``kinds()`` reads marks only: no signature is analysed."""

        @tool
        def fresh(x: int) -> int:
            return x

        source = FunctionSource(fresh, greet, motd)
        assert source.kinds() == ElementKind.TOOL | ElementKind.PROMPT | ElementKind.RESOURCE
        from mcp_core.handlers._functions import _SHAPES

        assert fresh not in _SHAPES

    async def test_provide_derives_once_in_order(self) -> None:
        """Elements follow the order given; the same collection comes back every time."""
        source = FunctionSource(add, greet, motd, user, plain, names, users)
        first = await source.provide()
        assert first.refs == (
            ElementRef.tool("add"),
            ElementRef.prompt("greet"),
            ElementRef.resource("res://motd"),
            ElementRef.resource_template("res://users/{user}"),
            ElementRef.tool("plain"),
        )
        assert await source.provide() is first

    async def test_completions_attach_by_function_and_by_key(self) -> None:
        """``@completion(greet, ...)`` and ``@completion("res://users/{user}", ...)`` both attach."""
        collection = await FunctionSource(greet, user, names, users).provide()
        greet_element = collection.get(ElementRef.prompt("greet"))
        user_element = collection.get(ElementRef.resource_template("res://users/{user}"))
        assert greet_element is not None
        assert user_element is not None
        assert greet_element.completions == {"name": names}
        assert user_element.completions == {"user": users}
        result = await Invoker().complete(greet_element, "name", "Al", {}, RecordingGateway())
        assert result["values"] == ["Alan"]

    async def test_elements_are_callable(self) -> None:
        """Derived elements serve calls through the invoker."""
        collection = await FunctionSource(add).provide()
        element = collection.get(ElementRef.tool("add"))
        assert element is not None
        assert isinstance(element.definition, Tool)
        result = await Invoker().call_tool(element, {"a": 1, "b": 2}, RecordingGateway())
        assert result["structuredContent"] == {"result": 3}

    async def test_a_function_marked_twice_names_both_marks(self) -> None:
        """Two element marks on one function skip it, naming both places; the rest is served."""

        @tool(name="t")
        @prompt(name="p")
        def twice() -> str:
            return "x"

        source = FunctionSource(twice, add)
        assert (await source.provide()).refs == (ElementRef.tool("add"),)
        [diagnostic] = source.diagnostics()
        assert (diagnostic.kind, diagnostic.ref) == ("skipped", ElementRef.prompt("p"))
        assert re.search(
            r"marked twice: @prompt\(name='p'\) at .*:\d+ and @tool", diagnostic.message
        )

    async def test_two_functions_with_one_ref(self) -> None:
        """A duplicate ref keeps the first function and names both in a diagnostic."""

        @tool(name="add")
        def other_add() -> int:
            return 0

        source = FunctionSource(add, other_add)
        collection = await source.provide()
        kept = collection.get(ElementRef.tool("add"))
        assert kept is not None
        assert kept.handler is add
        [diagnostic] = source.diagnostics()
        assert diagnostic.ref == ElementRef.tool("add")
        assert re.search(
            r"declared twice, by .*\.add at .* and by .*other_add at ", diagnostic.message
        )

    async def test_completion_without_its_target(self) -> None:
        """A completion whose target is not in the source is dropped with a diagnostic."""
        source = FunctionSource(add, names)
        assert (await source.provide()).refs == (ElementRef.tool("add"),)
        [diagnostic] = source.diagnostics()
        assert "matches no prompt or resource template" in diagnostic.message
        assert diagnostic.ref is None

    async def test_two_providers_for_one_argument_keep_the_first(self) -> None:
        """A second provider for one argument is dropped; the first stays attached."""

        @completion(greet, "name")
        def more_names(value: str) -> list[str]:
            return []

        source = FunctionSource(greet, names, more_names)
        element = (await source.provide()).get(ElementRef.prompt("greet"))
        assert element is not None
        assert element.completions == {"name": names}
        [diagnostic] = source.diagnostics()
        assert "already has one" in diagnostic.message

    async def test_derivation_errors_cost_only_their_element(self) -> None:
        """A function that cannot be published is skipped, naming it and where it was declared."""

        @tool
        def variadic(*xs: int) -> int:
            return sum(xs)

        source = FunctionSource(variadic, add)
        assert source.kinds() is ElementKind.TOOL
        assert (await source.provide()).refs == (ElementRef.tool("add"),)
        [diagnostic] = source.diagnostics()
        assert diagnostic.ref == ElementRef.tool("variadic")
        assert diagnostic.message.startswith(f"declared at {__file__}:")
        assert "variadic" in diagnostic.message

    async def test_any_exception_while_deriving_is_contained(self) -> None:
        """Even a non-mcp-core error (here from a broken signature) costs only its element.

        (A bad option value, ``@tool(icons=5)``, fails at the decorator instead: ADR 0065.)
        """

        @tool
        def iconic() -> str:
            return "x"

        iconic.__signature__ = 5  # type: ignore[attr-defined]  # inspect.signature raises TypeError

        with pytest.raises(TypeError, match=r"tool\(icons=\.\.\.\) must be a list"):
            tool(icons=5)  # type: ignore[call-overload]  # the misuse under test
        source = FunctionSource(iconic, add)
        assert (await source.provide()).refs == (ElementRef.tool("add"),)
        [diagnostic] = source.diagnostics()
        assert diagnostic.ref == ElementRef.tool("iconic")

    async def test_declaring_ten_thousand_tools_derives_nothing_until_provide(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Declaring and asking kinds() derive no schema; provide() derives each tool once."""
        derived: list[str] = []
        original = ElementMark.derive

        def counting(self: ElementMark, fn: Any, **kwargs: Any) -> Any:
            derived.append(fn.__name__)
            return original(self, fn, **kwargs)

        monkeypatch.setattr(ElementMark, "derive", counting)
        functions: list[Any] = []
        for index in range(10_000):
            namespace: dict[str, Any] = {"tool": tool}
            exec(f"@tool\ndef t{index}(x: int) -> int:\n    'Echo.'\n    return x\n", namespace)  # noqa: S102 -- distinct functions
            functions.append(namespace[f"t{index}"])
        source = FunctionSource(*functions)
        assert source.kinds() is ElementKind.TOOL
        assert derived == []
        collection = await source.provide()
        assert len(collection) == 10_000
        await source.provide()
        assert len(derived) == 10_000
        # Simple signatures take the pydantic-free path: no model is built per tool.
        assert shape_of(functions[0])._model is None

    async def test_a_first_lookup_reads_the_marks_only_as_far_as_its_ref(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A call before the preload indexes a stretch of marks, not the catalogue (ADR 0112).

        A later declaration of the same ref is still the skipped one, and a missing ref still
        reads every mark: the answers are those of a full index.
        """
        read: list[str] = []
        original = ElementMark.key

        def counting(self: ElementMark, fn: Any) -> str:
            read.append(fn.__name__)
            return original(self, fn)

        monkeypatch.setattr(ElementMark, "key", counting)
        functions: list[Any] = []
        for index in [*range(3 * STRETCH), 0]:  # the last one declares t0 again
            namespace: dict[str, Any] = {"tool": tool}
            code = f"@tool(name='t{index}')\ndef f{len(functions)}(x: int) -> int:\n    return x\n"
            exec(code, namespace)  # noqa: S102 -- distinct functions
            functions.append(namespace[f"f{len(functions)}"])
        source = FunctionSource(*functions)
        first = await source.lookup(ElementRef.tool("t1"))
        assert first is not None
        assert first.handler is functions[1]
        assert len(read) <= STRETCH
        assert await source.lookup(ElementRef.tool("missing")) is None
        assert set(read) == {fn.__name__ for fn in functions}
        collection = await source.provide()
        assert collection.get(ElementRef.tool("t1")) is first
        assert collection.get(ElementRef.tool("t0")).handler is functions[0]  # type: ignore[union-attr]
        assert [d.ref for d in source.diagnostics()] == [ElementRef.tool("t0")]

    async def test_lookups_after_provide_answer_the_collections_own_elements(self) -> None:
        """Once provided, a lookup gives the very element the collection holds (or None)."""
        source = FunctionSource(add, greet, motd, user, names, users)
        before = await source.lookup(ElementRef.tool("add"))
        collection = await source.provide()
        for element in collection:
            assert await source.lookup(element.ref) is element
        assert await source.lookup(ElementRef.tool("add")) is before
        assert await source.lookup(ElementRef.tool("missing")) is None
        assert await source.provide() is collection

    def test_a_bare_mark_holds_no_options(self) -> None:
        """A bare @tool marks with an empty, read-only options mapping."""
        mark = marks_of(add)[0]
        assert isinstance(mark, ElementMark)
        assert dict(mark.options) == {}
        with pytest.raises(TypeError):
            mark.options["name"] = "x"  # type: ignore[index]  # the mutation under test

    def test_accepts_only_callables(self) -> None:
        """A non-callable is a usage error."""
        with pytest.raises(TypeError, match="functions"):
            FunctionSource("add")  # type: ignore[arg-type]  # the misuse under test

    def test_repr(self) -> None:
        """The repr names the functions (used in diagnostics)."""
        assert repr(FunctionSource(add)) == f"FunctionSource({__name__}.add)"
