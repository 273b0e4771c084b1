# Copyright 2026 The mcp-core authors. SPDX-License-Identifier: MIT
r"""RFC 6570 URI templates that can be matched back: resource templates for ``resources/read``.

Supported syntax
    Literals, and expressions ``{var}`` with the operators of levels 1-3: none (simple string),
    ``+`` (reserved), ``#`` (fragment), ``.`` (label), ``/`` (path segment), ``;`` (path-style
    parameter), ``?`` (form-style query) and ``&`` (query continuation). Variable names follow the
    RFC (letters, digits, ``_`` and ``%XX`` escapes, joined by single dots); an expression may list
    several (``{x,y}``, ``{?a,b}``), each with at most one level-4 modifier: a prefix ``:N``
    (``N`` from 1 to 9999) or the explode modifier ``*``.

Expansion
    :meth:`UriTemplate.expand` follows RFC 6570 exactly for string and list values: per-operator
    percent-encoding (UTF-8), prefix truncation on characters, and the undefined / empty rules (a
    missing name or an empty list is undefined; ``""`` is defined and empty).

Matching
    :meth:`UriTemplate.match` reads variables back out of a URI in its percent-encoded (ASCII)
    form. The whole URI must match. A value of a simple, ``.``, ``/``, ``;``, ``?`` or ``&``
    expression consists of unreserved characters and ``%XX`` escapes only, so it never contains
    a delimiter; ``+`` and ``#`` values may also contain reserved characters. Values come back
    percent-decoded as UTF-8 (a value that does not decode makes the URI not match). Parameters of
    ``?`` and ``&`` expressions are optional and accepted in the order the template writes them;
    an absent one is left out of the result. Every other variable must be present. ``;x`` and
    ``?x`` without ``=`` read as ``""``. ``{var:N}`` matches at most ``N`` decoded characters. An
    exploded variable is matched as a list and yields its items, percent-decoded, joined with
    ``","``; an exploded ``+``/``#`` variable reads exactly like an unexploded one. A list given
    to an unexploded variable expands to ``a,b`` whose ``,`` is reserved, so it does not match.
    Decoded values are untrusted input: they may contain ``/``, ``..`` or NUL.

Rejected (:class:`~mcp_core.errors.InvalidUriTemplateError`, with the position and a fix)
    An empty template; unbalanced braces; an empty expression ``{}``; an invalid variable name; a
    reserved or unknown operator (``=``, ``,``, ``!``, ``@``, ``|``...); a bad prefix length, or a
    prefix combined with ``*``; a character RFC 6570 does not allow in a literal (space, ``"``,
    ``'``, ``<``, ``>``, ``\``, ``^``, a backtick, ``|``, a ``%`` not starting an escape...); a
    template without any expression; a variable used twice; and any template some URI could match in
    more than one way, such as ``{a}{b}``, ``{+a}{b}``, ``{a}.{b}``, ``{+a,b}`` or ``{.list*}``.
    That last check is a search, not a list of patterns: the template is compiled to an automaton
    that is searched for a URI with two different readings, which the message quotes. It ignores
    prefix lengths (an upper bound only), so it can only err towards rejecting. So whatever
    :meth:`UriTemplate.parse` accepts, ``match(expand(values))`` gives the values back, and
    ``{+a}{/b}`` is accepted (``b`` is the last segment) while ``{+a}{?b}`` is not. Exploded
    associative arrays cannot be expressed: exploded variables are always lists. Positions in
    messages are 0-based offsets into the template text.

Specificity
    :attr:`UriTemplate.specificity` ranks templates for dispatch: more literal characters first
    (an ``%XX`` escape counts as one), then fewer variables, then fewer ``+``/``#`` expressions,
    then fewer ``?``/``&`` expressions. :func:`most_specific_first` sorts by it, breaking ties by
    the template text.
"""

from __future__ import annotations

import functools
import itertools
import re
import string
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, final
from urllib.parse import quote, unquote

from mcp_core.errors import InvalidUriTemplateError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["UriTemplate", "most_specific_first"]

