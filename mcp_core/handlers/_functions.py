"""Functions as handlers: what a callable takes and returns, its schemas, and argument binding.

A callable is analysed once into a :class:`FunctionShape`: its bindable parameters (the published
arguments), the parameters mcp-core injects (a :class:`ClientGateway`, the :data:`RequestedUri`),
and its return annotation. The shape then answers three questions, each lazily and at most once:

- the input schema (tools): for signatures made only of ``int``/``float``/``str``/``bool`` (or
  unannotated) parameters with JSON defaults, the schema is written directly, without pydantic,
  because building a pydantic model costs about a millisecond and declaring 10k such tools must
  stay fast; every other signature goes through a pydantic model. Both produce the same schema
  for the same signature (a property test holds them to it);
- how to bind validated arguments to a call (the same model, built on first call, coerces JSON
  values to parameter types: dicts to dataclasses or models, strings to enums, ``3.0`` to ``3``);
- the output schema, from the return annotation.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import sys
import types
import typing
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, NoneType, UnionType
from typing import Annotated, Any, Final, NewType, TypeAlias, final, get_args, get_origin

import pydantic
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema

from mcp_core.elements import ElementRef, FrozenDict, freeze
from mcp_core.errors import ArgumentValidationError, InvalidElementError, clip_input
from mcp_core.handlers._content import CONTENT_TYPES, Message, ToolResult
from mcp_core.handlers._docstrings import ParsedDocstring, parse_docstring
from mcp_core.handlers._injection import Injector, injection_generation, injector_for
from mcp_core.handlers._protocols import ClientGateway
from mcp_core.handlers._sdk_values import is_sdk_content_type

__all__ = [
    "WRAPPED_MARKER",
    "DirectResultCheck",
    "FunctionShape",
    "Param",
    "RequestedUri",
    "describe",
    "shape_of",
    "template_binding_problems",
]

RequestedUri = NewType("RequestedUri", str)
"""Annotate a resource handler's parameter with this to receive the URI being read.

Template variables bind to parameters by *name*, so a variable called ``uri`` binds to a
parameter ``uri`` like any other; the URI of the request never arrives by name, only through a
parameter annotated ``RequestedUri`` (for fixed resources and templates alike).
"""

WRAPPED_MARKER: Final = "x-mcp-core-wrapped"
"""Output-schema keyword: the tool returns a non-object value, published as ``{"result": value}``."""

EMPTY: Final[Any] = inspect.Parameter.empty

# JSON types of the parameter annotations the direct (pydantic-free) path handles. ``bool`` is
# listed on its own: it is an ``int`` subclass in Python but a distinct type in JSON.
_FAST_TYPES: Final[Mapping[object, Mapping[str, str]]] = MappingProxyType(
    {
        EMPTY: MappingProxyType({}),
        int: MappingProxyType({"type": "integer"}),
        float: MappingProxyType({"type": "number"}),
        str: MappingProxyType({"type": "string"}),
        bool: MappingProxyType({"type": "boolean"}),
    }
)
# Return annotations with nothing to describe: text, raw content, or a full result. A tuple, not
# a set: annotations need not be hashable (``Annotated[int, {"a": 1}]`` is not).
_UNSTRUCTURED: Final = (EMPTY, Any, None, NoneType, str, bytes, object)


def _is_direct(annotation: object) -> bool:
    """Whether ``annotation`` is one of the direct path's types (tested without hashing it)."""
    return any(annotation is fast for fast in _FAST_TYPES)


def _is_json_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)


@final
@dataclass(frozen=True, slots=True)
class Param:
    """One bindable parameter: the name arguments use, its annotation and default (or EMPTY)."""

    name: str
    annotation: Any
    default: Any
    positional_only: bool
    description: str | None


class _SchemaGenerator(GenerateJsonSchema):
    """Pydantic's generator without per-property titles (the property name says it all)."""

    def field_title_should_be_set(self, schema: Any) -> bool:  # noqa: ARG002 -- pydantic's hook signature
        return False

    def emit_warning(self, kind: Any, detail: str) -> None:
        # A default that JSON cannot carry (an object, a sentinel) is simply left out of the
        # schema, which is the right result; the warning would only be noise for the author.
        if kind != "non-serializable-default":
            super().emit_warning(kind, detail)

    def generate(self, schema: CoreSchema, mode: Any = "validation") -> JsonSchemaValue:
        json_schema = super().generate(schema, mode=mode)
        json_schema.pop("title", None)
        return json_schema


