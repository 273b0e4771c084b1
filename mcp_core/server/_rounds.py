"""Asking the client on 2026-07-28: multi-round-trip requests (``InputRequiredResult``).

From 2026-07-28 a server may not send requests to the client; a ``tools/call``, ``prompts/get``
or ``resources/read`` that needs the client's model, user or roots answers with an
``InputRequiredResult`` instead: the questions (``inputRequests``) and an opaque
``requestState``. The client answers them and sends the original request again with
``inputResponses`` and the state. :class:`InputRounds` gives handlers one code path for this:
``await gateway.sample(...)`` either returns an answer or stops the handler there.

One round, for one request:

1. :meth:`InputRounds.resume` reads the state the client echoed (sealed by the SDK's
   ``RequestStateBoundary``, verified before this runs) and the client's new answers. An answer
   counts only for a question asked in the previous round (a client cannot answer ahead and skip
   a question) and only if it has the shape that question's result must have.
2. :meth:`InputRounds.run` runs the request (lookup, visibility, validation, the handler) from
   the start. Each question the handler asks is keyed by a digest of its exact wire form and how
   many times the same question was asked before in this run; a question answered in an earlier
   round (or by this round's responses) returns that answer at once.
3. The first question without an answer is recorded (others asked concurrently in the same
   moment join it), the run is cancelled there, and the request answers with an
   ``InputRequiredResult`` carrying the new questions and a state holding every answer the run
   used, who asked, which questions are now open, and which notifications it sent.
4. Notifications (log messages, progress) are keyed the same way, by a digest of what they say
   and how many times the same was said before in the run: one an earlier round of the request
   already sent is not sent again (:meth:`InputRounds.replayed`), so the client hears each once
   however many times the handler re-runs. Up to :data:`MAX_REMEMBERED_NOTIFICATIONS` distinct
   ones are remembered; beyond, they are sent again.

The state is plaintext here; the SDK's boundary seals it (AES-GCM) bound to the method, the
element, the arguments, the audience and the authenticated principal, with an expiry. Inside it,
``owner`` binds it also to the caller as the server's session hook sees them (principal, client
id and session), so state minted for one caller is refused for another.

Each state is good for one retry (ADR 0073): it carries a random id that a :class:`RoundLedger`
records as issued, and the retry that presents it consumes it, so a replayed round (the final
one included: a paid action repeated from one consent) is refused. It also counts its rounds:
a request that would ask the client a round more than ``max_rounds`` ends with an error
instead, whatever the client sends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

import anyio
import anyio.lowlevel
import mcp_types as types
from pydantic import BaseModel, ValidationError

from mcp_core.errors import CacheStoreError
from mcp_core.server._errors import InvalidRequestStateError
from mcp_core.visibility import SessionInfo

if TYPE_CHECKING:
    from mcp_core.stores import CacheStore

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "MAX_REMEMBERED_NOTIFICATIONS",
    "RESULT_TYPES",
    "InputRounds",
    "RoundLedger",
    "owner_of",
]

_log = logging.getLogger("mcp_core.server")

_STATE_VERSION: Final = 2

DEFAULT_MAX_INPUT_ROUNDS: Final = 16
"""Rounds of questions one request may ask the client before it ends with an error."""
DEFAULT_LEDGER_CAPACITY: Final = 100_000
"""Unused states a process-local ledger remembers; beyond, the oldest become unusable."""
_LEDGER_KEY: Final = "deployment:round:"

MAX_REMEMBERED_NOTIFICATIONS: Final = 512
"""How many distinct notifications a request's state remembers as sent (so as not to resend)."""

RESULT_TYPES: Final[Mapping[str, type[BaseModel]]] = {
    "sampling/createMessage": types.CreateMessageResult,
    "elicitation/create": types.ElicitResult,
    "roots/list": types.ListRootsResult,
}
"""The result model each kind of question must be answered with."""


def owner_of(session: SessionInfo) -> str:
    """Who a request state belongs to: a digest of the caller's identity as the server sees it."""
    identity = [session.principal, session.client_id, session.session_id]
    return _digest(json.dumps(identity, separators=(",", ":")).encode())


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()[:12]).decode().rstrip("=")


