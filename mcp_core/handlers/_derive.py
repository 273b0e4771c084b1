"""Elements derived from functions: names, descriptions and schemas from signatures and docstrings.

Each ``*_from_function`` returns an :class:`~mcp_core.elements.Element` whose handler is the
function itself. The name defaults to ``__name__``; the description to the docstring (without its
parameter section, whose entries describe the parameters in the schema or prompt arguments).
Derivation is eager when called; the decorators and sources defer calling it until elements are
first provided, so declaring many functions costs only marking them.

What may be given, besides a plain function:

- a bound method (``service.add``) or a callable object: the handler is the object given;
- an unbound method (``Service.add``, a function defined in a module-level class): ``self`` is
  not published, and the handler is ``HandlerRef("module:Service.add")``, so the class is
  instantiated on first use, through the Invoker's container when it knows it;
- a module-level class with ``__call__``: the element is published from ``__call__`` (name: the
  class's, description: ``__call__``'s docstring or the class's), and the handler is
  ``HandlerRef("module:Class")``, instantiated the same way;
- a lambda or a ``functools.partial`` has no name of its own: a partial is named after the
  function it wraps, a lambda ``<module>.lambda_<line>`` (see
  :func:`~mcp_core.handlers._functions.published_name`); pass ``name=...`` to choose.
"""

from __future__ import annotations

import inspect
import mimetypes
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import EllipsisType
from typing import Annotated, Any, Required, TypedDict, get_args, get_origin

from pydantic.fields import FieldInfo

from mcp_core.elements import (
    Annotations,
    Element,
    HandlerRef,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)
from mcp_core.elements._definitions import WireModel, own_value
from mcp_core.errors import InvalidElementError
from mcp_core.handlers._docstrings import parse_docstring
from mcp_core.handlers._functions import (
    EMPTY,
    FunctionShape,
    Param,
    describe,
    shape_of,
    template_binding_problems,
)
from mcp_core.handlers._plan import vouch

__all__ = [
    "OPTION_KEYS",
    "PromptOptions",
    "ResourceOptions",
    "ResourceTemplateOptions",
    "ToolOptions",
    "check_options",
    "derive",
    "own_option",
    "prompt_from_function",
    "resource_from_function",
    "resource_template_from_function",
    "tool_from_function",
]


class ToolOptions(TypedDict, total=False):
    """The options of a tool declaration: the keywords of ``@tool`` and ``tool_from_function``.

    Like every ``*Options`` here, it is what a mark records (only the options given) and what the
    derivation reads: an absent key takes the derived default.
    """

    name: str | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | WireModel | Mapping[str, Any] | None
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    tags: Iterable[str]
    output_schema: Mapping[str, Any] | EllipsisType | None
    input_schema: Mapping[str, Any] | None


class ResourceOptions(TypedDict, total=False):
    """The options of a fixed resource declaration (``@resource``, ``resource_from_function``)."""

    uri: Required[str]
    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    annotations: Annotations | WireModel | Mapping[str, Any] | None
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    tags: Iterable[str]


class ResourceTemplateOptions(TypedDict, total=False):
    """The options of a resource template declaration (``@resource_template``, ``..._from_function``)."""

    uri_template: Required[str]
    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    annotations: Annotations | WireModel | Mapping[str, Any] | None
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    tags: Iterable[str]
    completions: Mapping[str, object] | None


class PromptOptions(TypedDict, total=False):
    """The options of a prompt declaration (``@prompt``, ``prompt_from_function``)."""

    name: str | None
    title: str | None
    description: str | None
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    tags: Iterable[str]
    completions: Mapping[str, object] | None


def tool_from_function(
    fn: Callable[..., Any],
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
) -> Element:
    """A tool whose input schema comes from ``fn``'s parameters, unless ``input_schema`` is given.

    ``input_schema`` publishes that schema instead of the derived one: arguments are validated
    against it, then bound to ``fn``'s parameters by name (so ``fn`` takes what it allows, e.g.
    with ``**arguments``). ``output_schema`` defaults to one derived from the return annotation
    (see :meth:`FunctionShape.output_schema`: ``str``, ``None`` and content values publish none);
    pass ``None`` to publish none, or a schema to publish that one.

    Raises:
        InvalidElementError: the signature cannot be published (``*args``, an unresolvable
            annotation, a type pydantic cannot describe) or a field is invalid.
    """
    options = ToolOptions(
        name=name,
        title=title,
        description=description,
        annotations=annotations,
        icons=icons,
        meta=meta,
        tags=tags,
        output_schema=output_schema,
        input_schema=input_schema,
    )
    return _from_function(_tool, fn, options)