@final
class _Schemas:
    """The schemas of one signature, worked out once and shared by every shape that has it."""

    __slots__ = ("input", "output")

    def __init__(self) -> None:
        self.input: FrozenDict | None = None
        self.output: tuple[FrozenDict | None] | None = None


@final
class FunctionShape:
    """What a callable takes and returns; schemas and the argument model are built on demand.

    Functions with the same signature (parameters, annotations, defaults, docstring) share one
    analysis and one pair of schemas (see :func:`shape_of`); ``name`` and ``where`` are each
    function's own.
    """

    __slots__ = (
        "_model",
        "_schemas",
        "_target",
        "_where",
        "description",
        "direct",
        "gateway",
        "injected",
        "name",
        "params",
        "returns",
        "uri",
        "var_keyword",
    )

    def __init__(
        self,
        *,
        name: str,
        where: str | Callable[..., Any],
        description: str | None,
        params: tuple[Param, ...],
        gateway: str | None,
        uri: str | None,
        var_keyword: bool,
        returns: Any,
        injected: tuple[tuple[str, Any, Injector], ...] = (),
    ) -> None:
        self.name = name
        # ``where`` names the function in messages; given the function, it is worked out when
        # a message needs it.
        self._where = where if isinstance(where, str) else None
        self._target = None if isinstance(where, str) else where
        self.description = description
        self.params = params
        self.gateway = gateway
        self.uri = uri
        # Parameters filled by a registered injection rule: (name, annotation, injector).
        self.injected = injected
        self.var_keyword = var_keyword
        self.returns = returns
        # The direct path: every parameter is a JSON scalar type with a JSON default, so neither
        # the schema nor the binding needs a pydantic model.
        self.direct = all(
            _is_direct(p.annotation) and (p.default is EMPTY or _is_json_scalar(p.default))
            for p in params
        )
        self._model: type[pydantic.BaseModel] | None = None
        self._schemas = _Schemas()

    @property
    def where(self) -> str:
        """``module:qualname`` of the function, for messages."""
        if self._where is None:
            self._where = describe(self._target) if self._target is not None else "?"
        return self._where

    def _for(self, fn: Callable[..., Any]) -> FunctionShape:
        """This shape (analysis and schemas shared) for ``fn``, a function with the same signature."""
        shape = object.__new__(FunctionShape)
        shape.name = published_name(fn)
        shape._where = None
        shape._target = fn
        shape.description = self.description
        shape.params = self.params
        shape.gateway = self.gateway
        shape.uri = self.uri
        shape.injected = self.injected
        shape.var_keyword = self.var_keyword
        shape.returns = self.returns
        shape.direct = self.direct
        shape._model = None
        shape._schemas = self._schemas
        return shape

    # -- schemas --------------------------------------------------------------------------------

    def input_schema(self) -> Mapping[str, Any]:
        """The JSON Schema of the arguments (root ``type: object``, ``$defs`` kept), frozen.

        Worked out once per signature and shared: thousands of tools with one signature
        (``x: int``) hold one schema object, which also makes building their definitions cheap.
        Direct-path signatures write it without pydantic.
        """
        schemas = self._schemas
        if schemas.input is None:
            if self.direct:
                key = tuple(
                    (p.name, p.annotation, type(p.default), p.default, p.description)
                    for p in self.params
                )
                schemas.input = _direct_input_schema(key, var_keyword=self.var_keyword)
            else:
                schema = self.model().model_json_schema(schema_generator=_SchemaGenerator)
                try:
                    schemas.input = _frozen(schema)
                except (TypeError, ValueError, RecursionError):
                    return schema  # not JSON: the definition refuses it, naming the field
        return schemas.input

    def output_schema(self) -> Mapping[str, Any] | None:
        """The schema of structured results, or None when the return annotation has no data shape.

        An object-shaped type (dataclass, TypedDict, model, ``dict[str, X]``) is published as is;
        any other data type is wrapped as ``{"result": ...}`` and marked with
        :data:`WRAPPED_MARKER` so the invoker wraps the returned value the same way. Worked out
        once per signature, frozen and shared, like the input schema.
        """
        schemas = self._schemas
        if schemas.output is None:
            schema = self._output_schema()
            try:
                schemas.output = (None if schema is None else _frozen(schema),)
            except (TypeError, ValueError, RecursionError):
                return schema  # not JSON: the definition refuses it, naming the field
        return schemas.output[0]

    def _output_schema(self) -> Mapping[str, Any] | None:
        returns = self.returns
        if returns in _UNSTRUCTURED or _mentions_content(returns):
            return None
        if _is_direct(returns):
            return _direct_output_schema(returns)
        try:
            inner = pydantic.TypeAdapter(returns).json_schema(
                mode="serialization", schema_generator=_SchemaGenerator
            )
        except pydantic.PydanticUserError as exc:
            raise InvalidElementError(
                f"{self.where}: cannot describe the return type {returns!r} as JSON ({exc}); "
                "pass output_schema=None to publish no output schema"
            ) from exc
        return inner if inner.get("type") == "object" else _wrapped(inner)

    def direct_result_check(self, output_schema: Mapping[str, Any]) -> DirectResultCheck | None:
        """A jsonschema-free check equivalent to ``output_schema``, or None.

        Only for this shape's own direct-path output schema (``{"result": <scalar>}``).
        """
        returns = self.returns
        if (
            returns is EMPTY
            or not _is_direct(returns)
            or output_schema != _direct_output_schema(returns)
        ):
            return None
        return DirectResultCheck(returns)

    # -- binding --------------------------------------------------------------------------------

    def model(self) -> type[pydantic.BaseModel]:
        """The pydantic model of the arguments, built on first use and kept."""
        if self._model is None:
            self._model = self._build_model()
        return self._model

    def _build_model(self) -> type[pydantic.BaseModel]:
        fields: dict[str, Any] = {}
        for index, param in enumerate(self.params):
            annotation = Any if param.annotation is EMPTY else param.annotation
            # Fields are named f0, f1... and aliased to the parameter names, so that names pydantic
            # reserves (``_private``, ``model_config``, ``json``) still work as argument names.
            extra: dict[str, Any] = {"alias": param.name}
            if param.description is not None and not _has_description(param.annotation):
                extra["description"] = param.description
            if isinstance(param.default, FieldInfo):
                info = FieldInfo.merge_field_infos(param.default, pydantic.Field(**extra))
            else:
                default = ... if param.default is EMPTY else param.default
                info = pydantic.Field(default, **extra)
            fields[f"f{index}"] = (annotation, info)
        config = pydantic.ConfigDict(extra="allow" if self.var_keyword else "forbid")
        try:
            return pydantic.create_model(f"{self.name}_arguments", __config__=config, **fields)
        except (pydantic.PydanticUserError, TypeError, NameError) as exc:
            raise InvalidElementError(
                f"{self.where}: cannot build an argument model from its signature: {exc}"
            ) from exc

    def bind(
        self, arguments: Mapping[str, Any], *, ref: ElementRef | None, from_text: bool = False
    ) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments for a call, coerced to the parameter types.

        ``from_text`` says the values are strings to be read as the parameter types (prompt
        arguments, template variables); otherwise they are JSON values already validated against
        the published schema.

        Raises:
            ArgumentValidationError: an argument is missing, unknown or of the wrong type.
        """
        values: dict[str, Any]
        if self.direct and not (
            from_text and any(p.annotation not in (EMPTY, str) for p in self.params)
        ):
            values = self._bind_direct(arguments, ref=ref)
        else:
            try:
                validated = self.model().model_validate(dict(arguments))
            except pydantic.ValidationError as exc:
                raise _argument_error(self.name, exc, ref) from exc
            values = {p.name: getattr(validated, f"f{i}") for i, p in enumerate(self.params)}
            values.update(validated.model_extra or {})
        positional = [values.pop(p.name) for p in self.params if p.positional_only]
        return positional, values

    def _bind_direct(
        self, arguments: Mapping[str, Any], *, ref: ElementRef | None
    ) -> dict[str, Any]:
        values: dict[str, Any] = {}
        problems: list[tuple[str, str]] = []
        for param in self.params:
            if param.name in arguments:
                value = _json_number(param.annotation, arguments[param.name])
                if not _fits(param.annotation, value):
                    json_type = _FAST_TYPES[param.annotation]["type"]
                    problems.append((f"/{param.name}", f"{value!r} is not of type {json_type!r}"))
                values[param.name] = value
            elif param.positional_only and param.default is not EMPTY:
                values[param.name] = param.default
            elif param.default is EMPTY:
                problems.append(("/", f"{param.name!r} is a required property"))
        unknown = sorted(set(arguments) - {p.name for p in self.params})
        if self.var_keyword:
            values.update((key, arguments[key]) for key in unknown)
        elif unknown:
            # The messages follow jsonschema's, so a client sees one style whichever path checked.
            listed = ", ".join(map(repr, unknown))
            verb = "was" if len(unknown) == 1 else "were"
            problems.append(
                ("/", f"Additional properties are not allowed ({listed} {verb} unexpected)")
            )
        if problems:
            problems.sort()
            raise argument_error(str(ref) if ref is not None else self.name, problems, ref)
        return values


@final
class DirectResultCheck:
    """Checks ``{"result": value}`` for a scalar return type, as its wrapped schema would.

    Validating a one-property object with jsonschema costs more than the rest of a small tool
    call; this answers the same question for the direct path's schemas.
    """

    __slots__ = ("_annotation",)

    def __init__(self, annotation: object) -> None:
        self._annotation = annotation

    def problems(self, instance: object) -> list[tuple[str, str]]:
        """The violations of ``instance``, in jsonschema's words; [] when it fits."""
        if not isinstance(instance, Mapping) or "result" not in instance:
            return [("/", "'result' is a required property")]
        value = instance["result"]
        if _fits(self._annotation, _json_number(self._annotation, value)):
            return []
        return [("/result", f"{value!r} is not of type {_FAST_TYPES[self._annotation]['type']!r}")]


