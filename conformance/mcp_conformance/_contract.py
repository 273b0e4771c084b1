"""How the kit talks to a target: type-checked calls, role probing, and watching for provide().

Everything a target returns goes through :func:`checked` (beartype, every item of a sequence,
not a sample), so a wrong type is reported at the call that produced it, naming the method,
instead of surfacing later as an unrelated-looking failure in the kit.
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Final, Literal, TypeAlias, final

from beartype.door import die_if_unbearable
from beartype.roar import BeartypeDoorHintViolation

from mcp_conformance._capabilities import Capabilities
from mcp_core.elements import (
    SINGLE_KINDS,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcp_core.registry import ResolvedResource

__all__ = [
    "ROLE_NAMES",
    "LawViolation",
    "Listing",
    "RegistryUnderTest",
    "Role",
    "RoleStatus",
    "check_collection",
    "checked",
    "probe_roles",
    "provide_calls",
]


class LawViolation(AssertionError):  # noqa: N818 -- the report's verdict reads "LawViolation: ..."
    """A target broke the law under test; the message says what was expected and what happened."""


class KitBaseException(BaseException):
    """A ``BaseException`` subclass no library defines: what a user's bug may raise too.

    The kit's failing sources and listeners raise it (and ``SystemExit``) besides ordinary
    exceptions: a contract boundary contains every exception but cancellation,
    ``KeyboardInterrupt`` and ``GeneratorExit``.
    """


_PROPAGATING: Final = KeyboardInterrupt | GeneratorExit


def uncontained(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``BaseException`` (no ``Exception``) a target must not let through.

    Cancellation, ``KeyboardInterrupt`` and ``GeneratorExit`` propagate by design, and hypothesis
    steers its own runs with ``BaseException`` subclasses of its own: none of those counts.
    """
    if isinstance(exc, Exception | _PROPAGATING):
        return False
    module = type(exc).__module__
    if module.startswith(("hypothesis", "_pytest", "pytest", "anyio", "asyncio", "trio")):
        return False
    return type(exc).__name__ != "CancelledError"


def escaped(exc: BaseException) -> LawViolation:
    """The violation of a ``BaseException`` that went through the target to the kit."""
    return LawViolation(
        f"{type(exc).__name__}: {exc!s} went through the target to the kit: a boundary between "
        "the target and code it calls (a source, a listener, a rule) contains every exception "
        "but cancellation, KeyboardInterrupt and GeneratorExit, SystemExit and other "
        "BaseException subclasses included"
    )


def checked(value: object, hint: Any, *, what: str) -> Any:
    """``value`` if it satisfies ``hint`` (every item of a ``Sequence[X]``), else LawViolation."""
    item_hint = _sequence_item(hint)
    try:
        if item_hint is None:
            die_if_unbearable(value, hint)
        else:
            die_if_unbearable(value, Sequence[object])
            for item in value:  # type: ignore[attr-defined]  # checked to be a Sequence just above
                die_if_unbearable(item, item_hint)
    except BeartypeDoorHintViolation as exc:
        # beartype's message quotes the whole value; the reason after ", as " is what helps.
        reason = str(exc).rpartition(", as ")[2].rstrip(".")
        shown = getattr(hint, "__name__", None) or str(hint).replace("collections.abc.", "")
        raise LawViolation(
            f"{what} returned {type(value).__qualname__}, which is not {shown}: {reason}"
        ) from None
    return value


async def awaited(answer: object, hint: Any, *, what: str) -> Any:
    """What a target's async method returned (``answer``, its awaitable), awaited and ``checked``.

    A method that is not async is a LawViolation naming ``what``; one that raises raises its own
    exception (the report shows the target's frames).
    """
    if not inspect.isawaitable(answer):
        raise LawViolation(
            f"{what} returned {type(answer).__name__}, not an awaitable: it is async"
        )
    return checked(await answer, hint, what=what)


def _sequence_item(hint: Any) -> Any:
    if getattr(hint, "__origin__", None) is Sequence:
        return hint.__args__[0]
    return None


def check_collection(value: object, *, what: str) -> ElementCollection:
    """``value`` if it is an ElementCollection of Elements with definitions, else LawViolation."""
    collection: ElementCollection = checked(value, ElementCollection, what=what)
    for element in collection:
        checked(element, Element, what=f"{what}: an item")
        checked(element.definition, Definition, what=f"{what}: a definition")
    return collection


# -- roles ------------------------------------------------------------------------------------

Role: TypeAlias = Literal["catalog", "resolver", "writer", "deferred", "change_events"]
"""One per protocol of :mod:`mcp_core.registry`."""

ROLE_NAMES: Final[dict[Role, str]] = {
    "catalog": "ElementCatalog (tools/resources/resource_templates/prompts)",
    "resolver": "ElementResolver (get_tool/get_prompt/get_resource)",
    "writer": "ElementWriter (register/unregister)",
    "deferred": "DeferredRegistry (load/reload/loaded/kinds)",
    "change_events": "ChangeNotifier (subscribe(listener) -> unsubscribe)",
}

