"""The Invoker: the one way the server layer calls a handler.

For each element it keeps, once built, the element's call plan (:mod:`~mcp_core.handlers._plan`):
the resolved handler adapted to its kind, its argument binder and filter, plus the compiled JSON
Schema validators; a call then only runs the plan. Plans live in a bounded LRU keyed by the
element (elements are immutable values), validators in one keyed by the schema (many tools share
a schema), so a call costs a dictionary lookup however many elements are registered.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, final

import anyio.to_thread
from cachetools import LRUCache

from mcp_core.elements import (
    Element,
    ElementKind,
    ElementRef,
    HandlerRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.elements._json import thaw
from mcp_core.errors import (
    ArgumentValidationError,
    ClientCapabilityError,
    HandlerError,
    HandlerResolutionError,
    HandlerTimeoutError,
    InvalidElementError,
    PromptError,
    ResourceError,
    ResourceNotFoundError,
)
from mcp_core.handlers._completion import CompletionCall, adapt_completion, completion_result
from mcp_core.handlers._containment import Failure, escapes, from_user_frame, on_purpose
from mcp_core.handlers._current_element import serving
from mcp_core.handlers._encodable import unencodable
from mcp_core.handlers._functions import (
    argument_error,
)
from mcp_core.handlers._jsonschema import CompiledSchema
from mcp_core.handlers._plan import CallPlan, adapt, validate_handler
from mcp_core.handlers._protocols import (
    ClientGateway,
    Container,
)
from mcp_core.handlers._resolve import Resolver
from mcp_core.handlers._results import (
    normalize_prompt_messages,
    normalize_resource_contents,
    normalize_tool_result,
)
from mcp_core.handlers._sdk_values import is_protocol_error

__all__ = ["HandlerTimeout", "Invoker"]

_log = logging.getLogger("mcp_core.handlers")
_T = TypeVar("_T")

HandlerTimeout = float | Callable[[Element], float | None] | None
"""How long a handler may run: seconds for every element, a function of the element (None: no
limit for that one), or None for no limit."""


@final
class Invoker:
    """Calls handlers for the server: resolution, validation, binding, result normalisation.

    A handler is used as, in order: the element kind's protocol object (``execute`` for tools,
    ``read`` for resources and templates, told apart by arity, ``get`` for prompts; an optional
    ``filter_arguments`` applies first), else a callable bound by parameter name. Sync callables
    and methods run in a worker thread; a sync handler that needs the gateway calls it with
    ``anyio.from_thread.run(gateway.log, ...)``.

    While a handler (or completion provider) runs, ``gateway.element`` is the element it serves,
    so one handler can stand behind many names.

    ``container`` is consulted first when resolving a :class:`~mcp_core.elements.HandlerRef`.
    ``cache_size`` bounds the per-element plans and the compiled validators kept (least recently
    used first out); the default holds every element of a large catalogue.

    ``timeout`` bounds how long a handler (or completion provider) may run, in seconds: one
    number for every element, or a function ``timeout(element) -> float | None`` deciding per
    element (by tag, name, kind...); ``None`` (the default) sets no limit. A tool that runs out of
    time answers an error result; a read, prompt or completion raises
    :class:`~mcp_core.errors.HandlerTimeoutError`. A sync handler cannot be stopped: its worker
    thread runs on and its result is discarded (the same happens when the client cancels).

    Crash containment: whatever a handler raises, except cancellation, ``KeyboardInterrupt`` and
    ``GeneratorExit`` (see :func:`~mcp_core.handlers._containment.escapes`), fails only its own
    call; ``SystemExit`` included. The SDK's ``MCPError`` (a deliberate protocol error with its
    code and data, such as ``UrlElicitationRequiredError``) is not a crash: it is the request's
    answer, as in the SDK's ``MCPServer``. A result that cannot be sent as UTF-8 JSON (a lone surrogate,
    ``NaN``, an object of an unknown type, nesting deeper than
    :data:`~mcp_core.handlers._encodable.MAX_RESULT_DEPTH`) fails the call the same way instead
    of breaking the transport after the fact.
    """

    __slots__ = ("_plans", "_resolver", "_timeout", "_validators")

    def __init__(
        self,
        *,
        container: Container | None = None,
        cache_size: int = 65_536,
        timeout: HandlerTimeout = None,
    ) -> None:
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, got {cache_size}")
        if timeout is not None and not callable(timeout):
            _check_seconds(timeout)
        self._resolver = Resolver(container)
        # Not thread-safe, and need not be: only the event loop touches them (worker threads
        # run handlers, never this code).
        self._plans: LRUCache[Element, CallPlan] = LRUCache(cache_size)
        self._validators: LRUCache[Mapping[str, Any], CompiledSchema] = LRUCache(cache_size)
        self._timeout = timeout

    # -- request path -----------------------------------------------------------------------------

    async def call_tool(
        self, element: Element, arguments: Mapping[str, Any] | None, gateway: ClientGateway
    ) -> dict[str, Any]:
        """Call a tool; returns a ``CallToolResult`` in wire shape.

        ``{"content": [...], "structuredContent"?: {...}, "isError"?: true}``. A
        :class:`~mcp_core.errors.ToolError` (any error :func:`on_purpose` recognises) becomes an
        error result carrying its message; any other exception from the tool (``SystemExit`` and
        other ``BaseException`` subclasses included; cancellation propagates) becomes an error
        result with a generic message and is logged (logger ``mcp_core.handlers``), never sent.
        Structured content is checked against the output schema; a mismatch is handled like an
        exception. A result that cannot be sent as JSON, or a tool that runs out of time, is an
        error result saying so.

        Raises:
            ArgumentValidationError: the arguments (after the handler's argument filter) do not
                match the input schema or the handler's parameters.
            HandlerResolutionError, HandlerKindError: the handler cannot be resolved or cannot
                serve a tool (a server error, not a tool failure).
            ClientCapabilityError: the tool asked the client for something it did not declare.
        """
        definition = element.definition
        if not isinstance(definition, Tool):
            raise TypeError(f"call_tool needs a tool element, got {element.ref}")
        plan = self._plan(element)
        args: Mapping[str, Any] = dict(arguments or {})
        if plan.filter is not None:
            args = plan.filter(args)
        if plan.input_validator is not None:
            _validate_arguments(plan.input_validator, args, element.ref)
        call_args, call_kwargs = plan.arguments(args, gateway, None)
        # Containment: whatever the tool raises (SystemExit too) is its own error result.
        try:
            value = await self._run(element, plan, call_args, call_kwargs, gateway)
        except (ArgumentValidationError, ClientCapabilityError):
            raise
        except HandlerTimeoutError as exc:
            _log.warning("%s", exc)
            return _error_result(f"Error executing tool {definition.name}: {exc.reason}")
        except BaseException as exc:
            if escapes(exc) or is_protocol_error(exc):
                raise  # a protocol error (the SDK's MCPError) is the request's answer, as is
            if on_purpose(exc) is not None:  # a ToolError (or the like): its message is the text
                return _error_result(str(exc) or type(exc).__name__)
            generic = _generic_error(definition.name)
            _log.error(
                "tool %r raised; the client is told only %r",
                definition.name,
                generic["content"][0]["text"],
                exc_info=from_user_frame(exc),
            )
            return generic
        return _tool_result(plan, definition, value)

    def takes_gateway(self, element: Element) -> bool:
        """Whether calling ``element`` hands the request's gateway to its handler.

        True for a handler object (its methods take the gateway), and for a function with a
        gateway parameter or any injected one (an injector is given the gateway). Builds the
        element's plan as a call does, so a handler that cannot be resolved raises here.
        """
        shape = self._plan(element).shape
        return shape is None or shape.gateway is not None or bool(shape.injected)

    async def read_resource(
        self, element: Element, uri: str, variables: Mapping[str, str], gateway: ClientGateway
    ) -> dict[str, Any]:
        """Read a resource or a templated resource; returns ``{"contents": [...]}``.

        Exceptions propagate for the server to map; one the handler raised on purpose
        (:func:`on_purpose`) becomes a :class:`~mcp_core.errors.ResourceNotFoundError` or
        :class:`~mcp_core.errors.ResourceError` carrying ``uri`` and its message. A template
        variable that does not convert to its parameter's type raises
        :class:`~mcp_core.errors.ArgumentValidationError`; a result that cannot be sent as JSON
        raises ``ValueError``; running out of time raises
        :class:`~mcp_core.errors.HandlerTimeoutError`.
        """
        templated = element.kind is ElementKind.RESOURCE_TEMPLATE
        if not templated and element.kind is not ElementKind.RESOURCE:
            raise TypeError(
                f"read_resource needs a resource or template element, got {element.ref}"
            )
        plan = self._plan(element)
        call_args, call_kwargs = plan.arguments(variables, gateway, uri)
        try:
            value = await self._run(element, plan, call_args, call_kwargs, gateway)
        except Exception as exc:
            failure = on_purpose(exc)
            if failure is None:
                raise
            error = _read_error(exc, failure, uri)
            if error is exc:
                raise
            raise error from exc
        definition = element.definition
        mime_type = (
            definition.mime_type if isinstance(definition, Resource | ResourceTemplate) else None
        )
        return _sendable(
            element,
            {"contents": normalize_resource_contents(value, uri=uri, mime_type=mime_type)},
        )

    async def get_prompt(
        self, element: Element, arguments: Mapping[str, str] | None, gateway: ClientGateway
    ) -> dict[str, Any]:
        """Render a prompt; returns ``{"description"?, "messages": [...]}``.

        Raises:
            ArgumentValidationError: a required prompt argument is missing, or an argument does
                not convert to its parameter's type.
            PromptError: the handler failed on purpose (any error :func:`on_purpose`
                recognises); the message is meant for the client.
            ValueError: the rendered messages cannot be sent as JSON.
            HandlerTimeoutError: the handler ran out of time.
        """
        definition = element.definition
        if not isinstance(definition, Prompt):
            raise TypeError(f"get_prompt needs a prompt element, got {element.ref}")
        plan = self._plan(element)
        args: Mapping[str, Any] = dict(arguments or {})
        if plan.filter is not None:
            args = plan.filter(args)
        missing = [a.name for a in definition.arguments or () if a.required and a.name not in args]
        if missing:
            raise ArgumentValidationError(
                f"{element.ref}: missing required argument(s) {missing}",
                ref=element.ref,
                errors=[(f"/{name}", "a required argument is missing") for name in missing],
            )
        call_args, call_kwargs = plan.arguments(args, gateway, None)
        try:
            value = await self._run(element, plan, call_args, call_kwargs, gateway)
        except Exception as exc:
            if on_purpose(exc) is None:
                raise
            if isinstance(exc, PromptError):
                exc.name = exc.name or definition.name
                raise
            raise PromptError(str(exc), name=definition.name) from exc
        result: dict[str, Any] = {"messages": normalize_prompt_messages(value)}
        if definition.description is not None:
            result["description"] = definition.description
        return _sendable(element, result)

    async def complete(
        self,
        element: Element,
        argument: str,
        value: str,
        context: Mapping[str, str],
        gateway: ClientGateway,
    ) -> dict[str, Any]:
        """Suggest values for ``argument``: ``{"values": [...], "total"?: n, "hasMore": bool}``.

        At most 100 values. An argument without a provider gets ``{"values": [], "hasMore":
        False}``. A provider that fails on purpose (any error :func:`on_purpose` recognises)
        raises a :class:`~mcp_core.errors.HandlerError` with its message, meant for the client.
        """
        providers = element.completions or {}
        if argument not in providers:
            return {"values": [], "hasMore": False}
        plan = self._plan(element)
        complete = plan.completions.get(argument)
        if complete is None:
            complete = self._completion(element, argument, providers[argument])
            plan.completions[argument] = complete
        with serving(element):
            try:
                values = await self._timed(element, complete(value, context, gateway))
            except Exception as exc:
                if on_purpose(exc) is None or _meant_for_completion(exc):
                    raise
                # The SDK's or fastmcp's, or a "not found" (a read's answer, not a completion's).
                raise HandlerError(str(exc) or type(exc).__name__) from exc
        return _sendable(element, completion_result(values))

    # -- ahead of time ------------------------------------------------------------------------------

    def check(self, element: Element) -> list[str]:
        """Problems found ahead of time, each naming the element and the reference; [] when fine.

        Resolves the handler and completion providers (importing modules as the first call
        would), checks their kinds and compiles the schemas.
        """
        problems: list[str] = []
        try:
            self._plan(element)
        except (HandlerResolutionError, InvalidElementError) as exc:
            problems.append(str(exc))
        for argument, provider in (element.completions or {}).items():
            try:
                self._completion(element, argument, provider)
            except (HandlerResolutionError, InvalidElementError) as exc:
                problems.append(str(exc))
        return problems

    def validate_handler(self, element: Element) -> None:
        """Check that the element's handler can serve its kind (see :func:`validate_handler`)."""
        validate_handler(element)

    # -- internals ------------------------------------------------------------------------------------

    async def _run(
        self,
        element: Element,
        plan: CallPlan,
        args: list[Any],
        kwargs: dict[str, Any],
        gateway: ClientGateway,
    ) -> object:
        # The handler (and its injectors) learn what it serves (gateway.element) from the
        # context for the whole call.
        with serving(element):
            return await self._timed(element, plan.run(args, kwargs, gateway))

    async def _timed(self, element: Element, work: Awaitable[_T]) -> _T:
        timeout = self._timeout(element) if callable(self._timeout) else self._timeout
        if timeout is None:
            return await work
        _check_seconds(timeout)
        with anyio.move_on_after(timeout):
            return await work
        raise HandlerTimeoutError(
            f"{element.ref}: the handler did not finish within {timeout:g} s",
            ref=element.ref,
            timeout=timeout,
        )

    def _plan(self, element: Element) -> CallPlan:
        plan = self._plans.get(element)
        if plan is None:
            plan = self._build_plan(element)
            self._plans[element] = plan
        return plan

    def _build_plan(self, element: Element) -> CallPlan:
        handler = element.handler
        if isinstance(handler, HandlerRef):
            handler = self._resolver.resolve(handler, element.ref)
        plan = adapt(element, handler)
        definition = element.definition
        if isinstance(definition, Tool):
            shape = plan.shape
            if shape is None or not shape.direct or definition.input_schema != shape.input_schema():
                plan.input_validator = self._validator(
                    definition.input_schema, element.ref, "input_schema"
                )
            # else: the schema is the one derived on the direct path, and the direct binder checks
            # exactly what it says (types, required and unknown arguments; the schema-agreement
            # property test holds both to it), so a second, slower check would add nothing.
            if definition.output_schema is not None:
                check = (
                    shape.direct_result_check(definition.output_schema)
                    if shape is not None
                    else None
                )
                plan.output_validator = check or self._validator(
                    definition.output_schema, element.ref, "output_schema"
                )
        return plan

    def _validator(
        self, schema: Mapping[str, Any], ref: ElementRef, field_name: str
    ) -> CompiledSchema:
        validator = self._validators.get(schema)
        if validator is None:
            try:
                validator = CompiledSchema(thaw(schema))
            except ValueError as exc:
                raise InvalidElementError(
                    f"{ref}: {field_name} is {exc}", ref=ref, field=field_name
                ) from exc
            self._validators[schema] = validator
        return validator

    def _completion(self, element: Element, argument: str, provider: object) -> CompletionCall:
        if isinstance(provider, HandlerRef):
            provider = self._resolver.resolve(provider, element.ref)
        return adapt_completion(provider, owner=f"{element.ref}: completion of {argument!r}")


def _check_seconds(timeout: object) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"a handler timeout is a positive number of seconds, got {timeout!r}")