_DirectKey: TypeAlias = tuple[tuple[str, object, type, object, "str | None"], ...]


@functools.lru_cache(maxsize=4096)
def _direct_input_schema(key: _DirectKey, *, var_keyword: bool) -> FrozenDict:
    # ``key`` holds (name, annotation, type of default, default, description) per parameter; the
    # default's type is part of it because 1, 1.0 and True are equal (and hash alike) in Python.
    properties: dict[str, Any] = {}
    for name, annotation, _, default, description in key:
        prop: dict[str, Any] = dict(_FAST_TYPES[annotation])
        if description is not None:
            prop["description"] = description
        if default is not EMPTY:
            prop["default"] = default
        properties[name] = prop
    schema: dict[str, Any] = {
        "additionalProperties": var_keyword,
        "properties": properties,
        "type": "object",
    }
    required = [name for name, _, _, default, _ in key if default is EMPTY]
    if required:
        schema["required"] = required
    return _frozen(schema)


@functools.lru_cache(maxsize=len(_FAST_TYPES))
def _direct_output_schema(returns: object) -> FrozenDict:
    return _frozen(_wrapped(dict(_FAST_TYPES[returns])))


def _frozen(schema: Mapping[str, Any]) -> FrozenDict:
    frozen = freeze(schema)
    assert isinstance(frozen, FrozenDict)  # noqa: S101 -- a dict always freezes to a FrozenDict
    return frozen