def resource_from_function(
    fn: Callable[..., Any],
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
) -> Element:
    """A fixed resource at ``uri`` read by calling ``fn``.

    ``fn`` takes no arguments, except an injected ``ClientGateway`` and/or ``RequestedUri``.
    ``mime_type`` defaults to a guess from the URI's extension (none when there is nothing to go
    by; reads then default to ``text/plain`` for text and ``application/octet-stream`` for bytes).
    """
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
    return _from_function(_resource, fn, options)


def resource_template_from_function(
    fn: Callable[..., Any],
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
) -> Element:
    """A resource template whose variables bind to ``fn``'s parameters by name.

    Every template variable must be a parameter (or land in ``**kwargs``), and every parameter
    without a default must be a variable. Values arrive percent-decoded as strings and are
    converted to the parameter types (``id: int`` receives ``42``). A variable named ``uri``
    binds to a parameter named ``uri`` like any other; the URI being read is passed only to a
    parameter annotated :data:`~mcp_core.handlers.RequestedUri`.
    """
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
    return _from_function(_resource_template, fn, options)


def prompt_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: Sequence[Icon | WireModel | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    completions: Mapping[str, object] | None = None,
) -> Element:
    """A prompt whose arguments are ``fn``'s parameters (required when they have no default).

    Prompt arguments arrive as strings and are converted to the parameter types.
    """
    options = PromptOptions(
        name=name,
        title=title,
        description=description,
        icons=icons,
        meta=meta,
        tags=tags,
        completions=completions,
    )
    return _from_function(_prompt, fn, options)


# -- shared by the public functions and by marks (which may derive from unbound methods) -------


def _tool(fn: Callable[..., Any], shape: FunctionShape, options: ToolOptions) -> Element:
    # Runs once per tool of a catalogue on its first load: kept to the options actually given.
    if shape.uri is not None:
        _refuse_requested_uri(shape)
    output_schema = options.get("output_schema", ...)
    description = options.get("description")
    tags = options.get("tags")
    input_schema = options.get("input_schema")
    definition = Tool(
        name=options.get("name") or _name(options, shape),
        input_schema=shape.input_schema() if input_schema is None else input_schema,
        title=options.get("title"),
        description=description if description is not None else shape.description,
        output_schema=shape.output_schema()
        if isinstance(output_schema, EllipsisType)
        else output_schema,
        annotations=own_option("tool", "annotations", options.get("annotations")),
        icons=own_option("tool", "icons", options.get("icons")),
        meta=options.get("meta"),
    )
    return Element(definition=definition, handler=fn, tags=frozenset(tags) if tags else _NO_TAGS)


_NO_TAGS: frozenset[str] = frozenset()


def _resource(fn: Callable[..., Any], shape: FunctionShape, options: ResourceOptions) -> Element:
    required = [p.name for p in shape.params if p.default is EMPTY]
    if required:
        raise InvalidElementError(
            f"{shape.where}: a fixed resource is read without arguments, but it requires "
            f"{required}; give them defaults, or make it a resource template with "
            "{variables} named like the parameters"
        )
    uri = options["uri"]
    definition = Resource(
        uri=uri,
        name=_name(options, shape),
        title=options.get("title"),
        description=_description(options, shape),
        mime_type=options.get("mime_type")
        or (mimetypes.guess_type(uri)[0] if isinstance(uri, str) else None),
        size=options.get("size"),
        annotations=own_option("resource", "annotations", options.get("annotations")),
        icons=own_option("resource", "icons", options.get("icons")),
        meta=options.get("meta"),
    )
    return Element(definition=definition, handler=fn, tags=frozenset(options.get("tags", ())))


def _resource_template(
    fn: Callable[..., Any], shape: FunctionShape, options: ResourceTemplateOptions
) -> Element:
    definition = ResourceTemplate(
        uri_template=options["uri_template"],
        name=_name(options, shape),
        title=options.get("title"),
        description=_description(options, shape),
        mime_type=options.get("mime_type"),
        annotations=own_option("resource_template", "annotations", options.get("annotations")),
        icons=own_option("resource_template", "icons", options.get("icons")),
        meta=options.get("meta"),
    )
    problem = template_binding_problems(shape, definition.template.variables)
    if problem is not None:
        raise InvalidElementError(f"{shape.where} {problem}", ref=definition.ref)
    return Element(
        definition=definition,
        handler=fn,
        completions=options.get("completions"),
        tags=frozenset(options.get("tags", ())),
    )