_UNRESERVED: Final = frozenset(string.ascii_letters + string.digits + "-._~")
_RESERVED_TEXT: Final = ":/?#[]@!$&'()*+,;="
_RESERVED: Final = frozenset(_RESERVED_TEXT)
_HEX: Final = frozenset(string.hexdigits)
# RFC 6570 section 2.1: every visible ASCII character except these may be a literal.
_LITERAL_ASCII: Final = frozenset(map(chr, range(0x21, 0x7F))) - frozenset("\"%'<>\\^`{|}")
# ucschar and iprivate (RFC 3987): the non-ASCII characters a literal may hold.
_LITERAL_NON_ASCII: Final = (
    (0xA0, 0xD7FF),
    (0xE000, 0xF8FF),
    (0xF900, 0xFDCF),
    (0xFDF0, 0xFFEF),
    *(((plane << 16), (plane << 16) + 0xFFFD) for plane in range(1, 14)),
    (0xE1000, 0xEFFFD),
    (0xF0000, 0xFFFFD),
    (0x100000, 0x10FFFD),
)
_RESERVED_OPERATORS: Final = frozenset("=,!@|")
_VARNAME: Final = re.compile(
    r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
)
_PREFIX: Final = re.compile(r"[1-9][0-9]{0,3}")
_TRIPLET: Final = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True, slots=True)
class _Operator:
    """One row of the RFC 6570 appendix A table."""

    symbol: str
    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool

    @property
    def query(self) -> bool:
        return self.symbol in {"?", "&"}


_OPERATORS: Final = {
    op.symbol: op
    for op in (
        _Operator(symbol="", first="", sep=",", named=False, ifemp="", reserved=False),
        _Operator(symbol="+", first="", sep=",", named=False, ifemp="", reserved=True),
        _Operator(symbol="#", first="#", sep=",", named=False, ifemp="", reserved=True),
        _Operator(symbol=".", first=".", sep=".", named=False, ifemp="", reserved=False),
        _Operator(symbol="/", first="/", sep="/", named=False, ifemp="", reserved=False),
        _Operator(symbol=";", first=";", sep=";", named=True, ifemp="", reserved=False),
        _Operator(symbol="?", first="?", sep="&", named=True, ifemp="=", reserved=False),
        _Operator(symbol="&", first="&", sep="&", named=True, ifemp="=", reserved=False),
    )
}


# --- syntax ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool
    position: int


@dataclass(frozen=True, slots=True)
class _Expression:
    operator: _Operator
    variables: tuple[_VarSpec, ...]
    source: str
    position: int


@dataclass(frozen=True, slots=True)
class _Literal:
    source: str
    encoded: str


_Part: TypeAlias = _Literal | _Expression


def _error(text: str, problem: str, fix: str) -> InvalidUriTemplateError:
    return InvalidUriTemplateError(
        f"invalid URI template {text!r}: {problem}; {fix}", template=text
    )


def _parse_syntax(text: str) -> tuple[_Part, ...]:
    """Split ``text`` into literals and expressions, enforcing the RFC 6570 grammar."""
    if not text:
        raise _error(
            text, "the template is empty", "write a URI with a {variable}, e.g. 'file:///{path}'"
        )
    parts: list[_Part] = []
    literal_start = 0
    for position, char in enumerate(text):
        if char == "}" and position >= literal_start:
            raise _error(
                text,
                f"'}}' at position {position} closes no expression",
                "remove it, or open the expression with '{' before it",
            )
        if char != "{" or position < literal_start:
            continue
        close = text.find("}", position + 1)
        if close == -1:
            raise _error(
                text,
                f"the expression opened at position {position} is never closed",
                "add the missing '}'",
            )
        nested = text.find("{", position + 1, close)
        if nested != -1:
            raise _error(
                text,
                f"'{{' at position {nested} opens an expression inside the one opened at "
                f"position {position}",
                "expressions do not nest; close the first one with '}' before opening another",
            )
        if literal_start < position:
            parts.append(_parse_literal(text, literal_start, position))
        parts.append(_parse_expression(text, position, close))
        literal_start = close + 1
    if literal_start < len(text):
        parts.append(_parse_literal(text, literal_start, len(text)))
    return tuple(parts)


def _parse_literal(text: str, start: int, end: int) -> _Literal:
    encoded: list[str] = []
    position = start
    while position < end:
        char = text[position]
        if char == "%":
            triplet = text[position : position + 3]
            if not _TRIPLET.fullmatch(triplet) or position + 3 > end:
                raise _error(
                    text,
                    f"'%' at position {position} does not start a %XX escape",
                    "write a literal percent sign as '%25'",
                )
            encoded.append(triplet)
            position += 3
            continue
        if char in _LITERAL_ASCII:
            encoded.append(char)
        elif any(low <= ord(char) <= high for low, high in _LITERAL_NON_ASCII):
            # A URI is ASCII: the RFC has non-ASCII literals expanded as their UTF-8 escapes.
            encoded.append(quote(char, safe=""))
        else:
            raise _error(
                text,
                f"character {char!r} at position {position} is not allowed in a URI template",
                _escape_hint(char),
            )
        position += 1
    return _Literal(text[start:end], "".join(encoded))