def _wrapped(inner: dict[str, Any]) -> dict[str, Any]:
    """``{"result": inner}`` with the marker; ``$defs`` move to the root to stay resolvable."""
    definitions = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
        WRAPPED_MARKER: True,
    }
    if definitions:
        wrapped["$defs"] = definitions
    return wrapped


def template_binding_problems(shape: FunctionShape, variables: Iterable[str]) -> str | None:
    """Why template ``variables`` cannot bind to ``shape``'s parameters by name, or None."""
    names = set(variables)
    unbound = [] if shape.var_keyword else sorted(names - {p.name for p in shape.params})
    missing = sorted(p.name for p in shape.params if p.default is EMPTY and p.name not in names)
    problems = []
    if unbound:
        problems.append(f"has no parameter for the template variables {unbound}")
    if missing:
        problems.append(f"requires {missing}, which are not template variables")
    if not problems:
        return None
    return " and ".join(problems) + " (template variables bind to parameters by name)"


def _json_number(annotation: object, value: object) -> object:
    # JSON has one number type: 3.0 is a valid integer and 3 a valid number.
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # too large for a float: left an int, refused
            return float(value)
    return value


def _fits(annotation: object, value: object) -> bool:
    if annotation is EMPTY:
        return True
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int or annotation is float:
        return isinstance(value, annotation) and not isinstance(value, bool)
    return isinstance(value, str)


