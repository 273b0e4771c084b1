"""Standalone decorators that *mark* functions as elements, without deriving or registering.

``@tool``, ``@prompt`` (bare or with options), ``@resource(uri)`` and
``@resource_template(uri_template)`` attach a frozen :class:`ElementMark` (kind, options, where
it was applied) and return the function unchanged, still callable. Nothing is derived at
decoration time: :class:`~mcp_core.sources.FunctionSource` and
:class:`~mcp_core.sources.DiscoverySource` read the marks and derive elements when first asked,
so importing a module with thousands of tools stays cheap.

``@completion(target, argument)`` marks a *provider* function: ``target`` is the marked prompt or
template function (or its key: the prompt name or the ``uri_template``) and ``argument`` the
prompt argument or template variable it completes. A provider may complete several targets.
Inline providers are also accepted as ``completions={"arg": ...}`` on ``@prompt`` and
``@resource_template``.

A function carries at most one element mark; a second one is reported (naming both places) by
the source that collects it.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import EllipsisType, MappingProxyType
from typing import Any, Final, TypeGuard, TypeVar, Unpack, cast, final, overload

from mcp_core.elements import Annotations, Element, ElementKind, ElementRef, Icon, ToolAnnotations
from mcp_core.elements._definitions import WireModel
from mcp_core.handlers._derive import (
    OPTION_KEYS,
    PromptOptions,
    ResourceOptions,
    ResourceTemplateOptions,
    ToolOptions,
    check_options,
    derive,
    own_option,
)
from mcp_core.handlers._functions import published_name

__all__ = [
    "MARKS_ATTRIBUTE",
    "CompletionMark",
    "ElementMark",
    "completion",
    "marks_of",
    "prompt",
    "resource",
    "resource_template",
    "tool",
]

MARKS_ATTRIBUTE: Final = "__mcp_core_marks__"
"""The function attribute holding a tuple of marks."""

F = TypeVar("F", bound=Callable[..., Any])


@final
@dataclass(frozen=True, slots=True)
class ElementMark:
    """``fn`` is an element of ``kind``; ``options`` are the keyword options of its derivation."""

    kind: ElementKind
    options: Mapping[str, Any]
    code: types.CodeType | None
    """The code applying the mark (None where there is none: ``at`` then says what)."""
    at: int | str
    """The instruction offset in ``code`` where the mark was applied, or a description.

    Held in place rather than as a :class:`CallSite`: a mark is kept per declared element for
    the life of the app, and a site object of its own cost 48 bytes each (4.6 MiB at 100k).
    """

    @property
    def where(self) -> CallSite | str:
        """Where the mark was applied: ``file:line`` on ``str()``, or the description."""
        at = self.at
        return at if isinstance(at, str) else CallSite(self.code, at)

    def key(self, fn: Callable[..., Any]) -> str:
        """The element's key (name, URI or template), known without deriving anything."""
        if self.kind is ElementKind.RESOURCE:
            return str(self.options["uri"])
        if self.kind is ElementKind.RESOURCE_TEMPLATE:
            return str(self.options["uri_template"])
        return str(self.options.get("name") or published_name(fn))

    def ref(self, fn: Callable[..., Any]) -> ElementRef:
        """The element's ref, known without deriving anything."""
        return ElementRef(self.kind, self.key(fn))

    def derive(
        self,
        fn: Callable[..., Any],
        *,
        handler: object | None = None,
        completions: Mapping[str, object] | None = None,
        drop_first: bool = False,
    ) -> Element:
        """Derive the element from ``fn``; ``handler`` replaces ``fn`` as its handler.

        ``drop_first`` derives from an unbound method without its ``self``/``cls`` parameter.
        ``completions`` are merged over the mark's own.
        """
        options = self.options
        if type(options) is MarkOptions:
            # Derivation reads many options: it gets a plain dict, made for the occasion.
            options = options.as_dict()
        if completions:
            options = dict(options)
            options["completions"] = {**(options.get("completions") or {}), **completions}
        if handler is None:
            return derive(self.kind.label, fn, options, drop_first=drop_first)
        return derive(self.kind.label, handler, options, shape_from=fn, drop_first=drop_first)  # type: ignore[arg-type]  # the handler is only stored, never called here

    def describe(self) -> str:
        """``@kind(options) at file:line``, for messages."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"@{self.kind.label}({shown}) at {self.where}"


@final
@dataclass(frozen=True, slots=True)
class CompletionMark:
    """The marked function completes ``argument`` of ``target`` (a marked function or a key)."""

    target: Callable[..., Any] | str
    argument: str
    where: CallSite | str


def marks_of(obj: object) -> tuple[ElementMark | CompletionMark, ...]:
    """The marks on ``obj`` (a function, method, static/class method, class or callable object).

    Only marks put on ``obj`` itself count (its own ``__dict__``; a method's function's): an
    instance does not carry its class's marks, nor a subclass its base's.
    """
    if type(obj) is types.FunctionType:
        # The common case, asked once per declared function on the way to a first answer.
        found = obj.__dict__.get(MARKS_ATTRIBUTE)
        if found is None:
            return ()
        return found if _all_marks(found) else ()
    target = obj.__func__ if isinstance(obj, staticmethod | classmethod) else obj
    if inspect.ismethod(target):
        target = target.__func__
    try:
        namespace = vars(target)
        marks = namespace.get(MARKS_ATTRIBUTE) if isinstance(namespace, Mapping) else None
    except Exception:  # noqa: BLE001 -- no namespace, or a proxy failing on any attribute: unmarked
        return ()
    # Only tuples of marks count: a proxy that answers every attribute is not marked.
    return marks if _all_marks(marks) else ()


_MARK_TYPES: Final = (ElementMark, CompletionMark)


def _all_marks(marks: object) -> TypeGuard[tuple[ElementMark | CompletionMark, ...]]:
    if not isinstance(marks, tuple):
        return False
    for mark in marks:  # noqa: SIM110 -- a loop over the usual one mark beats all() with a generator
        if not isinstance(mark, _MARK_TYPES):
            return False
    return True


@final
class CallSite:
    """Where a mark was applied: ``file:line``, worked out only when a message needs it.

    Reading ``frame.f_lineno`` scans the code object's line table from the start, so doing it
    for every decorator made declaring N tools in one module quadratic; the code object and the
    instruction offset are kept instead, and the line is looked up on ``str()``.
    """

    __slots__ = ("_code", "_offset")

    def __init__(self, code: types.CodeType | None, offset: int) -> None:
        self._code = code
        self._offset = offset

    def __str__(self) -> str:
        if self._code is None:
            return "?"
        line = next(
            (ln for start, end, ln in self._code.co_lines() if start <= self._offset < end),
            self._code.co_firstlineno,
        )
        return f"{self._code.co_filename}:{line}"

    def __repr__(self) -> str:
        return f"CallSite({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CallSite):
            return (self._code, self._offset) == (other._code, other._offset)
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._code, self._offset))


def _site() -> tuple[types.CodeType | None, int]:
    """The code and instruction offset of the user code applying the mark.

    The first frame outside mcp-core: the line of the ``@`` whether the decorator is applied
    directly or through a front door such as ``App.tool``.
    """
    frame: types.FrameType | None = sys._getframe(1)  # noqa: SLF001 -- the caller's frame, as inspect.currentframe() gives it
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (type(name) is str and name.startswith("mcp_core.")):
            break
        frame = frame.f_back
    return (frame.f_code, frame.f_lasti) if frame is not None else (None, 0)


def _attach(fn: F, mark: ElementMark | CompletionMark) -> F:
    if type(fn) is types.FunctionType:
        # The common case: a plain function takes the attribute; nothing else to check.
        fn.__dict__[MARKS_ATTRIBUTE] = (*marks_of(fn), mark)
        return fn
    if inspect.ismethod(fn):
        # A bound method takes no attributes: mark a stand-in that calls it (one per call site,
        # so two instances' methods are two elements).
        return _attach(cast("F", _calling(fn)), mark)
    if not callable(fn) and not isinstance(fn, staticmethod | classmethod):
        raise TypeError(f"only functions and callables can be marked, got {type(fn).__name__}")
    if isinstance(fn, type) and isinstance(mark, CompletionMark):
        raise TypeError(f"a completion provider is a function, not the class {fn.__qualname__}")
    try:
        setattr(fn, MARKS_ATTRIBUTE, (*marks_of(fn), mark))
    except (AttributeError, TypeError) as exc:
        raise TypeError(
            f"{fn!r} cannot carry a mark (it takes no attributes); decorate the function where it "
            "is defined (a method in its class body)"
        ) from exc
    return fn


def _calling(method: Callable[..., Any]) -> Callable[..., Any]:
    """A function that calls the bound ``method``, looks like it, and can carry a mark."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def calling_async(*args: Any, **kwargs: Any) -> Any:
            return await method(*args, **kwargs)

        return calling_async

    @functools.wraps(method)
    def calling(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    return calling


def _given(kind: ElementKind, options: Mapping[str, Any]) -> MarkOptions:
    """Only what the author passed, in declaration order: the derivation's defaults apply to the rest."""
    label = kind.label
    check_options(label, options)
    names: list[str] = []
    values: list[Any] = []
    for key in OPTION_KEYS[label]:
        if key not in options:
            continue
        value = options[key]
        if key == "tags":
            value = tuple(value)
        elif key in ("annotations", "icons"):
            # The SDK's models (or wire mappings) become mcp-core's values here, once; a value
            # that cannot be one fails at the decorator, naming the option.
            value = own_option(label, key, value)
        elif key == "completions":
            value = MappingProxyType(dict(value)) if value else None
        # None is meaningful for output_schema (publish none); elsewhere it means "not given".
        if value is not ... and (key == "output_schema" or (value is not None and value != ())):
            names.append(key)
            values.append(value)
    return MarkOptions(tuple(names), tuple(values)) if names else _NO_OPTIONS


@final
class MarkOptions(Mapping[str, Any]):
    """The options a mark was given: a read-only mapping of option name to value.

    A mark lives as long as its function, so this is kept small: the names in a tuple shared
    by every mark given the same options, the values in a tuple, or the value itself when there
    is one (a mapping proxy over a dict of its own held about 230 bytes per declaration, this
    50 for the usual ``name=``; every bare decorator shares one empty instance).
    """

    __slots__ = ("_names", "_values")

    _names: tuple[str, ...]
    _values: Any

    def __init__(self, names: tuple[str, ...], values: tuple[Any, ...]) -> None:
        # The name tuples are subsets of a kind's option names in their order: a few at most.
        self._names = _NAMES.setdefault(names, names)
        self._values = values[0] if len(values) == 1 else values

    def _value(self, index: int) -> Any:
        return self._values if len(self._names) == 1 else self._values[index]

    def __getitem__(self, key: str) -> Any:
        names = self._names
        if key in names:
            return self._value(names.index(key))
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The option's value, or ``default`` when it was not given."""
        names = self._names
        return self._value(names.index(key)) if key in names else default

    def __contains__(self, key: object) -> bool:
        return key in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"MarkOptions({self.as_dict()!r})"

    def as_dict(self) -> dict[str, Any]:
        """A new dict of the options."""
        names = self._names
        if len(names) == 1:
            return {names[0]: self._values}
        return dict(zip(names, self._values, strict=True))


_NAMES: Final[dict[tuple[str, ...], tuple[str, ...]]] = {}
_NO_OPTIONS: Final = MarkOptions((), ())


def _marker(kind: ElementKind, options: Mapping[str, Any]) -> Callable[[F], F]:
    given = _given(kind, options)

    def decorate(fn: F) -> F:
        return _attach(fn, ElementMark(kind, given, *_site()))

    return decorate


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | WireModel | Mapping[str, Any] | None = None,
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    output_schema: Mapping[str, Any] | EllipsisType | None = ...,
    input_schema: Mapping[str, Any] | None = None,
) -> Callable[[F], F]: ...
def tool(fn: F | None = None, /, **options: Unpack[ToolOptions]) -> F | Callable[[F], F]:
    """Mark a function as a tool (see :func:`~mcp_core.handlers.tool_from_function`)."""
    decorate: Callable[[F], F] = _marker(ElementKind.TOOL, options)
    return decorate(fn) if fn is not None else decorate