def _escape_hint(char: str) -> str:
    try:
        escaped = quote(char, safe="")
    except UnicodeEncodeError:
        return "remove it (it has no UTF-8 encoding)"
    return f"percent-encode it as {escaped!r}"


def _parse_expression(text: str, start: int, close: int) -> _Expression:
    source = text[start : close + 1]
    if close == start + 1:
        raise _error(
            text,
            f"empty expression '{{}}' at position {start}",
            "put a variable name inside, e.g. '{id}'",
        )
    symbol = text[start + 1]
    operator = _OPERATORS.get(symbol)
    unknown = operator is None and symbol in string.punctuation and symbol not in "%_"
    if symbol in _RESERVED_OPERATORS or unknown:
        kind = "is reserved by RFC 6570" if symbol in _RESERVED_OPERATORS else "is not an operator"
        raise _error(
            text,
            f"{symbol!r} at position {start + 1} in {source!r} {kind}",
            "use one of the operators + # . / ; ? & or none, e.g. '{+path}', '{?query}' or '{id}'",
        )
    offset = start + 1 if operator is None else start + 2
    specs: list[_VarSpec] = []
    for raw in text[offset:close].split(","):
        specs.append(_parse_varspec(text, raw, offset, source))
        offset += len(raw) + 1
    return _Expression(operator or _OPERATORS[""], tuple(specs), source, start)


def _parse_varspec(text: str, raw: str, position: int, source: str) -> _VarSpec:
    name, explode = (raw[:-1], True) if raw.endswith("*") else (raw, False)
    prefix: int | None = None
    if ":" in name:
        name, _, digits = name.partition(":")
        digits_at = position + len(name) + 1
        if explode:
            raise _error(
                text,
                f"{raw!r} at position {position} in {source!r} has both a prefix and '*'",
                f"use either {{{name}:{digits}}} or {{{name}*}}",
            )
        if not _PREFIX.fullmatch(digits):
            raise _error(
                text,
                f"prefix length {digits!r} at position {digits_at} in {source!r} is not a whole "
                "number from 1 to 9999",
                f"write it without sign or leading zeros, e.g. {{{name or 'var'}:3}}",
            )
        prefix = int(digits)
    if not _VARNAME.fullmatch(name):
        problem = (
            f"a variable name is missing at position {position} in {source!r}"
            if not name
            else f"invalid variable name {name!r} at position {position} in {source!r}"
        )
        raise _error(
            text,
            problem,
            "a name is letters, digits, '_' and %XX escapes, optionally joined by single dots "
            "(e.g. 'user_id' or 'user.id'), and names in one expression are separated by ','",
        )
    return _VarSpec(name, prefix, explode, position)


# --- expansion ---------------------------------------------------------------------------------


def _encode(value: str, *, reserved: bool) -> str:
    if not reserved:
        return quote(value, safe="")
    # RFC 6570 section 3.2.3: reserved expansion copies %XX triplets already in the value as-is.
    pieces: list[str] = []
    done = 0
    for triplet in _TRIPLET.finditer(value):
        pieces.extend((quote(value[done : triplet.start()], safe=_RESERVED_TEXT), triplet[0]))
        done = triplet.end()
    pieces.append(quote(value[done:], safe=_RESERVED_TEXT))
    return "".join(pieces)


def _expand_parts(parts: tuple[_Part, ...], values: Mapping[str, str | Sequence[str]]) -> str:
    return "".join(
        part.encoded if isinstance(part, _Literal) else _expand_expression(part, values)
        for part in parts
    )


def _expand_expression(expression: _Expression, values: Mapping[str, str | Sequence[str]]) -> str:
    operator = expression.operator
    pieces: list[str] = []
    for var in expression.variables:
        # Typed as object so that values breaking the annotation are still checked at runtime.
        value: object = values.get(var.name)
        if value is None:
            continue
        if isinstance(value, str):
            pieces.append(_expand_string(operator, var, value))
        elif isinstance(value, Sequence):
            items = _list_items(var, value)
            if items:
                pieces.append(_expand_list(operator, var, items))
        else:
            msg = f"value of {var.name!r} must be a string or a sequence of strings, got {value!r}"
            raise TypeError(msg)
    return operator.first + operator.sep.join(pieces) if pieces else ""