def argument_error(
    owner: str, problems: Sequence[tuple[str, str]], ref: ElementRef | None
) -> ArgumentValidationError:
    """One error for every problem found, the first few listed in the message."""
    listed = "; ".join(
        f"{clip_input(pointer)}: {clip_input(message)}" for pointer, message in problems[:5]
    )
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""  # noqa: PLR2004 -- a readable message
    return ArgumentValidationError(
        f"{owner}: invalid arguments: {listed}{more}", ref=ref, errors=problems
    )


def _argument_error(
    name: str, exc: pydantic.ValidationError, ref: ElementRef | None
) -> ArgumentValidationError:
    problems = [
        ("/" + "/".join(str(part) for part in error["loc"]), error["msg"]) for error in exc.errors()
    ]
    return argument_error(str(ref) if ref is not None else name, problems, ref)


def _has_description(annotation: object) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(
        isinstance(meta, FieldInfo) and meta.description is not None
        for meta in annotation.__metadata__  # type: ignore[attr-defined]  # Annotated aliases carry it
    )


def _mentions_content(annotation: object) -> bool:
    # A return type that is, or contains, content values (``Text | Image``, ``list[Content]``) or
    # a full ToolResult is rendered as content, never as structured data.
    if annotation in CONTENT_TYPES or annotation is ToolResult or annotation is Message:
        return True
    if is_sdk_content_type(annotation):  # the SDK's content blocks, CallToolResult, PromptMessage
        return True
    return any(_mentions_content(arg) for arg in get_args(annotation))


# -- analysis -----------------------------------------------------------------------------------

_SHAPES: weakref.WeakKeyDictionary[Callable[..., Any], FunctionShape] = weakref.WeakKeyDictionary()

# Analyses of plain functions by signature (see _signature_key): the thousands of functions of a
# generated API, or the tools of an application sharing ``(query: str, limit: int = 10)``, are
# analysed once. Bounded; each entry keeps alive what its key names by id.
_ANALYSED: dict[tuple[object, ...], tuple[FunctionShape, object]] = {}
_ANALYSED_MAX: Final = 16_384  # when full, it starts over: that only costs analysing again


def published_name(fn: object) -> str:
    """The name an element declared from ``fn`` gets unless it is given one.

    A function's ``__name__``; a class's or callable object's type name; a ``functools.partial``
    the name of the function it wraps; and a lambda, which has no name of its own,
    ``<module>.lambda_<line>``: the module it is written in and the line it starts on (e.g.
    ``myapp.tools.lambda_12``), the same in every run. Two lambdas starting on one line get one
    name, so the second is reported as a duplicate: give one of them ``name=``.
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None) or type(fn).__name__
    if name != "<lambda>":
        return str(name)
    code = getattr(fn, "__code__", None)
    line = code.co_firstlineno if code is not None else 0
    module = getattr(fn, "__module__", None) or "lambda"
    return f"{module}.lambda_{line}"[-128:].lstrip(".")


def describe(fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a callable, for messages."""
    target = _underlying(fn)
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{qualname}"


