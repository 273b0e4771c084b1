"""Test doubles for handler code: a :class:`ClientGateway` that records and answers from a script.

Shipped as public API (like ``httpx.MockTransport``) so that applications test their handlers
through the real :class:`~mcp_core.handlers.Invoker` without a client::

    gateway = RecordingGateway(sample_result={"role": "assistant", ...})
    result = await Invoker().call_tool(element, {"x": 1}, gateway)
    assert gateway.logs == [LogCall("info", "started", None)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, final

from mcp_core.elements import Element
from mcp_core.handlers._current_element import serving_element
from mcp_core.handlers._protocols import LogLevel
from mcp_core.visibility import SessionInfo

__all__ = [
    "ElicitCall",
    "ElicitUrlCall",
    "GatewayCall",
    "ListRootsCall",
    "LogCall",
    "ProgressCall",
    "RecordingGateway",
    "SampleCall",
]

DEFAULT_SAMPLE_RESULT: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "role": "assistant",
        "content": {"type": "text", "text": ""},
        "model": "recording-gateway",
        "stopReason": "endTurn",
    }
)
DEFAULT_ELICIT_RESULT: Final[Mapping[str, Any]] = MappingProxyType({"action": "decline"})


@final
@dataclass(frozen=True, slots=True)
class LogCall:
    """A ``log(level, data, logger=...)`` call."""

    level: LogLevel
    data: Any
    logger: str | None


@final
@dataclass(frozen=True, slots=True)
class ProgressCall:
    """A ``progress(progress, total, message)`` call."""

    progress: float
    total: float | None
    message: str | None


@final
@dataclass(frozen=True, slots=True)
class SampleCall:
    """A ``sample(messages, max_tokens=..., ...)`` call; ``options`` holds the optional keywords given."""

    messages: tuple[Mapping[str, Any], ...]
    max_tokens: int
    options: Mapping[str, Any]


@final
@dataclass(frozen=True, slots=True)
class ElicitCall:
    """An ``elicit(message, requested_schema)`` call."""

    message: str
    requested_schema: Mapping[str, Any]


@final
@dataclass(frozen=True, slots=True)
class ElicitUrlCall:
    """An ``elicit_url(message, url, elicitation_id=...)`` call."""

    message: str
    url: str
    elicitation_id: str | None


@final
@dataclass(frozen=True, slots=True)
class ListRootsCall:
    """A ``list_roots()`` call."""


GatewayCall: TypeAlias = (
    LogCall | ProgressCall | SampleCall | ElicitCall | ElicitUrlCall | ListRootsCall
)

SampleAnswer: TypeAlias = Mapping[str, Any] | Callable[[SampleCall], Mapping[str, Any]]
ElicitAnswer: TypeAlias = (
    Mapping[str, Any] | Callable[[ElicitCall | ElicitUrlCall], Mapping[str, Any]]
)


@final
class RecordingGateway:
    """A :class:`~mcp_core.handlers.ClientGateway` that records every call, in order.

    ``sample_result`` and ``elicit_result`` are the canned answers: a wire-shaped mapping, or a
    function of the recorded call (to answer by content; ``elicit_result`` answers form and URL
    elicitations alike). ``roots`` is what ``list_roots`` returns. Defaults: an empty assistant
    text for sampling, ``{"action": "decline"}`` for elicitation, no roots.

    ``element`` is what ``gateway.element`` answers when a test calls a handler directly; through
    the Invoker it is the element being served, as in a server.
    """

    __slots__ = (
        "_element",
        "_elicit_result",
        "_request_id",
        "_roots",
        "_sample_result",
        "_session",
        "calls",
    )

    def __init__(
        self,
        *,
        session: SessionInfo | None = None,
        request_id: str | int | None = 1,
        sample_result: SampleAnswer = DEFAULT_SAMPLE_RESULT,
        elicit_result: ElicitAnswer = DEFAULT_ELICIT_RESULT,
        roots: Sequence[Mapping[str, Any]] = (),
        element: Element | None = None,
    ) -> None:
        self._session = session if session is not None else SessionInfo(session_id="recording")
        self._element = element
        self._request_id = request_id
        self._sample_result = sample_result
        self._elicit_result = elicit_result
        self._roots = tuple(roots)
        self.calls: list[GatewayCall] = []
        """Every call, in the order handlers made them."""

    @property
    def session(self) -> SessionInfo:
        """The session handlers see."""
        return self._session

    @property
    def request_id(self) -> str | int | None:
        """The request id handlers see."""
        return self._request_id

    @property
    def element(self) -> Element:
        """The element being served (through the Invoker), else the one given to the constructor."""
        try:
            return serving_element()
        except LookupError:
            if self._element is None:
                raise
            return self._element

    @property
    def logs(self) -> list[LogCall]:
        """The ``log`` calls, in order."""
        return [c for c in self.calls if isinstance(c, LogCall)]

    @property
    def progress_updates(self) -> list[ProgressCall]:
        """The ``progress`` calls, in order."""
        return [c for c in self.calls if isinstance(c, ProgressCall)]

    @property
    def samples(self) -> list[SampleCall]:
        """The ``sample`` calls, in order."""
        return [c for c in self.calls if isinstance(c, SampleCall)]

    @property
    def elicitations(self) -> list[ElicitCall | ElicitUrlCall]:
        """The ``elicit`` and ``elicit_url`` calls, in order."""
        return [c for c in self.calls if isinstance(c, ElicitCall | ElicitUrlCall)]

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        """Record a log notification."""
        self.calls.append(LogCall(level, data, logger))

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Record a progress notification."""
        self.calls.append(ProgressCall(progress, total, message))

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: Literal["none", "thisServer", "allServers"] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Mapping[str, Any]:
        """Record a sampling request and answer with the canned result."""
        given = {
            "system_prompt": system_prompt,
            "temperature": temperature,
            "stop_sequences": tuple(stop_sequences) if stop_sequences is not None else None,
            "model_preferences": model_preferences,
            "include_context": include_context,
            "metadata": metadata,
        }
        call = SampleCall(
            tuple(messages),
            max_tokens,
            MappingProxyType({k: v for k, v in given.items() if v is not None}),
        )
        self.calls.append(call)
        answer = self._sample_result
        return answer(call) if callable(answer) else answer

    async def elicit(self, message: str, requested_schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Record an elicitation request and answer with the canned result."""
        call = ElicitCall(message, requested_schema)
        self.calls.append(call)
        answer = self._elicit_result
        return answer(call) if callable(answer) else answer

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> Mapping[str, Any]:
        """Record a URL elicitation request and answer with the canned result."""
        call = ElicitUrlCall(message, url, elicitation_id)
        self.calls.append(call)
        answer = self._elicit_result
        return answer(call) if callable(answer) else answer

    async def list_roots(self) -> Sequence[Mapping[str, Any]]:
        """Record the request and return the configured roots."""
        self.calls.append(ListRootsCall())
        return self._roots
