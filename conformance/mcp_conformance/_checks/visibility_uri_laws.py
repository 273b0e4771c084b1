"""``visibility.uri-narrows`` for a rule that composes others (a ``--mcp-visibility`` target).

The server asks a rule ``is_visible`` and, for one concrete URI of a template it admitted,
``is_uri_visible`` (``mcp_core.visibility.visible_at``, the rule's *whole* decision at that URI):
a URI decision can only narrow what the lists promise. A rule made of other rules must apply its
parts the same way, or a part that hides a template from lists answers its URIs, or a part's
per-URI narrowing is lost. Asked about one template at one URI for one session, the kit checks
four things of the rule's whole decision, each against the same rule built over parts that decide
a little differently:

1. a part that hides the template admits none of its URIs: whatever its ``is_uri_visible`` says
   makes no difference;
2. a URI decision only narrows: a part refusing the URI never makes the rule admit it (nor a part
   admitting it make the rule refuse it);
3. a part that narrows is heard: where a part's list "yes" is what lists the template (the rule
   would hide it if that part did), the rule admits the URI only if that part does;
4. where no part narrows at the URI, the rule decides the URI as it decides lists.

``all_of``, ``any_of`` and ``not_`` of mcp-core pass (``not_`` lists what its part hides, and
decides every URI of it as it decides lists: a part's URI refusal never turns into an admission).
The check needs no knowledge of the combinator: it learns how the rule composes from the rule
itself, only assuming its decisions come from its parts (and from the ref and session, if it
likes), asked about the same ref, session, URI and variables it was asked about.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar, final

from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation, awaited
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._rules import ListKey, Part, UriKey, UriPart
from mcp_conformance._universe import vocabularies
from mcp_core.elements import ElementKind, ElementRef, UriTemplate
from mcp_core.visibility import SessionInfo, visible_at

_SESSIONS: Final = ("s1", "s2")
T = TypeVar("T")


@final
@dataclass(frozen=True, slots=True)
class PartSpec:
    """One part: whether it decides URIs at all, and its two tables."""

    uri_aware: bool
    listed: frozenset[ListKey]
    admitted: frozenset[UriKey]

    def make(self, index: int) -> Part:
        """A fresh part from these tables."""
        if self.uri_aware:
            return UriPart(name=f"part {index}", listed=self.listed, admitted=self.admitted)
        return Part(name=f"part {index}", listed=self.listed)

    def lists(self, ref: ElementRef, sid: str) -> bool:
        """Its list decision."""
        return (ref, sid) in self.listed

    def whole(self, ref: ElementRef, sid: str, uri: str) -> bool:
        """Its whole decision at ``uri``: listed, and (where it decides URIs) admitted there."""
        return self.lists(ref, sid) and (not self.uri_aware or (ref, sid, uri) in self.admitted)


@final
@dataclass(frozen=True, slots=True)
class Composition:
    """The templates and URIs asked about, and the parts handed to the factory."""

    uris: tuple[tuple[ElementRef, str, tuple[tuple[str, str], ...]], ...]  # (template, uri, vars)
    parts: tuple[PartSpec, ...]

    def made(
        self,
        at: UriKey | None = None,
        *,
        lists: Mapping[int, bool] | None = None,
        uris: Mapping[int, bool] | None = None,
    ) -> list[Part]:
        """Fresh parts; at question ``at``, part ``i`` decides ``lists[i]`` / ``uris[i]`` instead."""
        made = [spec.make(index) for index, spec in enumerate(self.parts)]
        if at is None:
            return made
        ref, sid, _ = at
        for index, decision in (lists or {}).items():
            part = made[index]
            part.listed = _toggled(part.listed, (ref, sid), on=decision)
        for index, decision in (uris or {}).items():
            part = made[index]
            if isinstance(part, UriPart):
                part.admitted = _toggled(part.admitted, at, on=decision)
        return made


def _toggled(table: frozenset[T], key: T, *, on: bool) -> frozenset[T]:
    return table | {key} if on else table - {key}


def _expansions(template: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    parsed = UriTemplate.parse(template)
    found = []
    for value in ("v0", "w1"):
        uri = parsed.expand(dict.fromkeys(parsed.variables, value))
        variables = parsed.match(uri)
        found.append((uri, tuple(sorted((variables or {}).items()))))
    return found


@st.composite
def _compositions(draw: st.DrawFn) -> Composition:
    words = draw(vocabularies(overlapping=draw(st.booleans())))
    refs = [
        ElementRef(ElementKind.RESOURCE_TEMPLATE, text) for text in words.resource_templates[:2]
    ]
    uris = tuple((ref, uri, variables) for ref in refs for uri, variables in _expansions(ref.key))
    list_keys = [(ref, sid) for ref in refs for sid in _SESSIONS]
    uri_keys = sorted({(ref, sid, uri) for ref, uri, _ in uris for sid in _SESSIONS}, key=str)
    parts = tuple(
        PartSpec(
            uri_aware=draw(st.booleans()),
            listed=draw(st.frozensets(st.sampled_from(list_keys))),
            admitted=draw(st.frozensets(st.sampled_from(uri_keys))),
        )
        for _ in range(draw(st.integers(min_value=1, max_value=3)))
    )
    return Composition(uris, parts)


async def _answer(value: object, what: str) -> bool:
    return await awaited(value, bool, what=what)  # type: ignore[no-any-return]  # checked


@final
class _Question:
    """One template at one URI for one session, asked of rules built over varied parts."""

    def __init__(
        self, kit: Kit, case: Composition, ref: ElementRef, uri: str, variables: dict[str, str]
    ) -> None:
        self.kit, self.case = kit, case
        self.ref, self.uri, self.variables = ref, uri, variables

    async def decide(
        self,
        sid: str,
        *,
        lists: Mapping[int, bool] | None = None,
        uris: Mapping[int, bool] | None = None,
    ) -> tuple[bool, bool]:
        """The list and the whole decision of a fresh rule over (varied) parts."""
        parts = self.case.made((self.ref, sid, self.uri), lists=lists, uris=uris)
        rule: Any = self.kit.target.factory(parts)  # duck-typed: its answers are checked
        session = SessionInfo(session_id=sid)
        listed = await _answer(rule.is_visible(self.ref, session), "is_visible(ref, session)")
        decide = getattr(rule, "is_uri_visible", None)
        if listed and callable(decide):
            await _answer(
                decide(self.ref, self.uri, self.variables, session),
                "is_uri_visible(ref, uri, variables, session)",
            )
        whole = await visible_at(rule, self.ref, session, uri=self.uri, variables=self.variables)
        for part in parts:
            for asked in part.asked if isinstance(part, UriPart) else ():
                if (asked.ref, asked.uri, asked.variables, asked.session) != (
                    self.ref,
                    self.uri,
                    self.variables,
                    session,
                ):
                    raise LawViolation(
                        f"asked about {self.ref} at {self.uri!r} with {self.variables} for "
                        f"session {sid}, the rule asked {part.name} about {asked.ref} at "
                        f"{asked.uri!r} with {asked.variables} for session "
                        f"{asked.session.session_id}: a rule asks its parts what it is asked"
                    )
        return listed, whole


def _word(admits: bool) -> str:
    return "admits" if admits else "refuses"


@checks("visibility.uri-narrows")
def test_visibility_uri_narrows(kit: Kit) -> None:
    """A composed rule applies its parts' URI decisions as the server applies a rule's."""
    composing = 0

    async def body(case: Composition) -> None:
        nonlocal composing
        for ref, uri, pairs in case.uris:
            question = _Question(kit, case, ref, uri, dict(pairs))
            for sid in _SESSIONS:
                composing += await _judge(question, sid)

    kit.given(_compositions(), body, name="visibility_uri_narrows")
    if not composing:
        kit.not_applicable(
            "the rule's decisions never depended on its parts: the law is about rules composed "
            "of others (a rule deciding on its own is applied by the server, see "
            "server.visibility-agrees)"
        )


@final
@dataclass(frozen=True, slots=True)
class _Seen:
    """One part at one question: its decisions, and the rule's when the part decides otherwise."""

    name: str
    lists: bool
    whole: bool
    uri_aware: bool
    raw: bool  # what its is_uri_visible says (if it has one), whatever it lists
    listed_otherwise: bool  # the rule's list decision were this part to decide the other way
    whole_otherwise: bool  # the rule's whole decision were its is_uri_visible to say the other