def _underlying(fn: object) -> Any:
    if isinstance(fn, functools.partial):
        return fn.func
    if inspect.ismethod(fn):
        return fn.__func__
    if inspect.isfunction(fn) or inspect.isbuiltin(fn):
        return fn
    call = getattr(type(fn), "__call__", None)  # noqa: B004 -- we want the type's __call__, not callable()
    return call if call is not None else fn


def shape_of(fn: Callable[..., Any], *, drop_first: bool = False) -> FunctionShape:
    """The shape of ``fn``. ``drop_first`` skips ``self``/``cls``.

    A plain function is analysed once per signature: another function with the same parameters,
    annotations, defaults and docstring gets a shape sharing that analysis and its schemas.
    Other callables are analysed once each (cached per callable).

    Raises:
        InvalidElementError: the signature cannot be bound by name (``*args``), or an annotation
            cannot be resolved.
    """
    key = _signature_key(fn, drop_first=drop_first)
    if key is not None:
        try:
            found = _ANALYSED.get(key)
        except TypeError:  # an unhashable default or annotation: analysed on its own
            key = None
        else:
            if found is not None:
                return found[0]._for(fn)  # noqa: SLF001 -- the same class
            shape = _analyse(fn, drop_first=drop_first)
            if len(_ANALYSED) >= _ANALYSED_MAX:
                _ANALYSED.clear()
            # The globals the annotations were resolved in are kept alive with the entry.
            _ANALYSED[key] = (shape, getattr(fn, "__globals__", None))
            return shape
    if drop_first:
        return _analyse(fn, drop_first=True)
    try:
        cached = _SHAPES.get(fn)
    except TypeError:  # unhashable or not weakly referenceable: analyse every time
        cached = None
    if cached is not None:
        return cached
    shape = _analyse(fn, drop_first=False)
    with contextlib.suppress(TypeError):  # not weakly referenceable: not cached
        _SHAPES[fn] = shape
    return shape


_ANNOTATION_FREE: Final[Mapping[str, Any]] = MappingProxyType({})


def _signature_key(fn: object, *, drop_first: bool) -> tuple[object, ...] | None:
    """Everything a plain function's analysis depends on, or None for any other callable.

    The code's parameter layout and names, the annotations and defaults (each with its type:
    ``1``, ``1.0`` and ``True`` are equal in Python, not in a schema), the docstring (the
    description and the parameters' descriptions), the namespace string annotations resolve
    in, and the injection rules in force.
    """
    if type(fn) is not types.FunctionType or "__wrapped__" in fn.__dict__:
        return None
    if "__signature__" in fn.__dict__:
        return None
    code = fn.__code__
    annotations = fn.__annotations__ or _ANNOTATION_FREE
    textual = False
    for annotation in annotations.values():
        if type(annotation) is str:
            textual = True
            break
    defaults = fn.__defaults__
    keyword_defaults = fn.__kwdefaults__
    flags = code.co_flags & _VARIADIC
    count = code.co_argcount + code.co_kwonlyargcount + _VARIADIC_NAMES[flags]
    return (
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        flags,
        code.co_varnames[:count],
        tuple(annotations.items()),
        tuple((type(d), d) for d in defaults) if defaults else (),
        tuple((k, type(d), d) for k, d in keyword_defaults.items()) if keyword_defaults else (),
        fn.__doc__,
        drop_first,
        injection_generation(),
        id(fn.__globals__) if textual else None,
    )


_VARIADIC: Final = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
# How many names *args and **kwargs add after the named parameters, by those two flags.
_VARIADIC_NAMES: Final = {
    0: 0,
    inspect.CO_VARARGS: 1,
    inspect.CO_VARKEYWORDS: 1,
    inspect.CO_VARARGS | inspect.CO_VARKEYWORDS: 2,
}