def _wire(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _answer_of(method: str, response: object, key: str) -> dict[str, Any]:
    """``response`` in wire shape, checked against what a ``method`` question must return."""
    wire = _wire(response) if isinstance(response, BaseModel) else response
    try:
        return _wire(RESULT_TYPES[method].model_validate(wire))
    except ValidationError as exc:
        raise InvalidRequestStateError(
            f"inputResponses[{key!r}] does not answer the {method} question it names "
            f"({exc.error_count()} problems); answer with a {RESULT_TYPES[method].__name__}"
        ) from None


@final
class RoundLedger:
    """Which request states were issued and not yet used: each is good for one retry.

    Without a ``store`` it lives in this process (one worker, or stdio), remembering at most
    ``capacity`` unused states: beyond, the oldest are forgotten and so refused (their clients
    start the request again), never accepted twice. With a ``store`` (the deployment's shared
    one) every worker sees the same ledger: issuing writes a key that expires with the state, and
    using it deletes that key, which only one retry can do. A store that cannot be reached
    fails closed: the round is refused, with an error saying to retry.
    """

    __slots__ = ("_capacity", "_issued", "_store", "_ttl")

    def __init__(
        self,
        store: CacheStore | None = None,
        *,
        ttl: float = 600.0,
        capacity: int = DEFAULT_LEDGER_CAPACITY,
    ) -> None:
        self._store = store
        self._ttl = ttl
        self._capacity = capacity
        self._issued: OrderedDict[str, float] = OrderedDict()

    async def issue(self, state_id: str) -> None:
        """Record ``state_id`` as issued (before the state leaves the server)."""
        if self._store is not None:
            await self._store.set(_LEDGER_KEY + state_id, b"1", ttl=self._ttl)
            return
        now = time.monotonic()
        self._issued[state_id] = now + self._ttl
        while len(self._issued) > self._capacity:
            self._issued.popitem(last=False)

    async def consume(self, state_id: str) -> bool:
        """Whether ``state_id`` was issued and unused until now; it is used from now on."""
        if self._store is not None:
            return await self._store.delete(_LEDGER_KEY + state_id)
        expires = self._issued.pop(state_id, None)
        return expires is not None and expires > time.monotonic()


@final
class InputRounds:
    """One 2026-07-28 request's questions to the client: replayed answers and new questions.

    ``owner`` is the caller's digest (:func:`owner_of`), or a function giving it: most requests
    neither present a state nor ask a question, so it is computed only when one is read or issued.
    """

    __slots__ = (
        "_answers",
        "_counts",
        "_max_rounds",
        "_notified",
        "_owner",
        "_pending",
        "_round",
        "_scope",
        "_sent",
        "_used",
    )

    def __init__(
        self,
        *,
        owner: str | Callable[[], str],
        answers: Mapping[str, dict[str, Any]] | None = None,
        sent: Mapping[str, int] | None = None,
        round_number: int = 0,
        max_rounds: int | None = DEFAULT_MAX_INPUT_ROUNDS,
    ) -> None:
        self._owner = owner
        self._sent = dict(sent or {})
        self._notified: dict[str, int] = {}
        self._round = round_number
        self._max_rounds = max_rounds
        self._answers = dict(answers or {})
        self._used: dict[str, dict[str, Any]] = {}
        self._pending: dict[str, dict[str, Any]] = {}
        self._counts: dict[str, int] = {}
        self._scope: anyio.CancelScope | None = None

    @classmethod
    async def resume(
        cls,
        *,
        owner: str | Callable[[], str],
        request_state: str | None,
        input_responses: Mapping[str, object] | None,
        ledger: RoundLedger,
        max_rounds: int | None = DEFAULT_MAX_INPUT_ROUNDS,
    ) -> InputRounds:
        """The rounds of a request, from the state and answers the client sent with it.

        The state is used up (``ledger``): presenting it again is refused.

        Raises:
            InvalidRequestStateError: the state belongs to another caller, was used already, or
                an answer does not have the shape its question's result must have.
        """
        asked: Mapping[str, str] = {}
        answers: dict[str, dict[str, Any]] = {}
        sent: Mapping[str, int] = {}
        round_number = 0
        if request_state is not None:
            state = _decode(request_state)
            if state is not None:
                owner = owner if isinstance(owner, str) else owner()
                if state["owner"] != owner:
                    raise InvalidRequestStateError(
                        "requestState was issued to another caller; send the request again "
                        "without requestState and inputResponses"
                    )
                await _consume(ledger, state["id"])
                asked, answers, sent = state["asked"], state["answers"], state["sent"]
                round_number = state["round"]
        for key, response in (input_responses or {}).items():
            method = asked.get(key)
            if method is None:
                # Only the questions of the last round may be answered: an answer sent ahead of
                # its question (or for one never asked) is not taken, so nothing can be skipped.
                _log.info("ignoring inputResponses[%r]: no such question was asked", key)
                continue
            answers[key] = _answer_of(method, response, key)
        return cls(
            owner=owner,
            answers=answers,
            sent=sent,
            round_number=round_number,
            max_rounds=max_rounds,
        )

    def replayed(self, notification: Mapping[str, Any]) -> bool:
        """Whether an earlier round of this request already sent ``notification`` (wire shape).

        Counted per run: the *k*-th identical notification of this run is a replay when earlier
        rounds sent it at least *k* times. A replay is not to be sent again.
        """
        text = json.dumps(notification, sort_keys=True, separators=(",", ":"), default=repr)
        digest = _digest(text.encode())
        occurrence = self._notified.get(digest, 0)
        if occurrence or len(self._notified) < MAX_REMEMBERED_NOTIFICATIONS:
            self._notified[digest] = occurrence + 1
        return occurrence < self._sent.get(digest, 0)

    async def ask(self, request: BaseModel) -> dict[str, Any]:
        """The client's answer to ``request`` (wire shape), or stop the run to ask for it."""
        wire = _wire(request)
        digest = _digest(json.dumps(wire, sort_keys=True, separators=(",", ":")).encode())
        occurrence = self._counts.get(digest, 0)
        self._counts[digest] = occurrence + 1
        key = f"{digest}.{occurrence}"
        answer = self._answers.get(key)
        if answer is not None:
            self._used[key] = answer
            return answer
        if self._scope is None:
            raise RuntimeError("InputRounds.ask() is only meaningful inside InputRounds.run()")
        self._pending[key] = wire
        if len(self._pending) == 1:
            # Let questions asked concurrently (in sibling tasks) join this round, then stop the
            # run: what follows the question needs its answer.
            await anyio.lowlevel.checkpoint()
            self._scope.cancel()
        await anyio.sleep_forever()
        raise AssertionError("unreachable: the run is cancelled at its first open question")

    async def run(
        self, work: Callable[[], Awaitable[dict[str, Any]]], ledger: RoundLedger
    ) -> dict[str, Any]:
        """``work()``'s result, or an ``InputRequiredResult`` if it asked an open question.

        The new state is issued in ``ledger``, so its retry can use it once.

        Raises:
            InvalidRequestStateError: the request would ask a round more than ``max_rounds``.
        """
        result: dict[str, Any] | None = None
        try:
            with anyio.CancelScope() as self._scope:
                result = await work()
        except Exception:
            if not self._pending:
                raise
            # The run was stopped at its question; a failure while it unwound is part of that.
            _log.debug("a handler stopped at a question raised while unwinding", exc_info=True)
        if self._pending:
            if self._max_rounds is not None and self._round >= self._max_rounds:
                raise InvalidRequestStateError(
                    f"this request asked the client {self._round} rounds of questions, the most "
                    f"this server allows, and would ask another; it ends here (send it again "
                    f"from the start, without requestState, to start over)"
                )
            state_id = secrets.token_urlsafe(16)
            try:
                await ledger.issue(state_id)
            except CacheStoreError as exc:
                raise InvalidRequestStateError(
                    "cannot record this request's state in the shared store now; send the "
                    "request again in a moment"
                ) from exc
            return self.input_required(state_id)
        if result is None:  # pragma: no cover -- only a question cancels the scope
            raise RuntimeError("the request was stopped without a question to ask")
        return result

    def _owner_text(self) -> str:
        if not isinstance(self._owner, str):
            self._owner = self._owner()
        return self._owner

    def input_required(self, state_id: str) -> dict[str, Any]:
        """The ``InputRequiredResult`` (wire shape) for the open questions."""
        state = {
            "v": _STATE_VERSION,
            "id": state_id,
            "round": self._round + 1,
            "owner": self._owner_text(),
            "asked": {key: request["method"] for key, request in self._pending.items()},
            "answers": self._used,
            "sent": self._notified,
        }
        return {
            "resultType": "input_required",
            "inputRequests": dict(self._pending),
            "requestState": json.dumps(state, separators=(",", ":")),
        }


async def _consume(ledger: RoundLedger, state_id: str) -> None:
    try:
        fresh = await ledger.consume(state_id)
    except CacheStoreError as exc:
        raise InvalidRequestStateError(
            "cannot check this requestState against the shared store now; send the request "
            "again in a moment"
        ) from exc
    if not fresh:
        raise InvalidRequestStateError(
            "requestState was used already (each one is good for one retry) or has been "
            "forgotten; send the request again without requestState and inputResponses"
        )


def _decode(request_state: str) -> dict[str, Any] | None:
    """The state a previous round minted; None for state of another format version.

    The SDK's boundary has verified that this server sealed the text, so anything malformed is
    version drift within one deployment (a rolling upgrade): treated as no progress yet.
    """
    try:
        state = json.loads(request_state)
    except ValueError:
        return None
    if (
        not isinstance(state, dict)
        or state.get("v") != _STATE_VERSION
        or not isinstance(state.get("owner"), str)
        or not isinstance(state.get("id"), str)
        or not isinstance(state.get("round"), int)
        or not isinstance(state.get("asked"), dict)
        or not isinstance(state.get("answers"), dict)
    ):
        return None
    sent = state.get("sent", {})
    state["sent"] = (
        {key: count for key, count in sent.items() if isinstance(count, int)}
        if isinstance(sent, dict)
        else {}
    )
    return state
