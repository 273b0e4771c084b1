"""The laws the kit certifies: one row per law, the same ids as the Protocol docstrings' ``Laws:``.

The table is data: the plugin builds its report from it, the checks name their law by id, and a
test compares the ids against the docstrings of :mod:`mcp_core` so the two halves of the
specification cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

__all__ = ["LAWS", "Law", "LawTarget", "TargetKind", "law", "laws_for"]

TargetKind: TypeAlias = Literal["registry", "source", "wrapper"]
"""What a run certifies: the object a ``--mcp-registry``, ``--mcp-source`` or ``--mcp-wrapper``
factory makes."""

LawTarget: TypeAlias = Literal["source", "wrapper", "registry", "server"]
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
        statement="two provide() calls with no outside change are equal",
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
        id="registry.lazy",
        about="registry",
        statement="nothing is provided before the first catalogue or resolver call or load()",
    ),
    Law(
        id="registry.precedence",
        about="registry",
        statement="runtime > higher priority > lower; equal priority: first added wins",
    ),
    Law(
        id="registry.element-isolation",
        about="registry",
        statement="an invalid element costs only itself",
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
        id="registry.honest-kinds",
        about="registry",
        statement="kinds() is the union of the sources' kinds() and the runtime kinds, without providing",
    ),
    Law(
        id="registry.change-events",
        about="registry",
        statement="a reload or write emits one change covering exactly the affected kinds",
    ),
    Law(
        id="server.visibility-agrees",
        about="server",
        statement="hidden in a list <=> not callable, with the same error as a missing element",
    ),
    Law(
        id="server.pagination",
        about="server",
        statement="a cursor walk yields every element exactly once",
    ),
)

_BY_ID: Final = {entry.id: entry for entry in LAWS}

# Which laws a run reports, by what it certifies. A wrapper over a healthy source is a source,
# so it answers to the source laws too; server laws ride along with registries until a server
# factory exists, reported N/A with that reason rather than silently left out.
_ABOUT: Final[dict[TargetKind, frozenset[LawTarget]]] = {
    "source": frozenset({"source"}),
    "wrapper": frozenset({"source", "wrapper"}),
    "registry": frozenset({"registry", "server"}),
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