def _parameters(fn: Callable[..., Any], where: str) -> list[inspect.Parameter]:
    """The parameters of ``fn``; read from the code object for plain functions.

    ``inspect.signature`` spends most of its time on cases a plain function does not have
    (wrappers, partials, ``__signature__``) and on re-validating the order of parameters; reading
    the code object directly keeps derivation cheap when thousands of tools are declared.
    """
    if (
        inspect.isfunction(fn)
        and not hasattr(fn, "__wrapped__")
        and not hasattr(fn, "__signature__")
    ):
        code = fn.__code__
        names = code.co_varnames
        positional = code.co_argcount
        keyword_only = code.co_kwonlyargcount
        defaults = fn.__defaults__ or ()
        keyword_defaults = fn.__kwdefaults__ or {}
        first_default = positional - len(defaults)
        parameters = [
            inspect.Parameter(
                name,
                _POSITIONAL_ONLY if index < code.co_posonlyargcount else _POSITIONAL_OR_KEYWORD,
                default=defaults[index - first_default] if index >= first_default else EMPTY,
                annotation=fn.__annotations__.get(name, EMPTY),
            )
            for index, name in enumerate(names[:positional])
        ]
        extra = positional + keyword_only
        if code.co_flags & inspect.CO_VARARGS:
            parameters.append(inspect.Parameter(names[extra], inspect.Parameter.VAR_POSITIONAL))
            extra += 1
        parameters.extend(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=keyword_defaults.get(name, EMPTY),
                annotation=fn.__annotations__.get(name, EMPTY),
            )
            for name in names[positional : positional + keyword_only]
        )
        if code.co_flags & inspect.CO_VARKEYWORDS:
            parameters.append(
                inspect.Parameter(
                    names[extra],
                    inspect.Parameter.VAR_KEYWORD,
                    annotation=fn.__annotations__.get(names[extra], EMPTY),
                )
            )
        return parameters
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:
        raise InvalidElementError(f"{where}: cannot read its signature ({exc})") from exc


_POSITIONAL_ONLY: Final = inspect.Parameter.POSITIONAL_ONLY
_POSITIONAL_OR_KEYWORD: Final = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _analyse(fn: Callable[..., Any], *, drop_first: bool) -> FunctionShape:
    where = describe(fn)
    parameters = all_parameters = _parameters(fn, where)
    if drop_first and parameters:
        parameters = parameters[1:]
    hints = _hints(fn, where, parameters)
    docs = _docstring(fn)
    params: list[Param] = []
    gateway = uri = None
    injected: list[tuple[str, Any, Injector]] = []
    var_keyword = False
    for parameter in parameters:
        annotation = hints.get(parameter.name, EMPTY)
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            raise InvalidElementError(
                f"{where}: *{parameter.name} cannot receive arguments, which arrive by name; "
                "declare named parameters instead"
            )
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = True
        elif _is_injected(annotation, ClientGateway):
            gateway = parameter.name
        elif _is_injected(annotation, RequestedUri):
            uri = parameter.name
        elif (injector := injector_for(annotation)) is not None:
            injected.append((parameter.name, annotation, injector))
        else:
            params.append(
                Param(
                    name=parameter.name,
                    annotation=pydantic_readable(annotation),
                    default=parameter.default,
                    positional_only=parameter.kind is inspect.Parameter.POSITIONAL_ONLY,
                    description=docs.params.get(parameter.name),
                )
            )
    injected_names = {name for name, _, _ in injected}
    for parameter in all_parameters:
        if (
            parameter.name in (gateway, uri) or parameter.name in injected_names
        ) and parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise InvalidElementError(
                f"{where}: the injected parameter {parameter.name!r} must be nameable; make it an "
                "ordinary or keyword-only parameter"
            )
    return FunctionShape(
        name=published_name(fn),
        where=where,
        description=docs.description,
        params=tuple(params),
        gateway=gateway,
        uri=uri,
        var_keyword=var_keyword,
        returns=pydantic_readable(hints.get("return", EMPTY)),
        injected=tuple(injected),
    )


def _docstring(fn: object) -> ParsedDocstring:
    target = fn.func if isinstance(fn, functools.partial) else fn
    # A routine's own docstring is cleaned by the parser; getdoc also looks up inherited ones.
    doc = target.__doc__ if inspect.isroutine(target) else inspect.getdoc(target)
    return parse_docstring(doc)


