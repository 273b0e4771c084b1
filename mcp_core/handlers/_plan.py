"""The call plan: how one element's handler is called, built once where the handler is adapted.

A plan says what to call (a handler protocol's method, or a function bound by parameter name with
its :class:`~mcp_core.handlers._functions.FunctionShape`), whether it is async, its argument
filter and the validators the Invoker compiles for it. :func:`adapt` builds it; the
:class:`~mcp_core.handlers.Invoker` keeps one per element and only runs it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, TypeAlias, cast, final

import anyio.to_thread

from mcp_core._stretches import waited_on
from mcp_core.elements import (
    Element,
    ElementKind,
    HandlerRef,
    ResourceTemplate,
)
from mcp_core.elements._element import take_vouch, vouch_for
from mcp_core.errors import (
    HandlerKindError,
    InvalidElementError,
)
from mcp_core.handlers._completion import CompletionCall, adapt_completion
from mcp_core.handlers._functions import (
    EMPTY,
    DirectResultCheck,
    FunctionShape,
    shape_of,
    template_binding_problems,
)
from mcp_core.handlers._injection import Injection
from mcp_core.handlers._jsonschema import CompiledSchema
from mcp_core.handlers._protocols import (
    ArgumentFilter,
    ClientGateway,
    PromptHandler,
    ResourceHandler,
    ToolHandler,
)

__all__ = ["Binder", "CallPlan", "adapt", "validate_handler"]


# The method a handler object implements for each kind, and how many arguments it takes.
_PROTOCOL: Final[Mapping[ElementKind, tuple[str, int, str]]] = {
    ElementKind.TOOL: ("execute", 2, "a ToolHandler (execute(arguments, gateway))"),
    ElementKind.RESOURCE: ("read", 2, "a ResourceHandler (read(uri, gateway))"),
    ElementKind.RESOURCE_TEMPLATE: (
        "read",
        3,
        "a ResourceTemplateHandler (read(uri, variables, gateway))",
    ),
    ElementKind.PROMPT: ("get", 2, "a PromptHandler (get(arguments, gateway))"),
}
# What a handler object of the wrong kind is called, in the order it is told.
_NAMES: Final[tuple[tuple[type, str], ...]] = (
    (ToolHandler, "a ToolHandler"),
    (ResourceHandler, "a resource handler"),
    (PromptHandler, "a PromptHandler"),
)


def _protocol_method(handler: object, kind: ElementKind) -> Callable[..., Any] | None:
    """The handler protocol's method ``handler`` offers for ``kind`` (None: it offers none).

    Decided by the handler's class, as mypy decides it (and as cheaply as a lookup: the answer is
    cached per class). Resource and template handlers both ``read``; their arity tells them apart
    (the caller checks).
    """
    if inspect.isroutine(handler):
        return None  # a function or method is called itself (and most handlers are)
    offers = type(handler)
    method: object = None
    if kind is ElementKind.TOOL and issubclass(offers, ToolHandler):
        method = cast("ToolHandler", handler).execute
    elif kind is ElementKind.PROMPT and issubclass(offers, PromptHandler):
        method = cast("PromptHandler", handler).get
    elif kind in ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE and issubclass(
        offers, ResourceHandler
    ):
        method = cast("ResourceHandler", handler).read
    return method if callable(method) else None


Binder: TypeAlias = Callable[
    [Mapping[str, Any], ClientGateway, str | None], tuple[list[Any], dict[str, Any]]
]
"""The call's positional and keyword arguments from a request's values, gateway and URI."""


@final
@dataclass(slots=True)
class CallPlan:
    """How to serve one element; built once (:func:`adapt`), then only run.

    ``arguments`` makes the call's arguments from what the request carries (the protocol's fixed
    positions, or the function's parameters by name, coerced to their types); :meth:`run` calls
    the handler with them (injected parameters filled, a sync callable in a worker thread).
    """

    call: Callable[..., Any]
    is_async: bool
    shape: FunctionShape | None  # None: a protocol object, called with the protocol's arguments
    filter: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None
    arguments: Binder
    input_validator: CompiledSchema | None = None
    output_validator: CompiledSchema | DirectResultCheck | None = None
    completions: dict[str, CompletionCall] = field(default_factory=dict)

    async def run(self, args: list[Any], kwargs: dict[str, Any], gateway: ClientGateway) -> object:
        """Call the handler; what it returns, awaited until it is no awaitable."""
        call = self.call
        if self.shape is not None and self.shape.injected:
            # Injected here, inside the caller's error handling and time limit: an
            # injector's failure (a declined elicitation, say) is the call's failure.
            kwargs.update(await _inject(call, self.shape, kwargs, gateway))
        if self.is_async:
            return await _awaited(call(*args, **kwargs))
        # Sync handlers may block (files, databases): a worker thread keeps the event loop
        # free. A cancelled or timed-out call abandons the thread (it cannot be stopped). A
        # build on the loop gives the thread its turn (see mcp_core._stretches).
        with waited_on():
            result = await anyio.to_thread.run_sync(
                functools.partial(call, *args, **kwargs), abandon_on_cancel=True
            )
        return await _awaited(result)


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 -- an async __call__ is what is asked about
    )


def _arity(method: Callable[..., Any]) -> int | None:
    """How many positional arguments ``method`` takes (None: any number, or unknown)."""
    function = getattr(method, "__func__", None)
    if inspect.ismethod(method) and inspect.isfunction(function):
        # A bound method's arity is its class's function's, less the bound first argument:
        # decided once per function, not once per element (thousands share a handler class).
        found = _function_arity(function)
        return None if found is None else max(found - 1, 0)
    return _signature_arity(method)


@functools.lru_cache(maxsize=1024)
def _function_arity(function: Callable[..., Any]) -> int | None:
    return _signature_arity(function)


def _signature_arity(method: Callable[..., Any]) -> int | None:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters)


def adapt(element: Element, handler: object) -> CallPlan:
    """The call plan of ``handler`` for ``element``'s kind, without validators.

    Raises:
        HandlerKindError: the handler cannot serve the element's kind.
    """
    method, shape = _served_by(element, handler)
    call = handler if method is None else method
    return CallPlan(
        call=call,  # type: ignore[arg-type]  # _served_by found it callable
        is_async=_is_async(call),  # type: ignore[arg-type]  # same
        shape=shape,
        filter=handler.filter_arguments if isinstance(handler, ArgumentFilter) else None,
        arguments=_protocol_binder(element.kind) if shape is None else _binder(element, shape),
    )


def _protocol_binder(kind: ElementKind) -> Binder:
    """A handler object's arguments: the fixed positions of its kind's protocol method."""
    if kind is ElementKind.RESOURCE_TEMPLATE:
        return lambda values, gateway, uri: ([uri, values, gateway], {})
    if kind is ElementKind.RESOURCE:
        return lambda _values, gateway, uri: ([uri, gateway], {})
    return lambda values, gateway, _uri: ([values, gateway], {})


def _binder(element: Element, shape: FunctionShape) -> Binder:
    """A function's arguments: its parameters by name, the gateway and URI where it asks for them.

    Tool arguments are JSON values (validated against the published schema); prompt arguments
    and template variables are text read as the parameter types; a fixed resource gets none.
    """
    ref = element.ref
    from_text = element.kind is not ElementKind.TOOL
    fixed = element.kind is ElementKind.RESOURCE

    def bind(
        values: Mapping[str, Any], gateway: ClientGateway, uri: str | None
    ) -> tuple[list[Any], dict[str, Any]]:
        positional, keywords = shape.bind({} if fixed else values, ref=ref, from_text=from_text)
        if shape.gateway is not None:
            keywords[shape.gateway] = gateway
        if shape.uri is not None:
            keywords[shape.uri] = uri
        return positional, keywords

    return bind


def _served_by(element: Element, handler: object) -> tuple[Any, FunctionShape | None]:
    """How ``handler`` serves ``element``: ``(protocol method, None)`` or ``(None, its shape)``.

    Raises:
        HandlerKindError: the handler cannot serve the element's kind.
    """
    kind = element.kind
    ref = element.ref
    method_name, arity, wanted = _PROTOCOL[kind]
    if isinstance(handler, type):
        raise HandlerKindError(
            f"{ref}: its handler is the class {handler.__qualname__}, not an instance; pass an "
            "instance, or a HandlerRef to the class (which is instantiated on first use)",
            ref=ref,
            field="handler",
        )
    method = _protocol_method(handler, kind)
    if method is not None:
        actual = _arity(method)
        if actual is not None and actual != arity:
            if method_name == "read":
                other = "a ResourceTemplateHandler" if actual == 3 else "a ResourceHandler"  # noqa: PLR2004 -- read(uri, variables, gateway)
                what = f"looks like {other} (read() takes {actual} arguments)"
            else:
                what = f"has {method_name}() taking {actual} arguments"
            raise HandlerKindError(
                f"{ref}: its handler {handler!r} {what}, but a {kind.label} needs {wanted} or a callable",
                ref=ref,
                field="handler",
            )
        return method, None
    if not callable(handler):
        others = [name for protocol, name in _NAMES if issubclass(type(handler), protocol)]
        what = (
            f"{others[0]} ({type(handler).__name__})" if others else f"a {type(handler).__name__}"
        )
        raise HandlerKindError(
            f"{ref}: its handler is {what}, which cannot serve a {kind.label}; a {kind.label} "
            f"needs {wanted} or a callable",
            ref=ref,
            field="handler",
        )
    try:
        shape = shape_of(handler)
    except InvalidElementError as exc:
        raise HandlerKindError(f"{ref}: {exc}", ref=ref, field="handler") from exc
    problem = _binding_problem(element, shape)
    if problem is not None:
        raise HandlerKindError(f"{ref}: {shape.where} {problem}", ref=ref, field="handler")
    return None, shape


def _binding_problem(element: Element, shape: FunctionShape) -> str | None:
    definition = element.definition
    if isinstance(definition, ResourceTemplate):
        return template_binding_problems(shape, definition.template.variables)
    if element.kind is ElementKind.RESOURCE:
        required = [p.name for p in shape.params if p.default is EMPTY]
        if required:
            return f"requires {required}, but a fixed resource is read without arguments"
    if shape.uri is not None and element.kind in ElementKind.TOOL | ElementKind.PROMPT:
        return f"takes a RequestedUri ({shape.uri!r}), which only resource handlers receive"
    return None


async def _inject(
    handler: Callable[..., Any],
    shape: FunctionShape,
    bound: Mapping[str, Any],
    gateway: ClientGateway,
) -> dict[str, Any]:
    """The values of the parameters registered injection rules fill (see ``_injection``)."""
    shared: dict[object, Any] = {}
    arguments = MappingProxyType(dict(bound))  # the bound arguments only, as they were
    everything = MappingProxyType({name: annotation for name, annotation, _ in shape.injected})
    values: dict[str, Any] = {}
    for name, annotation, injector in shape.injected:
        value = injector(
            Injection(
                gateway=gateway,
                handler=handler,
                parameter=name,
                annotation=annotation,
                arguments=arguments,
                injected=everything,
                shared=shared,
            )
        )
        values[name] = await value if inspect.isawaitable(value) else value
    return values


async def _awaited(result: object) -> object:
    # A handler (sync or async) may hand back an awaitable; what it resolves to is the result.
    while inspect.isawaitable(result):
        result = await result
    return result


def vouch(element: Element) -> None:
    """Record that ``element``'s handler was just checked against its kind (by derivation).

    Its admission then skips the handler's check (a catalogue's load analysed every function
    twice: a quarter of merging it). Only the object itself is vouched for, once: a copy with
    another handler (``dataclasses.replace``) is a different object and is checked, and so is
    a second admission. A handler that offers its kind's protocol method besides being
    callable is served by that method, not by the function the derivation analysed: it is not
    vouched for.
    """
    if _protocol_method(element.handler, element.kind) is None:
        vouch_for(element)


def validate_handler(element: Element) -> None:
    """Check that the element's handler can serve its kind; references are checked on use.

    Registries call this for every element they admit (the reference ``Registry`` does by
    default), so a wrong-kind pairing costs only its element. An element derived from the
    function serving it was checked when derived (:func:`vouch`); its handler is not analysed
    again the first time it is admitted.

    Raises:
        HandlerKindError: the handler (or a completion provider) is of the wrong kind.
    """
    handler = element.handler
    if not take_vouch(element) and not isinstance(handler, HandlerRef):
        _served_by(element, handler)
    for argument, provider in (element.completions or {}).items():
        if not isinstance(provider, HandlerRef):
            adapt_completion(provider, owner=f"{element.ref}: completion of {argument!r}")