def _list_items(var: _VarSpec, value: Sequence[object]) -> list[str]:
    items: list[str] = []
    for item in value:
        if not isinstance(item, str):
            msg = f"items of {var.name!r} must be strings, got {item!r}"
            raise TypeError(msg)
        items.append(item)
    if items and var.prefix is not None:
        msg = (
            f"{{{var.name}:{var.prefix}}} takes a string: RFC 6570 defines no prefix of a list; "
            "pass a string, or drop the ':N' modifier"
        )
        raise ValueError(msg)
    return items


def _expand_string(operator: _Operator, var: _VarSpec, value: str) -> str:
    if var.prefix is not None:
        value = value[: var.prefix]
    encoded = _encode(value, reserved=operator.reserved)
    if not operator.named:
        return encoded
    return f"{var.name}={encoded}" if value else var.name + operator.ifemp


def _expand_list(operator: _Operator, var: _VarSpec, items: list[str]) -> str:
    encoded = [_encode(item, reserved=operator.reserved) for item in items]
    if not var.explode:
        joined = ",".join(encoded)
        return f"{var.name}={joined}" if operator.named else joined
    if not operator.named:
        return operator.sep.join(encoded)
    return operator.sep.join(
        f"{var.name}={text}" if item else var.name + operator.ifemp
        for item, text in zip(items, encoded, strict=True)
    )


def _expand_rfc6570(text: str, values: Mapping[str, str | Sequence[str]]) -> str:
    """Expand any RFC 6570 level 1-3 template, matchable or not: the full grammar, for tests."""
    return _expand_parts(_parse_syntax(text), values)


# --- matching: one pattern tree, compiled to a regex and checked for ambiguity ----------------


@dataclass(frozen=True, slots=True)
class _Chars:
    """One character out of ``chars``."""

    chars: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Seq:
    items: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Alt:
    options: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Star:
    """Zero or more ``body``; a body always consumes input, so the automaton has no empty loop."""

    body: _Node


@dataclass(frozen=True, slots=True)
class _Group:
    """Captures the text of one variable (one :class:`_Slot`)."""

    slot: int
    body: _Node


@dataclass(frozen=True, slots=True)
class _Mark:
    """A boundary between list items: invisible to the regex, a tag for the ambiguity check."""

    slot: int


_Node: TypeAlias = _Chars | _Seq | _Alt | _Star | _Group | _Mark

_SlotKind: TypeAlias = Literal["value", "items", "param", "param_items"]


@dataclass(frozen=True, slots=True)
class _Slot:
    """How to turn a variable's captured text into its value."""

    variable: _VarSpec
    expression: _Expression
    kind: _SlotKind


_EMPTY: Final = _Seq(())
_TRIPLET_NODE: Final = _Seq((_Chars(frozenset("%")), _Chars(_HEX), _Chars(_HEX)))
_UNRESERVED_VALUE: Final = _Star(_Alt((_Chars(_UNRESERVED), _TRIPLET_NODE)))
_RESERVED_VALUE: Final = _Star(_Alt((_Chars(_UNRESERVED | _RESERVED), _TRIPLET_NODE)))


def _optional(node: _Node) -> _Node:
    return _Alt((node, _EMPTY))


def _literal_node(encoded: str) -> _Node:
    nodes: list[_Node] = []
    position = 0
    while position < len(encoded):
        if encoded[position] == "%":
            # Escapes are case-insensitive (RFC 3986 section 2.1): accept %2f for a literal %2F.
            nodes.append(_Chars(frozenset("%")))
            nodes.extend(
                _Chars(frozenset({h.lower(), h.upper()}))
                for h in encoded[position + 1 : position + 3]
            )
            position += 3
        else:
            nodes.append(_Chars(frozenset(encoded[position])))
            position += 1
    return _Seq(tuple(nodes))