def _sendable(element: Element, result: dict[str, Any]) -> dict[str, Any]:
    problem = unencodable(result)
    if problem is not None:
        raise ValueError(f"{element.ref}: its handler's result cannot be sent as JSON: {problem}")
    return result


def _validate_arguments(
    validator: CompiledSchema, arguments: Mapping[str, Any], ref: ElementRef
) -> None:
    if validator.is_valid(arguments):
        return
    raise argument_error(str(ref), validator.problems(arguments), ref)


def _check_output(plan: CallPlan, result: Mapping[str, Any], name: str) -> None:
    validator = plan.output_validator
    if validator is None or result.get("isError"):
        return
    structured = result.get("structuredContent")
    if structured is None:
        raise ValueError(f"tool {name!r} has an output schema but returned no structured content")
    problems = validator.problems(structured)
    if problems:
        details = "; ".join(f"{pointer}: {message}" for pointer, message in problems[:5])
        raise ValueError(
            f"tool {name!r} returned structured content not matching its output schema: {details}"
        )


def _tool_result(plan: CallPlan, definition: Tool, value: object) -> dict[str, Any]:
    """The wire result of a tool's return value, or an error result if it cannot be published."""
    try:
        result = normalize_tool_result(value, output_schema=definition.output_schema)
        _check_output(plan, result, definition.name)
    except Exception:  # noqa: BLE001 -- a result that cannot be published is the tool's error result
        _log.exception("tool %r returned a result that cannot be published", definition.name)
        return _generic_error(definition.name)
    problem = unencodable(result)
    if problem is not None:
        _log.error("tool %r returned a result that cannot be sent: %s", definition.name, problem)
        return _error_result(
            f"Error executing tool {definition.name}: its result cannot be sent as JSON ({problem})"
        )
    return result


def _meant_for_completion(exc: Exception) -> bool:
    """Whether ``exc``, raised on purpose by a completion provider, is answered as it is."""
    return isinstance(exc, HandlerError) and not isinstance(exc, ResourceNotFoundError)


def _read_error(exc: Exception, failure: Failure, uri: str) -> ResourceError:
    """``exc``, raised on purpose by a read of ``uri``, as mcp-core's error for it."""
    if isinstance(exc, ResourceError):  # mcp-core's own: kept, with the URI filled in
        exc.uri = exc.uri or uri
        return exc
    kind = ResourceNotFoundError if failure is Failure.NOT_FOUND else ResourceError
    return kind(str(exc), uri=uri)


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _generic_error(name: str) -> dict[str, Any]:
    return _error_result(f"Error executing tool {name}")
