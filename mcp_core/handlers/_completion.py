"""Completion providers in every accepted shape, turned into one async call.

Accepted providers (the values of ``Element.completions``):

- a :class:`~mcp_core.handlers.CompletionProvider` object (``complete(value, context, gateway)``);
- a list, tuple or set of strings: the values starting with what the user typed
  (case-insensitively), in order (a set is sorted first);
- an :class:`enum.Enum` class: its members' values as strings, filtered the same way;
- a function, sync or async: ``(value)`` or ``(value, context)``, returning an iterable of strings;
  a parameter annotated ``ClientGateway`` is injected. It does its own filtering.

At most :data:`MAX_COMPLETIONS` values are returned, with ``total`` when it is known and
``hasMore`` when values were left out, as ``completion/complete`` specifies.
"""

from __future__ import annotations

import enum
import functools
import inspect
import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

import anyio.to_thread

from mcp_core._stretches import waited_on
from mcp_core.errors import HandlerKindError, InvalidElementError
from mcp_core.handlers._functions import shape_of
from mcp_core.handlers._protocols import ClientGateway, CompletionProvider

__all__ = ["MAX_COMPLETIONS", "CompletionCall", "adapt_completion", "completion_result"]

MAX_COMPLETIONS: Final = 100
"""The specification's cap on ``values`` in one completion result."""

CompletionCall = Callable[[str, Mapping[str, str], ClientGateway], Awaitable[Iterable[str]]]


def _prefix_filter(values: tuple[str, ...]) -> CompletionCall:
    async def complete(
        value: str,
        context: Mapping[str, str],  # noqa: ARG001 -- the common call shape
        gateway: ClientGateway,  # noqa: ARG001 -- same
    ) -> Iterable[str]:
        typed = value.casefold()
        return [candidate for candidate in values if candidate.casefold().startswith(typed)]

    return complete


def adapt_completion(provider: object, *, owner: str) -> CompletionCall:
    """One async call for ``provider``; ``owner`` names the element and argument in errors.

    Raises:
        HandlerKindError: ``provider`` has none of the accepted shapes.
    """
    if isinstance(provider, type) and issubclass(provider, enum.Enum):
        return _prefix_filter(tuple(str(member.value) for member in provider))
    if isinstance(provider, list | tuple | AbstractSet) and not isinstance(provider, str):
        values = sorted(provider) if isinstance(provider, AbstractSet) else list(provider)
        if not all(isinstance(v, str) for v in values):
            raise HandlerKindError(f"{owner}: completion values must be strings, got {values!r}")
        return _prefix_filter(tuple(values))
    if not isinstance(provider, type) and isinstance(provider, CompletionProvider):
        return _call(
            provider.complete, lambda value, context, gateway: ((value, context, gateway), {})
        )
    if callable(provider) and not isinstance(provider, type):
        return _function(provider, owner=owner)
    raise HandlerKindError(
        f"{owner}: {type(provider).__name__} {provider!r} cannot complete values; give a "
        "CompletionProvider object, a list of strings, an Enum class, or a function "
        "(value) or (value, context) returning strings"
    )


def _function(fn: Callable[..., Any], *, owner: str) -> CompletionCall:
    try:
        shape = shape_of(fn)
    except InvalidElementError as exc:
        raise HandlerKindError(f"{owner}: {exc}") from exc
    required = [p for p in shape.params if p.default is inspect.Parameter.empty]
    if not shape.params or len(required) > 2:  # noqa: PLR2004 -- (value, context)
        raise HandlerKindError(
            f"{owner}: a completion function takes (value) or (value, context), and "
            f"{shape.where} takes {[p.name for p in shape.params]}"
        )
    takes_context = len(shape.params) >= 2  # noqa: PLR2004 -- same
    gateway_name = shape.gateway

    def arguments(
        value: str, context: Mapping[str, str], gateway: ClientGateway
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs = {gateway_name: gateway} if gateway_name is not None else {}
        return ((value, context) if takes_context else (value,)), kwargs

    return _call(fn, arguments)


def _call(
    fn: Callable[..., Any],
    arguments: Callable[
        [str, Mapping[str, str], ClientGateway], tuple[tuple[Any, ...], dict[str, Any]]
    ],
) -> CompletionCall:
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 -- an async __call__ is what is asked about
    )

    async def complete(
        value: str, context: Mapping[str, str], gateway: ClientGateway
    ) -> Iterable[str]:
        args, kwargs = arguments(value, context, gateway)
        if is_async:
            result = await fn(*args, **kwargs)
        else:
            # Providers may query a database; keep the event loop free (and a build on it
            # gives the thread its turn: see mcp_core._stretches).
            with waited_on():
                result = await anyio.to_thread.run_sync(
                    functools.partial(fn, *args, **kwargs), abandon_on_cancel=True
                )
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, str) or not isinstance(result, Iterable):
            raise TypeError(
                f"a completion provider returned {type(result).__name__}; return an iterable of strings"
            )
        return result

    return complete


def completion_result(values: Iterable[str]) -> dict[str, Any]:
    """The ``completion`` object: at most :data:`MAX_COMPLETIONS` values, ``total``, ``hasMore``.

    Raises:
        TypeError: a value is not a string.
    """
    if isinstance(values, list | tuple):
        total: int | None = len(values)
        head = list(values[:MAX_COMPLETIONS])
        more = len(values) > MAX_COMPLETIONS
    else:
        # A generator may be long or endless: read one past the cap to learn whether there is more.
        head = list(itertools.islice(values, MAX_COMPLETIONS + 1))
        more = len(head) > MAX_COMPLETIONS
        head = head[:MAX_COMPLETIONS]
        total = None if more else len(head)
    for item in head:
        if not isinstance(item, str):
            raise TypeError(
                f"completion values must be strings, got {type(item).__name__} {item!r}"
            )
    result: dict[str, Any] = {"values": head, "hasMore": more}
    if total is not None:
        result["total"] = total
    return result