def _variable_node(expression: _Expression, var: _VarSpec, slots: list[_Slot]) -> _Node:
    operator = expression.operator
    slot = len(slots)
    value = _RESERVED_VALUE if operator.reserved else _UNRESERVED_VALUE
    sep = _literal_node(operator.sep)
    kind: _SlotKind
    body: _Node
    if operator.named:
        item = _Seq((_literal_node(var.name), _optional(_Seq((_literal_node("="), value)))))
        kind = "param_items" if var.explode else "param"
        body = _Seq((item, _Star(_Seq((sep, _Mark(slot), item))))) if var.explode else item
    elif var.explode and not operator.reserved:
        kind = "items"
        body = _Seq((value, _Star(_Seq((sep, _Mark(slot), value)))))
    else:
        # An exploded +/# list joins with ",", which its items may contain too: read it whole.
        kind = "value"
        body = value
    slots.append(_Slot(var, expression, kind))
    return _Group(slot, body)


def _expression_node(expression: _Expression, slots: list[_Slot]) -> _Node:
    operator = expression.operator
    first, sep = _literal_node(operator.first), _literal_node(operator.sep)
    variables = [_variable_node(expression, var, slots) for var in expression.variables]
    if not operator.query:
        return _Seq(tuple(n for i, var in enumerate(variables) for n in (sep if i else first, var)))
    # Query parameters are optional and keep their order; the first one present takes `first`.
    branches: list[_Node] = [
        _Seq((first, var, *(_optional(_Seq((sep, later))) for later in variables[i + 1 :])))
        for i, var in enumerate(variables)
    ]
    return _Alt((*branches, _EMPTY))


def _template_node(parts: tuple[_Part, ...], slots: list[_Slot]) -> _Node:
    return _Seq(
        tuple(
            _literal_node(part.encoded)
            if isinstance(part, _Literal)
            else _expression_node(part, slots)
            for part in parts
        )
    )


def _regex_source(node: _Node, out: list[str], group_slots: list[int]) -> None:
    match node:
        case _Chars(chars) if len(chars) == 1:
            out.append(re.escape(next(iter(chars))))
        case _Chars(chars):
            out.append("[" + "".join(re.escape(c) for c in sorted(chars)) + "]")
        case _Seq(items):
            for item in items:
                _regex_source(item, out, group_slots)
        case _Alt(options):
            out.append("(?:")
            for index, option in enumerate(options):
                out.append("|" if index else "")
                _regex_source(option, out, group_slots)
            out.append(")")
        case _Star(body):
            out.append("(?:")
            _regex_source(body, out, group_slots)
            out.append(")*")
        case _Group(slot, body):
            group_slots.append(slot)
            out.append("(")
            _regex_source(body, out, group_slots)
            out.append(")")
        case _Mark():
            pass


# --- the ambiguity check -----------------------------------------------------------------------
#
# The pattern tree becomes a nondeterministic automaton whose silent moves carry tags: the start
# and end of each variable's text and each list-item boundary. Two runs over the same input that
# cross different tags at some step read the input differently. A breadth-first search over
# pairs of runs finds the shortest URI accepted by two such runs, if there is one. The search
# ignores prefix lengths and UTF-8 validity, so it may reject a template that those limits would
# make unambiguous, but never accepts an ambiguous one.

_START: Final = "\x02"
_END: Final = "\x03"
_Tag: TypeAlias = tuple[int, str]
_Step: TypeAlias = tuple[int, int, tuple[_Tag, ...]]
_Pair: TypeAlias = tuple[int, int, bool]
# How the search reached a pair: the previous pair, the symbol mask and both runs' tags.
_Link: TypeAlias = tuple[_Pair, int, tuple[_Tag, ...], tuple[_Tag, ...]]
# Witness URIs read best with these characters, so symbol classes are numbered in this order.
_WITNESS_ORDER: Final = "xyzabcdefghijklmnopqrstuvw0123456789/"


class _Automaton:
    def __init__(self) -> None:
        self.silent: list[list[tuple[int, _Tag | None]]] = []
        self.moves: list[list[tuple[frozenset[str], int]]] = []

    def state(self) -> int:
        self.silent.append([])
        self.moves.append([])
        return len(self.moves) - 1

    def build(self, node: _Node, start: int) -> int:
        """Add ``node`` from state ``start``; return the state it ends in."""
        end = start
        if isinstance(node, _Chars):
            end = self.state()
            self.moves[start].append((node.chars, end))
        elif isinstance(node, _Seq):
            for item in node.items:
                end = self.build(item, end)
        elif isinstance(node, _Alt):
            end = self.state()
            for option in node.options:
                branch = self.state()
                self.silent[start].append((branch, None))
                self.silent[self.build(option, branch)].append((end, None))
        elif isinstance(node, _Star):
            # A fresh loop state: looping back to `start` could re-enter whatever else leaves it.
            loop, end = self.state(), self.state()
            self.silent[start].append((loop, None))
            self.silent[loop].append((end, None))
            self.silent[self.build(node.body, loop)].append((loop, None))
        elif isinstance(node, _Group):
            inner = self.state()
            self.silent[start].append((inner, (node.slot, "(")))
            end = self.state()
            self.silent[self.build(node.body, inner)].append((end, (node.slot, ")")))
        else:
            end = self.state()
            self.silent[start].append((end, (node.slot, "|")))
        return end