def _prompt(fn: Callable[..., Any], shape: FunctionShape, options: PromptOptions) -> Element:
    _refuse_requested_uri(shape)
    definition = Prompt(
        name=_name(options, shape),
        title=options.get("title"),
        description=_description(options, shape),
        arguments=tuple(_prompt_argument(param) for param in shape.params),
        icons=own_option("prompt", "icons", options.get("icons")),
        meta=options.get("meta"),
    )
    return Element(
        definition=definition,
        handler=fn,
        completions=options.get("completions"),
        tags=frozenset(options.get("tags", ())),
    )


_AnyOptions = ToolOptions | ResourceOptions | ResourceTemplateOptions | PromptOptions


def _name(options: _AnyOptions, shape: FunctionShape) -> str:
    return options.get("name") or shape.name


def _from_function(
    deriver: Callable[[Any, FunctionShape, Any], Element], fn: Callable[..., Any], options: Any
) -> Element:
    """The element ``deriver`` makes of ``fn`` and its own shape.

    A function that serves its element itself has just been checked against the element's
    kind (its shape is the one a call binds), so the element is vouched for: admitting it does
    not analyse the function again (see :func:`~mcp_core.handlers._plan.vouch`).
    """
    handler, shape, options = _handler_and_shape(fn, options)
    element = deriver(handler, shape, options)
    if handler is fn:
        vouch(element)
    return element


def _handler_and_shape(fn: Callable[..., Any], options: Any) -> tuple[Any, FunctionShape, Any]:
    """What to store as the handler, the shape to publish from, and the options with defaults.

    Classes and unbound methods are published without ``self`` and served by reference (see
    the module docstring); everything else is its own handler.
    """
    if inspect.isclass(fn):
        call = _own_call(fn)
        static = isinstance(inspect.getattr_static(fn, "__call__"), staticmethod)
        shape = shape_of(call, drop_first=not static)
        defaults: dict[str, str | None] = {"name": fn.__name__}
        if shape.description is None:
            defaults["description"] = parse_docstring(inspect.getdoc(fn)).description
        given = {key for key, value in options.items() if value is not None}
        defaulted = {key: value for key, value in defaults.items() if key not in given}
        return _reference(fn, "class"), shape, {**options, **defaulted}
    if _is_unbound_method(fn):
        return _reference(fn, "method"), shape_of(fn, drop_first=True), options
    return fn, shape_of(fn), options


def _own_call(cls: type) -> Callable[..., Any]:
    """The ``__call__`` a class defines (itself or a base other than ``object``)."""
    for base in cls.__mro__[:-1]:
        member = vars(base).get("__call__")
        if member is not None:
            return member.__func__ if isinstance(member, staticmethod | classmethod) else member
    raise InvalidElementError(
        f"{cls.__module__}:{cls.__qualname__} is a class without __call__, so there is no "
        "signature to publish; give it `def __call__(self, ...)`, or keep it a handler object "
        "(execute/read/get) and declare it as app.add(Tool(...), HandlerRef('"
        f"{cls.__module__}:{cls.__qualname__}'))"
    )


def _is_unbound_method(fn: object) -> bool:
    """Whether ``fn`` is a plain function that a class defines as an instance method."""
    if not inspect.isfunction(fn) or "." not in fn.__qualname__:
        return False
    owner_path, _, name = fn.__qualname__.rpartition(".")
    if owner_path.endswith("<locals>"):
        return False  # a function nested in a function, not a method
    if "<locals>" in owner_path:
        raise InvalidElementError(
            f"{describe(fn)} is a method of a class defined inside a function, which cannot be "
            "instantiated by reference; pass a bound method (instance.method) instead"
        )
    owner = _attribute_path(fn.__module__, owner_path)
    return inspect.isclass(owner) and inspect.getattr_static(owner, name, None) is fn


def _attribute_path(module_name: str, path: str) -> object:
    obj: object = sys.modules.get(module_name)
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


