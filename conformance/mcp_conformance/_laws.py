"""The laws the kit certifies: one row per law, the same ids as the Protocol docstrings' ``Laws:``.

The table is data: the plugin builds its report from it, the checks name their law by id, and a
test compares the ids against the docstrings of :mod:`mcp_core` so the two halves of the
specification cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

__all__ = ["LAWS", "Law", "LawTarget", "TargetKind", "law", "laws_for"]

TargetKind: TypeAlias = Literal[
    "registry",
    "source",
    "wrapper",
    "server",
    "visibility",
    "event-store",
    "cache-store",
    "change-bus",
]
"""What a run certifies: the object a ``--mcp-registry``, ``--mcp-source``, ``--mcp-wrapper``,
``--mcp-server``, ``--mcp-visibility``, ``--mcp-event-store``, ``--mcp-cache-store`` or
``--mcp-change-bus`` factory makes."""

LawTarget: TypeAlias = Literal[
    "source", "wrapper", "registry", "server", "visibility", "events", "store", "bus"
]
"""What a law is about."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Law:
    """One law: its stable ``id``, what it is about, and what it says."""

    id: str
    about: LawTarget
    statement: str


LAWS: Final[tuple[Law, ...]] = (
    Law(
        id="source.returns-collection",
        about="source",
        statement="provide() returns an ElementCollection (checked deeply), kinds() an ElementKind",
    ),
    Law(
        id="source.idempotent",
        about="source",
        statement="repeated provide() calls with no outside change agree (many calls, interleaved "
        "with other sources' calls); none raises",
    ),
    Law(
        id="source.kinds-cover",
        about="source",
        statement="every provided element's kind is in kinds()",
    ),
    Law(
        id="source.kinds-without-provide",
        about="source",
        statement="kinds() answers without calling provide()",
    ),
    Law(
        id="source.json-roundtrip",
        about="source",
        statement="where the collection is serializable, from_json(to_json(c)) == c",
    ),
    Law(
        id="source.lookup-agrees",
        about="source",
        statement="where the source has lookup(ref), it answers exactly provide().get(ref)",
    ),
    Law(
        id="source.handler-targets",
        about="source",
        statement="where handler_targets() says which handlers the source can produce, every "
        "HandlerRef provide() returns is among them",
    ),
    Law(
        id="wrapper.transparent",
        about="wrapper",
        statement="over a healthy source s, wrap(s) provides what s provides (or the declared relation)",
    ),
    Law(
        id="wrapper.kinds",
        about="wrapper",
        statement="wrap(s).kinds() advertises nothing s cannot provide (it is within s.kinds())",
    ),
    Law(
        id="wrapper.isolates",
        about="wrapper",
        statement="where claimed (isolates=True): while s raises any Exception, wrap(s) provides "
        "and looks up from its last good collection (empty before one), reports one diagnostic "
        "(unavailable or failed, naming the exception) and logs it (a failure with its "
        "traceback); a success clears it; BaseException propagates",
    ),
    Law(
        id="registry.model",
        about="registry",
        statement="the catalogue equals the model after every step",
    ),
    Law(
        id="registry.resolver-agrees",
        about="registry",
        statement="everything listed resolves to the same definition; nothing else resolves",
    ),
    Law(
        id="registry.resolved-whole",
        about="registry",
        statement="a per-name read, before or after the catalogue is loaded, answers the whole "
        "element the loaded registry holds: definition, handler, completion providers, tags",
    ),
    Law(
        id="registry.load-idempotent",
        about="registry",
        statement="load() twice provides each source once; the catalogue is unchanged",
    ),
    Law(
        id="registry.single-flight",
        about="registry",
        statement="concurrent first reads provide each source once",
    ),
    Law(
        id="registry.first-read-complete",
        about="registry",
        statement="every concurrent first read answers from the fully loaded catalogue",
    ),
    Law(
        id="registry.lazy",
        about="registry",
        statement="nothing is provided before the first catalogue or resolver call or load()",
    ),
    Law(
        id="registry.precedence",
        about="registry",
        statement="runtime > higher priority > lower; equal priority: first added wins; "
        "whatever order sources finish providing in",
    ),
    Law(
        id="registry.element-isolation",
        about="registry",
        statement="an invalid element costs only itself",
    ),
    Law(
        id="registry.undeclared-kinds",
        about="registry",
        statement="an element of a kind its source does not declare is skipped, costing only "
        "itself; a source whose kinds() raises declares nothing",
    ),
    Law(
        id="registry.source-isolation",
        about="registry",
        statement="a raising source costs at most its own elements; every read still succeeds",
    ),
    Law(
        id="registry.unavailable-keeps-last-good",
        about="registry",
        statement="a source raising SourceUnavailableError on reload keeps serving its last collection",
    ),
    Law(
        id="registry.reload-atomic",
        about="registry",
        statement="a read during reload() answers from the whole old or the whole new catalogue",
    ),
    Law(
        id="registry.register-inverse",
        about="registry",
        statement="register(e) then unregister(e.ref) restores the previous catalogue",
    ),
    Law(
        id="registry.templates",
        about="registry",
        statement="exact resource beats template; most specific template wins (ties: precedence); "
        "variables decoded",
    ),
    Law(
        id="registry.candidates",
        about="registry",
        statement="where the registry has resource_candidates(uri), its first candidate is "
        "get_resource(uri) and each next one what would win with the earlier ones removed",
    ),
    Law(
        id="registry.honest-kinds",
        about="registry",
        statement="kinds() is the union of the sources' kinds() and the runtime kinds, without providing",
    ),
    Law(
        id="registry.change-events",
        about="registry",
        statement="after the first load, one event per operation with exactly the kinds whose "
        "listed definitions changed; nothing before it",
    ),
    Law(
        id="registry.listener-isolation",
        about="registry",
        statement="a raising listener changes nothing: the operation completes, others are called",
    ),
    Law(
        id="registry.unsubscribe",
        about="registry",
        statement="an unsubscribed listener is never called again; others still are",
    ),
    Law(
        id="server.capabilities",
        about="server",
        statement="initialize/discover advertise tools, resources and prompts exactly for the kinds "
        "the registry may hold, in both protocol eras",
    ),
    Law(
        id="server.pagination",
        about="server",
        statement="a cursor walk yields every listed element exactly once; walking again gives the "
        "same pages; a cursor can be used again",
    ),
    Law(
        id="server.visibility-agrees",
        about="server",
        statement="a hidden element answers every method byte for byte like a missing one",
    ),
    Law(
        id="server.answers",
        about="server",
        statement="a read, subscription, prompt or completion naming an element answers what its "
        "handler makes of it: contents at the URI asked, messages, the provider's values for the "
        "argument and context sent (none for a fixed resource), all of them",
    ),
    Law(
        id="server.errors",
        about="server",
        statement="unknown tool or prompt and bad cursor: -32602; unknown resource: -32002; the "
        "error names what was asked for; a listed tool's call is a result, never a JSON-RPC error",
    ),
    Law(
        id="server.list-changed",
        about="server",
        statement="a change of the catalogue reaches clients as list_changed for exactly the kinds "
        "that changed, where listChanged is advertised",
    ),
    Law(
        id="visibility.uri-narrows",
        about="visibility",
        statement="a rule composed of others decides a URI from its parts' whole decisions as it "
        "decides lists from their list decisions: a part hiding a template admits none of its URIs",
    ),
    Law(
        id="visibility.parts",
        about="visibility",
        statement="a rule composed of others lists an element exactly as the boolean function of "
        "its parts' list decisions it declares (Capabilities.decides), on every combination",
    ),
    Law(
        id="events.owned",
        about="events",
        statement="a replay sends only the asking session's events; an id it was never given "
        "(another session's, guessed, malformed) sends nothing and returns None",
    ),
    Law(
        id="events.after",
        about="events",
        statement="a replay sends, in order, the session's retained events after the id on its "
        "stream (no priming events) and returns that stream",
    ),
    Law(
        id="events.unguessable",
        about="events",
        statement="event ids carry at least 96 bits of randomness or are authenticated: knowing "
        "some does not reveal others",
    ),
    Law(
        id="events.ended",
        about="events",
        statement="after end_session(s) no id of s replays anything; other sessions keep theirs",
    ),
    Law(
        id="events.bounded",
        about="events",
        statement="what is retained stays within the declared count, byte and age bounds (exactly "
        "max_age old is within); the oldest events go first, and only to keep the bounds",
    ),
    Law(
        id="store.roundtrip",
        about="store",
        statement="get(k) after set(k, v) returns v, byte for byte, until the TTL passes (then "
        "None); the last set wins",
    ),
    Law(
        id="store.expiry",
        about="store",
        statement="an entry is live while the clock reads less than its set time plus its TTL and "
        "gone from then on (at exactly the TTL), alike for get, delete, delete_prefix and entries",
    ),
    Law(
        id="store.delete",
        about="store",
        statement="delete(k) removes only k and says whether it was there; delete_prefix(p) "
        "removes exactly the keys starting with p and counts them",
    ),
    Law(
        id="store.entries",
        about="store",
        statement="where the store lists entries, entries(p) is exactly the live entries whose "
        "key starts with p, each with the value get() returns",
    ),
    Law(
        id="bus.versions",
        about="bus",
        statement="publish(keys) raises each key's version by at least one and returns the change "
        "with the versions after it; versions never go down",
    ),
    Law(
        id="bus.delivers",
        about="bus",
        statement="a change published while a subscription is open reaches it, or the "
        "subscription is interrupted and then catches up",
    ),
    Law(
        id="bus.catch-up",
        about="bus",
        statement="a subscription's first item, and its first after an interruption, is a "
        "catch-up holding the current version of every key ever published",
    ),
)

_BY_ID: Final = {entry.id: entry for entry in LAWS}

# Which laws a run reports, by what it certifies. A wrapper over a healthy source is a source,
# so it answers to the source laws too.
_ABOUT: Final[dict[TargetKind, frozenset[LawTarget]]] = {
    "source": frozenset({"source"}),
    "wrapper": frozenset({"source", "wrapper"}),
    "registry": frozenset({"registry"}),
    "server": frozenset({"server"}),
    "visibility": frozenset({"visibility"}),
    "event-store": frozenset({"events"}),
    "cache-store": frozenset({"store"}),
    "change-bus": frozenset({"bus"}),
}


def law(law_id: str) -> Law:
    """The law with ``law_id``; a KeyError lists the known ids (a typo must not pass silently)."""
    try:
        return _BY_ID[law_id]
    except KeyError:
        raise KeyError(f"unknown law {law_id!r}; known laws: {', '.join(_BY_ID)}") from None


def laws_for(kind: TargetKind) -> tuple[Law, ...]:
    """The laws a run certifying a ``kind`` target reports, in table order."""
    return tuple(entry for entry in LAWS if entry.about in _ABOUT[kind])