@dataclass(frozen=True, slots=True)
class _Ambiguity:
    witness: str
    readings: tuple[dict[int, _Span], dict[int, _Span]]


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    marks: tuple[int, ...]


class _Search:
    """Breadth-first search for two runs of one automaton that accept one input differently."""

    def __init__(self, node: _Node) -> None:
        self.automaton = _Automaton()
        self.start = self.automaton.state()
        self.final = self.automaton.build(
            _Seq((_Chars(frozenset(_START)), node, _Chars(frozenset(_END)))), self.start
        )
        charsets = sorted(
            {chars for moves in self.automaton.moves for chars, _ in moves}, key=sorted
        )
        # Characters no charset tells apart form one symbol class; the search runs on class masks.
        rank = {char: index for index, char in enumerate(_WITNESS_ORDER)}
        alphabet = sorted(
            frozenset[str]().union(*charsets), key=lambda c: (rank.get(c, len(rank)), c)
        )
        classes: dict[tuple[bool, ...], int] = {}
        self.representatives: list[str] = []
        class_of: dict[str, int] = {}
        for char in alphabet:
            signature = tuple(char in chars for chars in charsets)
            if signature not in classes:
                classes[signature] = len(self.representatives)
                self.representatives.append(char)
            class_of[char] = classes[signature]
        self.masks = {chars: sum({1 << class_of[c] for c in chars}) for chars in charsets}
        self.steps: dict[int, list[_Step]] = {}

    def steps_from(self, state: int) -> list[_Step]:
        """The moves from ``state``, each with the tags its silent prefix crosses."""
        if state not in self.steps:
            found: set[_Step] = set()
            pending: list[tuple[int, tuple[_Tag, ...]]] = [(state, ())]
            while pending:
                current, tags = pending.pop()
                # Sorted, so that runs crossing the same tags in another order count as one.
                label = tuple(sorted(tags))
                found.update(
                    (self.masks[chars], target, label)
                    for chars, target in self.automaton.moves[current]
                )
                pending.extend(
                    (target, tags if tag is None else (*tags, tag))
                    for target, tag in self.automaton.silent[current]
                )
            self.steps[state] = sorted(found)
        return self.steps[state]

    def run(self) -> _Ambiguity | None:
        """Find the shortest input with two readings, or ``None`` if there is none."""
        origin: _Pair = (self.start, self.start, False)
        goal: _Pair = (self.final, self.final, True)
        parents: dict[_Pair, _Link | None] = {origin: None}
        queue = deque([origin])
        while queue and goal not in parents:
            pair = queue.popleft()
            left, right, diverged = pair
            for left_mask, left_target, left_tags in self.steps_from(left):
                for right_mask, right_target, right_tags in self.steps_from(right):
                    common = left_mask & right_mask
                    successor = (left_target, right_target, diverged or left_tags != right_tags)
                    if common and successor not in parents:
                        parents[successor] = (pair, common, left_tags, right_tags)
                        queue.append(successor)
        return self._witness(parents, goal) if goal in parents else None

    def _witness(self, parents: dict[_Pair, _Link | None], goal: _Pair) -> _Ambiguity:
        trail: list[_Link] = []
        link = parents[goal]
        while link is not None:
            trail.append(link)
            link = parents[link[0]]
        trail.reverse()
        # The lowest class in a mask has the most readable representative (see _WITNESS_ORDER).
        symbols = [self.representatives[(c & -c).bit_length() - 1] for _, c, _, _ in trail]
        return _Ambiguity(
            "".join(symbols[1:-1]),
            (_reading([link[2] for link in trail]), _reading([link[3] for link in trail])),
        )