# Each role's methods and how many positional arguments the kit calls them with.
_ROLE_METHODS: Final[dict[Role, tuple[tuple[str, int], ...]]] = {
    "catalog": (("tools", 0), ("resources", 0), ("resource_templates", 0), ("prompts", 0)),
    "resolver": (("get_tool", 1), ("get_prompt", 1), ("get_resource", 1)),
    "writer": (("register", 1), ("unregister", 1)),
    "deferred": (("load", 0), ("reload", 0), ("kinds", 0)),
    "change_events": (("subscribe", 1),),
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RoleStatus:
    """Whether a registry plays a role, and if not, why (``declared``: its Capabilities say so)."""

    present: bool
    reason: str = ""
    declared: bool = False
    # A role the target claims (Capabilities(role=True)) but whose methods are missing: its laws
    # FAIL instead of going N/A, so a misspelt method name cannot pass.
    claimed_but_missing: bool = False


def probe_roles(obj: object, capabilities: Capabilities) -> dict[Role, RoleStatus]:
    """Which of the roles ``obj`` plays, by method names and call signatures."""
    found: dict[Role, RoleStatus] = {}
    for role, methods in _ROLE_METHODS.items():
        claim: bool | None = getattr(capabilities, role)
        missing = [name for name, arity in methods if not _has_method(obj, name, arity)]
        if role == "deferred" and not hasattr(obj, "loaded"):
            missing.append("loaded")
        if claim is False:
            found[role] = RoleStatus(
                present=False,
                declared=True,
                reason=f"not claimed (Capabilities({role}=False)): {capabilities.reason}",
            )
        elif missing:
            what = ", ".join(f"{name}()" if name != "loaded" else name for name in missing)
            found[role] = RoleStatus(
                present=False,
                claimed_but_missing=claim is True,
                reason=f"{type(obj).__qualname__} has no {ROLE_NAMES[role]}: missing {what}",
            )
        else:
            found[role] = RoleStatus(present=True)
    return found


def _has_method(obj: object, name: str, arity: int) -> bool:
    method = getattr(obj, name, None)
    if not callable(method):
        return False
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return True  # not introspectable: trust the name, the call will tell
    try:
        signature.bind(*([None] * arity))
    except TypeError:
        return False
    return True


# -- the registry under test ------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class Listing:
    """One observation of a catalogue: the four lists, in the order the registry gave them."""

    tools: tuple[Tool, ...]
    resources: tuple[Resource, ...]
    resource_templates: tuple[ResourceTemplate, ...]
    prompts: tuple[Prompt, ...]

    def of(self, kind: ElementKind) -> tuple[Definition, ...]:
        """The definitions of one kind."""
        if kind is ElementKind.TOOL:
            return self.tools
        if kind is ElementKind.RESOURCE:
            return self.resources
        if kind is ElementKind.RESOURCE_TEMPLATE:
            return self.resource_templates
        return self.prompts

    @property
    def definitions(self) -> tuple[Definition, ...]:
        """Every listed definition, kind by kind."""
        return (*self.tools, *self.resources, *self.resource_templates, *self.prompts)

    def refs(self) -> Counter[ElementRef]:
        """How often each ref is listed (a registry must list each at most once)."""
        return Counter(definition.ref for definition in self.definitions)

    def changed_kinds(self, other: Listing) -> ElementKind:
        """The kinds whose definitions differ between the two listings (order aside)."""
        changed = ElementKind.NONE
        for kind in SINGLE_KINDS:
            if Counter(self.of(kind)) != Counter(other.of(kind)):
                changed |= kind
        return changed


@final
class RegistryUnderTest:
    """A target registry seen through its roles, every call awaited and type-checked."""

    __slots__ = ("obj", "roles")

    def __init__(self, obj: object, roles: dict[Role, RoleStatus]) -> None:
        self.obj = obj
        self.roles = roles

    def plays(self, role: Role) -> bool:
        """Whether the registry plays ``role``."""
        return self.roles[role].present

    async def _call(self, name: str, *args: object) -> object:
        result = getattr(self.obj, name)(*args)
        if not inspect.isawaitable(result):
            raise LawViolation(
                f"{name}() returned {type(result).__name__}, not an awaitable: the registry "
                "roles' request-path methods are async"
            )
        return await result

    async def tools(self) -> Sequence[Tool]:
        """``tools()``, checked to be a Sequence[Tool]."""
        return checked(await self._call("tools"), Sequence[Tool], what="tools()")  # type: ignore[no-any-return]  # checked

    async def resources(self) -> Sequence[Resource]:
        """``resources()``, checked."""
        return checked(await self._call("resources"), Sequence[Resource], what="resources()")  # type: ignore[no-any-return]  # checked

    async def resource_templates(self) -> Sequence[ResourceTemplate]:
        """``resource_templates()``, checked."""
        value = await self._call("resource_templates")
        return checked(value, Sequence[ResourceTemplate], what="resource_templates()")  # type: ignore[no-any-return]  # checked

    async def prompts(self) -> Sequence[Prompt]:
        """``prompts()``, checked."""
        return checked(await self._call("prompts"), Sequence[Prompt], what="prompts()")  # type: ignore[no-any-return]  # checked

    async def listing(self) -> Listing:
        """All four lists, read one after the other."""
        return Listing(
            tuple(await self.tools()),
            tuple(await self.resources()),
            tuple(await self.resource_templates()),
            tuple(await self.prompts()),
        )

    async def get_tool(self, name: str) -> Element | None:
        """``get_tool(name)``, checked."""
        value = await self._call("get_tool", name)
        return checked(value, Element | None, what=f"get_tool({name!r})")  # type: ignore[no-any-return]  # checked

    async def get_prompt(self, name: str) -> Element | None:
        """``get_prompt(name)``, checked."""
        value = await self._call("get_prompt", name)
        return checked(value, Element | None, what=f"get_prompt({name!r})")  # type: ignore[no-any-return]  # checked

    async def get_resource(self, uri: str) -> ResolvedResource | None:
        """``get_resource(uri)``, checked."""
        value = await self._call("get_resource", uri)
        return checked(value, ResolvedResource | None, what=f"get_resource({uri!r})")  # type: ignore[no-any-return]  # checked

    async def register(self, element: Element) -> None:
        """``register(element)``."""
        await self._call("register", element)

    async def unregister(self, ref: ElementRef) -> bool:
        """``unregister(ref)``, checked to return a bool."""
        return checked(await self._call("unregister", ref), bool, what=f"unregister({ref})")  # type: ignore[no-any-return]  # checked

    async def load(self) -> None:
        """``load()``."""
        await self._call("load")

    async def reload(self) -> None:
        """``reload()``."""
        await self._call("reload")

    @property
    def loaded(self) -> bool:
        """The ``loaded`` property, checked to be a bool."""
        return checked(self.obj.loaded, bool, what="loaded")  # type: ignore[attr-defined,no-any-return]  # probed

    def kinds(self) -> ElementKind:
        """``kinds()``, checked to be an ElementKind."""
        return checked(self.obj.kinds(), ElementKind, what="kinds()")  # type: ignore[attr-defined,no-any-return]  # probed

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], object]:
        """``subscribe(listener)``, checked to return an unsubscribe callable."""
        unsubscribe = self.obj.subscribe(listener)  # type: ignore[attr-defined]  # probed
        if not callable(unsubscribe):
            raise LawViolation(
                f"subscribe(listener) returned {type(unsubscribe).__name__}, not a callable "
                "that unsubscribes"
            )
        return unsubscribe  # type: ignore[no-any-return]  # checked to be callable