@overload
def prompt(fn: F, /) -> F: ...
@overload
def prompt(
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    completions: Mapping[str, object] | None = None,
) -> Callable[[F], F]: ...
def prompt(fn: F | None = None, /, **options: Unpack[PromptOptions]) -> F | Callable[[F], F]:
    """Mark a function as a prompt (see :func:`~mcp_core.handlers.prompt_from_function`)."""
    decorate: Callable[[F], F] = _marker(ElementKind.PROMPT, options)
    return decorate(fn) if fn is not None else decorate


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: Annotations | WireModel | Mapping[str, Any] | None = None,
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
) -> Callable[[F], F]:
    """Mark a function as the fixed resource at ``uri`` (see ``resource_from_function``)."""
    if not isinstance(uri, str):
        raise TypeError("@resource takes the resource's URI: write @resource('scheme://...')")
    options = ResourceOptions(
        uri=uri,
        name=name,
        title=title,
        description=description,
        mime_type=mime_type,
        size=size,
        annotations=annotations,
        icons=icons,
        meta=meta,
        tags=tags,
    )
    return _marker(ElementKind.RESOURCE, options)


def resource_template(
    uri_template: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    annotations: Annotations | WireModel | Mapping[str, Any] | None = None,
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    completions: Mapping[str, object] | None = None,
) -> Callable[[F], F]:
    """Mark a function as a resource template (see ``resource_template_from_function``)."""
    if not isinstance(uri_template, str):
        raise TypeError(
            "@resource_template takes the URI template: write @resource_template('scheme://{x}')"
        )
    options = ResourceTemplateOptions(
        uri_template=uri_template,
        name=name,
        title=title,
        description=description,
        mime_type=mime_type,
        annotations=annotations,
        icons=icons,
        meta=meta,
        tags=tags,
        completions=completions,
    )
    return _marker(ElementKind.RESOURCE_TEMPLATE, options)


def completion(target: Callable[..., Any] | str, argument: str) -> Callable[[F], F]:
    """Mark a function as the completion provider of ``argument`` of ``target``.

    ``target`` is the marked prompt or resource-template function, or its key (the prompt's
    name or the template's ``uri_template``). The provider takes ``(value)`` or
    ``(value, context)`` and returns strings; see :mod:`mcp_core.handlers._completion`.
    """
    if not isinstance(argument, str) or not argument:
        raise TypeError(
            "@completion(target, argument): argument is the name of the prompt argument or template variable"
        )
    if not isinstance(target, str) and not callable(target):
        raise TypeError("@completion(target, argument): target is the marked function or its key")

    def decorate(fn: F) -> F:
        return _attach(fn, CompletionMark(target, argument, CallSite(*_site())))

    return decorate