def _reading(tags_per_step: list[tuple[_Tag, ...]]) -> dict[int, _Span]:
    """Where one run put each variable; tags of step ``k`` lie before URI character ``k - 1``."""
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    marks: dict[int, list[int]] = {}
    for step, tags in enumerate(tags_per_step):
        for slot, kind in tags:
            where = max(step - 1, 0)
            if kind == "(":
                starts[slot] = where
            elif kind == ")":
                ends[slot] = where
            else:
                marks.setdefault(slot, []).append(where)
    return {slot: _Span(starts[slot], ends[slot], tuple(marks.get(slot, ()))) for slot in starts}


def _describe(
    witness: str, slots: list[_Slot], reading: dict[int, _Span], chosen: list[int]
) -> str:
    described: list[str] = []
    for index in chosen:
        slot, span = slots[index], reading.get(index)
        name = slot.variable.name
        if span is None:
            described.append(f"{name} absent")
            continue
        text = witness[span.start : span.end]
        if slot.kind in {"items", "param_items"}:
            cuts = [span.start, *span.marks, span.end + len(slot.expression.operator.sep)]
            items = [
                witness[begin : stop - len(slot.expression.operator.sep)]
                for begin, stop in itertools.pairwise(cuts)
            ]
            described.append(f"{name}={items!r}")
        elif slot.kind == "param":
            described.append(f"{name}={text[len(name) + 1 :]!r}")
        else:
            described.append(f"{name}={text!r}")
    return ", ".join(described)


def _ambiguity_error(
    text: str, slots: list[_Slot], ambiguity: _Ambiguity
) -> InvalidUriTemplateError:
    first, second = ambiguity.readings
    chosen = sorted(
        (s for s in first.keys() | second.keys() if first.get(s) != second.get(s)),
        key=lambda s: slots[s].variable.position,
    )
    witness = ambiguity.witness
    example = (
        f"the URI {witness!r} reads both as {_describe(witness, slots, first, chosen)}"
        f" and as {_describe(witness, slots, second, chosen)}"
    )
    earliest = slots[chosen[0]]
    where = f"{earliest.expression.source!r} at position {earliest.expression.position}"
    if len(chosen) == 1 and earliest.kind in {"items", "param_items"}:
        sep = earliest.expression.operator.sep
        return _error(
            text,
            f"the items of {where} cannot be told apart ({example}), because items may contain "
            f"their separator {sep!r} unencoded",
            "drop the explode modifier '*' and match the list as one value",
        )
    later = slots[chosen[-1]]
    if later.expression is not earliest.expression:
        where += f" and {later.expression.source!r} at position {later.expression.position}"
    problem = f"some URIs match {where} in more than one way: {example}"
    if earliest.expression.operator.reserved:
        fix = (
            f"a {{{earliest.expression.operator.symbol}...}} value may contain reserved "
            "characters such as '/', '?', '#' and ',', so nothing after it may start with one: "
            "give it its own expression with a single variable at the end of the template, or use "
            "a simple "
            f"{{{earliest.variable.name}}}, whose value stops at any reserved character"
        )
    else:
        fix = (
            "separate the values with a literal character the first one cannot contain, such as "
            "'/' (letters, digits, '-', '.', '_' and '~' are never escaped, so they cannot end a "
            "value), or use an operator that adds its own delimiter, such as "
            f"{{/{later.variable.name}}}"
        )
    return _error(text, problem, fix)


# --- compiled templates ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Compiled:
    parts: tuple[_Part, ...]
    variables: tuple[str, ...]
    slots: tuple[_Slot, ...]
    slot_groups: tuple[tuple[int, ...], ...]
    regex: re.Pattern[str]
    specificity: tuple[int, int, int, int]