# -- watching for provide() -------------------------------------------------------------------


@contextmanager
def provide_calls(source: object) -> Iterator[list[str]]:
    """Record every run of ``source``'s ``provide`` method while the block runs.

    A profile function sees each frame that starts, so a ``kinds()`` that provides is caught
    however it does so (awaiting it on a fresh loop, stepping the coroutine by hand): the frame is
    either the code of ``type(source).provide`` or a method named ``provide`` whose ``self`` is
    the source. Only the current thread is watched. When a profiler is already installed (the kit
    run under cProfile, say), it is left alone and the source's class is patched instead, which
    sees ``provide`` looked up through the class.
    """
    if sys.getprofile() is not None:
        with _patched_provide(source) as calls:
            yield calls
        return
    codes = _provide_codes(source)
    calls = []

    def profiler(frame: FrameType, event: str, _: object) -> None:
        if event == "call" and (
            frame.f_code in codes
            or (frame.f_code.co_name == "provide" and frame.f_locals.get("self") is source)
        ):
            calls.append(
                f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})"
            )

    sys.setprofile(profiler)
    try:
        yield calls
    finally:
        sys.setprofile(None)


@contextmanager
def _patched_provide(source: object) -> Iterator[list[str]]:
    cls = type(source)
    original = cls.__dict__.get("provide")
    inherited = getattr(cls, "provide", None)
    calls: list[str] = []

    def provide(self: object, *args: object, **kwargs: object) -> object:
        if self is source:
            calls.append(f"{cls.__qualname__}.provide")
        return inherited(self, *args, **kwargs)  # type: ignore[misc]  # the class's own provide

    try:
        cls.provide = provide  # type: ignore[attr-defined]  # patched for the block only
    except (AttributeError, TypeError):
        yield calls  # an immutable (builtin) type: nothing to watch with
        return
    try:
        yield calls
    finally:
        if original is None:
            del cls.provide  # type: ignore[attr-defined]  # restore the inherited one
        else:
            cls.provide = original  # type: ignore[attr-defined]  # restore


def _provide_codes(source: object) -> frozenset[CodeType]:
    method = getattr(type(source), "provide", None)
    if method is None:
        return frozenset()
    function = inspect.unwrap(getattr(method, "__func__", method))
    code = getattr(function, "__code__", None)
    return frozenset({code}) if isinstance(code, CodeType) else frozenset()