async def _judge(question: _Question, sid: str) -> bool:
    """The four clauses of the law (see the module) at one question; whether the parts mattered."""
    listed, whole = await question.decide(sid)
    where = f"template {question.ref.key!r} at {question.uri!r} for session {sid}"
    seen = []
    for index, spec in enumerate(question.case.parts):
        lists = spec.lists(question.ref, sid)
        raw = (question.ref, sid, question.uri) in spec.admitted
        otherwise, _ = await question.decide(sid, lists={index: not lists})
        whole_otherwise = whole
        if spec.uri_aware:
            _, whole_otherwise = await question.decide(sid, uris={index: not raw})
        seen.append(
            _Seen(
                f"part {index}",
                lists,
                spec.whole(question.ref, sid, question.uri),
                spec.uri_aware,
                raw,
                otherwise,
                whole_otherwise,
            )
        )
    _hidden_parts_admit_nothing(where, seen, whole)
    _refusals_only_narrow(where, seen, whole)
    _narrowing_is_heard(where, seen, listed=listed, whole=whole)
    if all(part.lists == part.whole for part in seen) and whole != listed:
        raise LawViolation(
            f"{where}: no part narrows at this URI (each decides it as it decides lists), yet the "
            f"rule {'lists' if listed else 'hides'} the template and {_word(whole)} the URI: "
            "where its parts do not narrow, a rule decides a URI as it decides lists"
        )
    return any(part.listed_otherwise != listed for part in seen)