def _reference(obj: Any, what: str) -> HandlerRef:
    """The import-path reference to a module-level class or method, checked to lead back to it."""
    path = f"{obj.__module__}:{obj.__qualname__}"
    if (
        "<locals>" in obj.__qualname__
        or _attribute_path(obj.__module__, obj.__qualname__) is not obj
    ):
        raise InvalidElementError(
            f"{path} is a {what} that cannot be found again by its import path (it is defined "
            "inside a function, or replaced in its module); define it at module level, or pass an "
            "instance (a bound method or a callable object)"
        )
    return HandlerRef(path)


def _description(
    options: ToolOptions | ResourceOptions | ResourceTemplateOptions | PromptOptions,
    shape: FunctionShape,
) -> str | None:
    description = options.get("description")
    return description if description is not None else shape.description


def _refuse_requested_uri(shape: FunctionShape) -> None:
    if shape.uri is not None:
        raise InvalidElementError(
            f"{shape.where}: parameter {shape.uri!r} is a RequestedUri, which only resource "
            "handlers receive"
        )


def _prompt_argument(param: Param) -> PromptArgument:
    field = _field_info(param)
    return PromptArgument(
        name=param.name,
        title=field.title if field is not None else None,
        description=(field.description if field is not None and field.description else None)
        or param.description,
        required=param.default is EMPTY,
    )


def _field_info(param: Param) -> FieldInfo | None:
    # Argument metadata written as Annotated[str, Field(...)] or as a Field(...) default.
    if isinstance(param.default, FieldInfo):
        return param.default
    if get_origin(param.annotation) is Annotated:
        for meta in get_args(param.annotation)[1:]:
            if isinstance(meta, FieldInfo):
                return meta
    return None


_DERIVERS: Mapping[str, Callable[[Callable[..., Any], FunctionShape, Any], Element]] = {
    "tool": _tool,
    "resource": _resource,
    "resource_template": _resource_template,
    "prompt": _prompt,
}

OPTION_KEYS: Mapping[str, tuple[str, ...]] = {
    "tool": tuple(ToolOptions.__annotations__),
    "resource": tuple(ResourceOptions.__annotations__),
    "resource_template": tuple(ResourceTemplateOptions.__annotations__),
    "prompt": tuple(PromptOptions.__annotations__),
}
"""The option keys of each kind (by ``ElementKind.label``), in declaration order."""


def check_options(kind_label: str, options: Mapping[str, Any]) -> None:
    """Raise TypeError, as a call would, for an option ``kind_label`` declarations do not take."""
    unknown = [key for key in options if key not in OPTION_KEYS[kind_label]]
    if unknown:
        raise TypeError(f"{kind_label}() got an unexpected keyword argument {unknown[0]!r}")


def own_option(kind_label: str, key: str, value: Any) -> Any:
    """An option's value as mcp-core's own type, converted once where it is declared.

    ``annotations`` and ``icons`` may be given as the official SDK's ``mcp.types`` models
    (``ToolAnnotations``, ``Annotations``, ``Icon``) or their wire mappings; anything else is
    taken as is and checked by the definition.

    Raises:
        TypeError: the value cannot be such a type; the message names the option.
    """
    if value is None:
        return value
    if key == "annotations":
        parameter = f"{kind_label}(annotations=...)"
        if kind_label == "tool":
            return own_value(ToolAnnotations, value, parameter=parameter)
        return own_value(Annotations, value, parameter=parameter)
    if key == "icons":
        if (
            isinstance(value, str | bytes | Mapping)
            or not isinstance(value, Iterable)
            or hasattr(value, "model_dump")
        ):
            raise TypeError(
                f"{kind_label}(icons=...) must be a list of Icon values, got {type(value).__name__}"
            )
        return tuple(
            own_value(Icon, icon, parameter=f"{kind_label}(icons=...)[{index}]")
            for index, icon in enumerate(value)
        )
    return value


def derive(
    kind_label: str,
    fn: Callable[..., Any],
    options: Mapping[str, Any],
    *,
    shape_from: Callable[..., Any] | None = None,
    drop_first: bool = False,
) -> Element:
    """The element of kind ``kind_label`` (``ElementKind.label``) for ``fn`` with ``options``.

    ``options`` are the kind's ``*Options``. ``shape_from`` (with ``drop_first`` for
    ``self``/``cls``) lets a source derive from an unbound method while the element's handler is
    something else (a reference to it).
    """
    check_options(kind_label, options)
    if shape_from is None and not drop_first:
        return _from_function(_DERIVERS[kind_label], fn, options)
    shape = shape_of(shape_from if shape_from is not None else fn, drop_first=drop_first)
    return _DERIVERS[kind_label](fn, shape, options)
