"""Visibility rules and the combinators that compose them.

A rule is anything with ``async is_visible(ref, session) -> bool``; a rule that also decides on
the concrete URI a template is read at adds ``is_uri_visible`` (:class:`UriVisibility`, e.g.
:func:`per_uri`). Combinators short-circuit in order, so put cheap rules first, and combine both
decisions: a URI is visible through ``all_of(a, b)`` when it is through ``a`` and through ``b``.
Tag and scope rules look tags up through a :class:`TagLookup` (the reference Registry is one:
``registry.get(ref)`` gives the element and its tags).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, final

from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.visibility._protocol import ALWAYS, NEVER, ElementVisibility, SessionInfo, visible_at

__all__ = [
    "ALWAYS",
    "NEVER",
    "TagLookup",
    "all_of",
    "any_of",
    "by_tag",
    "handler_access",
    "not_",
    "per_uri",
    "predicate",
    "requires_scopes",
    "scoped_by_tag",
]


class TagLookup(Protocol):
    """Finds the effective element at a ref, for its tags (``Registry.get`` satisfies it).

    What tag and scope rules ask; a registry offers it as
    :class:`~mcp_core.registry.ElementAtRef`.
    """

    async def get(self, ref: ElementRef) -> Element | None:
        """The element at ``ref``, or None."""
        ...


@final
@dataclass(frozen=True, slots=True)
class _AllOf:
    rules: tuple[ElementVisibility, ...]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        for rule in self.rules:
            if not await rule.is_visible(ref, session):
                return False
        return True

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        for rule in self.rules:
            if not await visible_at(rule, ref, session, uri=uri, variables=variables):
                return False
        return True


@final
@dataclass(frozen=True, slots=True)
class _AnyOf:
    rules: tuple[ElementVisibility, ...]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        for rule in self.rules:
            if await rule.is_visible(ref, session):
                return True
        return False

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        for rule in self.rules:
            if await visible_at(rule, ref, session, uri=uri, variables=variables):
                return True
        return False


@final
@dataclass(frozen=True, slots=True)
class _Not:
    rule: ElementVisibility

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        return not await self.rule.is_visible(ref, session)

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        return not await visible_at(self.rule, ref, session, uri=uri, variables=variables)


def all_of(*rules: ElementVisibility) -> ElementVisibility:
    """Visible when every rule says so (visible when there are none)."""
    return _AllOf(tuple(rules))


def any_of(*rules: ElementVisibility) -> ElementVisibility:
    """Visible when at least one rule says so (hidden when there are none)."""
    return _AnyOf(tuple(rules))


def not_(rule: ElementVisibility) -> ElementVisibility:
    """Visible exactly when ``rule`` hides.

    It negates what lists show; a URI decision can only narrow that (``visibility.uri-narrows``),
    so ``not_`` of a :func:`per_uri` rule hides the element at every URI. To hide some URIs, write
    the per-URI function that admits the others.
    """
    return _Not(rule)


@final
@dataclass(frozen=True, slots=True)
class _Predicate:
    function: Callable[[ElementRef, SessionInfo], bool | Awaitable[bool]]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        verdict = self.function(ref, session)
        if isinstance(verdict, Awaitable):
            verdict = await verdict
        return bool(verdict)


def predicate(
    function: Callable[[ElementRef, SessionInfo], bool | Awaitable[bool]],
) -> ElementVisibility:
    """A rule from a plain (sync or async) function of ``(ref, session)``."""
    return _Predicate(function)


UriPredicate = Callable[[ElementRef, str, Mapping[str, str], SessionInfo], bool | Awaitable[bool]]
"""A sync or async function of ``(template ref, uri, variables, session)``."""


@final
@dataclass(frozen=True, slots=True)
class _PerUri:
    function: UriPredicate

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:  # noqa: ARG002 -- the protocol's signature
        return True

    async def is_uri_visible(
        self, ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo
    ) -> bool:
        verdict = self.function(ref, uri, variables, session)
        if isinstance(verdict, Awaitable):
            verdict = await verdict
        return bool(verdict)


def per_uri(function: UriPredicate) -> ElementVisibility:
    """A rule deciding on each concrete URI read through a template; lists are left as they are.

    ``function(ref, uri, variables, session)`` is asked when ``session`` reads, subscribes to or
    completes ``uri`` through the template at ``ref`` (``variables`` as the template extracted
    them, percent-decoded). Combine it with list-time rules: ``all_of(scoped_by_tag(r), per_uri(f))``::

        def own_nodes(ref, uri, variables, session):
            return ref.key != "node://{id}" or variables["id"] == session.principal

        server = McpServer(registry, visibility=per_uri(own_nodes))
    """
    return _PerUri(function)


@final
@dataclass(frozen=True, slots=True)
class _ByTag:
    lookup: TagLookup
    rule: Callable[[frozenset[str], SessionInfo], bool]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        element = await self.lookup.get(ref)
        # An element the lookup does not know is not this rule's to hide; resolution answers it.
        return True if element is None else self.rule(element.tags, session)


def by_tag(
    lookup: TagLookup,
    *,
    hide: Iterable[str] = (),
    show_only: Iterable[str] | None = None,
) -> ElementVisibility:
    """Hide elements carrying any tag in ``hide``; with ``show_only``, also hide those carrying none of them."""
    hidden = frozenset(hide)
    only = frozenset(show_only) if show_only is not None else None

    def rule(tags: frozenset[str], _session: SessionInfo) -> bool:
        if tags & hidden:
            return False
        return only is None or bool(tags & only)

    return _ByTag(lookup, rule)


def scoped_by_tag(lookup: TagLookup, *, prefix: str = "scope:") -> ElementVisibility:
    """An element tagged ``scope:X`` is visible only to sessions holding scope ``X`` (all such tags).

    Elements without scope tags are visible to everyone.
    """

    def rule(tags: frozenset[str], session: SessionInfo) -> bool:
        needed = {tag[len(prefix) :] for tag in tags if tag.startswith(prefix)}
        return needed <= session.scopes

    return _ByTag(lookup, rule)


@final
@dataclass(frozen=True, slots=True)
class _RequiresScopes:
    required: Mapping[ElementRef, frozenset[str]]

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        return self.required.get(ref, frozenset()) <= session.scopes


def requires_scopes(required: Mapping[ElementRef, Iterable[str]]) -> ElementVisibility:
    """Each listed ref is visible only to sessions holding all of its scopes; others to everyone."""
    return _RequiresScopes({ref: frozenset(scopes) for ref, scopes in required.items()})


async def _verdict(value: bool | Awaitable[bool]) -> bool:
    if isinstance(value, Awaitable):
        value = await value
    return bool(value)


@final
@dataclass(frozen=True, slots=True)
class _HandlerAccess:
    lookup: TagLookup
    method: str

    async def _check(self, ref: ElementRef) -> Callable[..., bool | Awaitable[bool]] | None:
        element = await self.lookup.get(ref)
        check = getattr(element.handler, self.method, None) if element is not None else None
        return check if callable(check) else None

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        if ref.kind is ElementKind.RESOURCE_TEMPLATE:
            return True  # listed; each concrete URI is decided by is_uri_visible
        check = await self._check(ref)
        return True if check is None else await _verdict(check(ref.key, session))

    async def is_uri_visible(
        self,
        ref: ElementRef,
        uri: str,
        variables: Mapping[str, str],  # noqa: ARG002 -- the protocol's signature
        session: SessionInfo,
    ) -> bool:
        check = await self._check(ref)
        return True if check is None else await _verdict(check(uri, session))


def handler_access(lookup: TagLookup, *, method: str = "check_access") -> ElementVisibility:
    """Each element's handler decides who may use it: ``handler.check_access(target, session)``.

    The plugin pattern: a plugin object is its element's handler and carries its own access
    check, sync or async, taking what it is asked about and who asks. ``target`` is always
    concrete:

    - a resource: its URI (lists, reads, subscriptions, completions);
    - a resource template: the concrete URI read, subscribed to or completed through it (lists
      show the template; a URI it may not answer is, for that session, missing, and the next
      template answers it);
    - a tool or prompt: its name (lists, calls, gets, completions).

    An element whose handler has no such method (a function, a reference not yet resolved) is
    not this rule's to hide. ``lookup`` finds the element (the reference Registry, ``app.registry``);
    ``method`` names the check::

        class NodeProvider:  # a resource template's handler
            async def read(self, uri, variables, gateway): ...
            def check_access(self, uri: str, session: SessionInfo) -> bool:
                return uri == f"node://{session.principal}"

        app.visibility = handler_access(app.registry)
    """
    if not isinstance(method, str) or not method.isidentifier():
        raise ValueError(f"handler_access method must name a method, got {method!r}")
    return _HandlerAccess(lookup, method)