def _hidden_parts_admit_nothing(where: str, seen: list[_Seen], whole: bool) -> None:
    """Clause 1: what a part that hides the template says about the URI changes nothing."""
    for part in seen:
        if part.uri_aware and not part.lists and part.whole_otherwise != whole:
            raise LawViolation(
                f"{where}: {part.name} hides the template from lists, yet whether its "
                f"is_uri_visible admits the URI changes the rule's decision (the rule "
                f"{_word(whole)} the URI when the part's is_uri_visible says {_yes(part.raw)}, "
                f"{_word(part.whole_otherwise)} it otherwise): a part that hides a template "
                "admits none of its URIs"
            )


def _refusals_only_narrow(where: str, seen: list[_Seen], whole: bool) -> None:
    """Clause 2: a part refusing the URI never makes the rule admit it, nor admitting refuse it."""
    for part in seen:
        if part.uri_aware and part.lists and part.whole_otherwise != whole:
            lowered = part.whole_otherwise < whole if part.raw else whole < part.whole_otherwise
            if not lowered:
                raise LawViolation(
                    f"{where}: {part.name} lists the template and {_word(part.raw)} the URI, "
                    f"and the rule {_word(whole)} it; were {part.name} to "
                    f"{'refuse' if part.raw else 'admit'} it instead, the rule would "
                    f"{_word(part.whole_otherwise)[:-1]} it: a part's URI refusal only narrows, "
                    "it never makes the rule admit the URI"
                )


def _narrowing_is_heard(where: str, seen: list[_Seen], *, listed: bool, whole: bool) -> None:
    """Clause 3: a part whose list decision lists the template is heard on the URI."""
    for part in seen:
        if part.lists and not part.whole and listed and whole and not part.listed_otherwise:
            raise LawViolation(
                f"{where}: {part.name} lists the template and refuses the URI; its list decision "
                f"is what lists the template (were {part.name} to hide it, the rule would too), "
                f"yet the rule admits the URI: {part.name}'s per-URI decision is lost"
            )


def _yes(decision: bool) -> str:
    return "yes" if decision else "no"