def _is_injected(annotation: object, marker: object) -> bool:
    if annotation is marker:
        return True
    if isinstance(annotation, str):
        # An annotation left unresolved (imported only under TYPE_CHECKING) is still recognised
        # by name: failing to inject would publish the gateway as an argument nobody can send.
        name = getattr(marker, "__name__", "")
        return annotation == name or annotation.endswith(f".{name}")
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_injected(get_args(annotation)[0], marker)
    if origin is typing.Union or origin is UnionType:
        args = [arg for arg in get_args(annotation) if arg is not NoneType]
        return len(args) == 1 and _is_injected(args[0], marker)
    return isinstance(annotation, type) and marker in annotation.__mro__


def pydantic_readable(annotation: Any) -> Any:
    """``annotation``, with a ``typing.TypedDict`` rebuilt as a ``typing_extensions`` one below 3.12.

    pydantic refuses the standard library's ``TypedDict`` before Python 3.12 (it lacks
    ``__orig_bases__``); the SDK's ``MCPServer`` rebuilds such a type so that tool authors need not
    know, and so does mcp-core: the same keys, requiredness, docstring and name (so the published
    schema is the same). A TypedDict nested in a container (``list[Point]``) still needs
    ``typing_extensions`` there, as with ``MCPServer``.
    """
    if (
        sys.version_info >= (3, 12)
        or not typing.is_typeddict(annotation)
        or type(annotation).__module__ != "typing"
    ):
        return annotation
    return _rebuilt_typeddict(annotation)  # pragma: no cover -- Python 3.11 only


@functools.cache
def _rebuilt_typeddict(typed_dict: type[Any]) -> Any:  # pragma: no cover -- Python 3.11 only
    import typing_extensions  # noqa: PLC0415 -- only for a stdlib TypedDict on 3.11 (ADR 0057)

    items: dict[str, Any] = {}
    for name, hint in typing.get_type_hints(typed_dict, include_extras=True).items():
        # An explicit qualifier wins over the class's totality (pydantic's rule); a 3.11 TypedDict
        # misses it in __required_keys__ when the annotation was a string.
        required = name in typed_dict.__required_keys__
        bare = hint
        while (origin := get_origin(bare)) in (typing.Required, typing.NotRequired):
            required = origin is typing.Required
            bare = get_args(bare)[0]
        bare = pydantic_readable(bare)
        items[name] = bare if required else typing_extensions.NotRequired[bare]
    make: Any = typing_extensions.TypedDict  # the functional form
    rebuilt = make(typed_dict.__name__, items)
    for attribute in ("__doc__", "__module__", "__qualname__", "__pydantic_config__"):
        if hasattr(typed_dict, attribute):
            setattr(rebuilt, attribute, getattr(typed_dict, attribute))
    return rebuilt


def _hints(fn: object, where: str, parameters: list[inspect.Parameter]) -> dict[str, Any]:
    target = _underlying(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # noqa: BLE001, S110 -- any failure falls back to resolving hint by hint below
        pass
    # One annotation could not be resolved; resolve the others one by one so the message names
    # the culprit, and keep recognisable injected annotations as their text.
    namespace = dict(getattr(target, "__globals__", {}))
    hints: dict[str, Any] = {}
    for parameter in parameters:
        annotation = parameter.annotation
        if isinstance(annotation, str):
            if _is_injected(annotation, ClientGateway) or _is_injected(annotation, RequestedUri):
                hints[parameter.name] = annotation
                continue
            try:
                annotation = eval(annotation, namespace)  # noqa: S307 -- resolving the author's own annotation text, as typing.get_type_hints does
            except Exception as exc:
                raise InvalidElementError(
                    f"{where}: cannot resolve the annotation {annotation!r} of parameter "
                    f"{parameter.name!r} ({type(exc).__name__}: {exc}); import that name at module "
                    "level, not only under TYPE_CHECKING"
                ) from exc
        if annotation is not EMPTY:
            hints[parameter.name] = annotation
    returns = inspect.signature(fn).return_annotation if callable(fn) else EMPTY
    if isinstance(returns, str):
        try:
            returns = eval(returns, namespace)  # noqa: S307 -- same as above
        except Exception:  # noqa: BLE001 -- an unresolvable return annotation only loses the output schema
            returns = EMPTY
    if returns is not EMPTY:
        hints["return"] = returns
    return hints