@functools.lru_cache(maxsize=1024)
def _compile(text: str) -> _Compiled:
    parts = _parse_syntax(text)
    expressions = [part for part in parts if isinstance(part, _Expression)]
    if not expressions:
        raise _error(
            text,
            "it has no expression",
            "a resource template needs at least one {variable}; "
            "use a plain Resource for a fixed URI",
        )
    seen: dict[str, int] = {}
    for var in (var for expression in expressions for var in expression.variables):
        if var.name in seen:
            raise _error(
                text,
                f"variable {var.name!r} appears twice "
                f"(positions {seen[var.name]} and {var.position})",
                "a matched URI binds each name once; rename or remove one of them",
            )
        seen[var.name] = var.position
    slots: list[_Slot] = []
    node = _template_node(parts, slots)
    ambiguity = _Search(node).run()
    if ambiguity is not None:
        raise _ambiguity_error(text, slots, ambiguity)
    source: list[str] = []
    group_slots: list[int] = []
    _regex_source(node, source, group_slots)
    literals = [part.source for part in parts if isinstance(part, _Literal)]
    return _Compiled(
        parts=parts,
        variables=tuple(seen),
        slots=tuple(slots),
        slot_groups=tuple(
            tuple(group + 1 for group, owner in enumerate(group_slots) if owner == slot)
            for slot in range(len(slots))
        ),
        regex=re.compile("".join(source)),
        specificity=(
            # An escape is three characters of text but a single character of the URI.
            sum(len(literal) - 2 * literal.count("%") for literal in literals),
            -len(seen),
            -sum(e.operator.reserved for e in expressions),
            -sum(e.operator.query for e in expressions),
        ),
    )


def _decode(text: str) -> str | None:
    if "%" not in text:
        return text
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None


def _param_value(text: str, name: str) -> str | None:
    # `text` is "name" or "name=value"; both regex and RFC read a bare name as "".
    return _decode(text[len(name) + 1 :])


def _slot_value(slot: _Slot, text: str) -> str | None:
    name, sep = slot.variable.name, slot.expression.operator.sep
    if slot.kind == "value":
        value = _decode(text)
    elif slot.kind == "param":
        value = _param_value(text, name)
    else:
        pieces = text.split(sep)
        decode = _decode if slot.kind == "items" else functools.partial(_param_value, name=name)
        items = [decode(piece) for piece in pieces]
        value = None if None in items else ",".join(item for item in items if item is not None)
    prefix = slot.variable.prefix
    return None if value is None or (prefix is not None and len(value) > prefix) else value


# --- public API --------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class UriTemplate:
    """A parsed, matchable RFC 6570 template (levels 1-3, plus explode and prefix modifiers).

    Immutable and hashable; two templates are equal when their text is. Build one with
    :meth:`parse` (or the constructor, which does the same); see the module documentation for the
    syntax, the matching rules and what is rejected.
    """

    text: str
    variables: tuple[str, ...] = field(init=False, compare=False)
    _compiled: _Compiled = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        compiled = _compile(self.text)
        object.__setattr__(self, "variables", compiled.variables)
        object.__setattr__(self, "_compiled", compiled)

    @classmethod
    def parse(cls, text: str) -> UriTemplate:
        """Parse ``text``; raise :class:`InvalidUriTemplateError` if it is not matchable."""
        return cls(text)

    def expand(self, values: Mapping[str, str | Sequence[str]]) -> str:
        """Expand with ``values`` per RFC 6570 (a missing name or an empty list is undefined).

        Raises:
            TypeError: a value is neither a string nor a sequence of strings.
            ValueError: a list is given for a variable with a prefix modifier.
            UnicodeEncodeError: a value holds a lone surrogate, which has no UTF-8 form.
        """
        return _expand_parts(self._compiled.parts, values)

    def match(self, uri: str) -> dict[str, str] | None:
        """Read the variables out of ``uri``, percent-decoded; ``None`` if it does not match.

        The whole URI must match. Absent ``?``/``&`` parameters are left out of the result; an
        exploded variable yields its items, percent-decoded, joined with ``","``.
        """
        compiled = self._compiled
        found = compiled.regex.fullmatch(uri)
        if found is None:
            return None
        result: dict[str, str] = {}
        for slot, groups in zip(compiled.slots, compiled.slot_groups, strict=True):
            text = next((t for t in map(found.group, groups) if t is not None), None)
            if text is None:
                continue
            value = _slot_value(slot, text)
            if value is None:
                return None
            result[slot.variable.name] = value
        return result

    @property
    def specificity(self) -> tuple[int, int, int, int]:
        """Sort key: ``sorted(..., key=..., reverse=True)`` puts the most specific first.

        More literal characters (an ``%XX`` escape counts once) rank higher; ties go to fewer
        variables, then to fewer ``+``/``#`` expressions, then to fewer ``?``/``&`` expressions.
        """
        return self._compiled.specificity


def most_specific_first(templates: Iterable[UriTemplate]) -> list[UriTemplate]:
    """Sort ``templates`` by descending :attr:`~UriTemplate.specificity`, then by text."""
    return sorted(templates, key=lambda t: (tuple(-k for k in t.specificity), t.text))
