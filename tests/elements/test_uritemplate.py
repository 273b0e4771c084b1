# Copyright 2026 The mcp-core authors. SPDX-License-Identifier: MIT
"""Tests for the RFC 6570 URI templates that resource templates match URIs with."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pytest

# A test-only oracle: an independent RFC 6570 implementation to cross-check expansion against.
# It ships a py.typed marker, so mypy needs no ignore comment for it.
import uritemplate
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcp_core.elements._uritemplate import UriTemplate, _expand_rfc6570, most_specific_first
from mcp_core.errors import InvalidElementError, InvalidUriTemplateError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from uritemplate.variable import VariableValue

Values = dict[str, str | list[str]]

# --- RFC 6570 sections 1.2 and 3.2 ---------------------------------------------------------------

RFC_VALUES: Values = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": [],
}

# Every example of the RFC but those with associative arrays, which a value cannot be here.
RFC_EXAMPLES: list[tuple[str, str]] = [
    # 3.2.1 variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple string expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("map?{x,y}", "map?1024,768"),
    # 3.2.3 reserved expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    # 3.2.4 fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    # 3.2.5 label expansion
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.x,y}", "X.1024.768"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    # 3.2.7 path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    # 3.2.8 form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
]

# The RFC examples `parse` rejects, because some URI would match them in two ways.
RFC_UNMATCHABLE = {
    "up{+path}{var}/here",
    "{+x,hello,y}",
    "{+path,x}/here",
    "{#x,hello,y}",
    "{#path,x}/here",
    "{.who,who}",
    "{.half,who}",
    "www{.dom*}",
    "X{.x,y}",
    "X{.list*}",
    "X{.empty_keys*}",
    "{/who,who}",
    "{/var:1,var}",
}

# What the accepted RFC examples read back as. An undefined simple value and "" expand alike; a
# list in an unexploded variable ("a,b" with a reserved ",") and a missing required variable
# do not match.
RFC_MATCHES: dict[str, dict[str, str] | None] = {
    "{count}": None,
    "{count*}": {"count": "one,two,three"},
    "{/count}": None,
    "{/count*}": {"count": "one,two,three"},
    "{;count}": None,
    "{;count*}": {"count": "one,two,three"},
    "{?count}": None,
    "{?count*}": {"count": "one,two,three"},
    "{&count*}": {"count": "one,two,three"},
    "{var}": {"var": "value"},
    "{hello}": {"hello": "Hello World!"},
    "{half}": {"half": "50%"},
    "O{empty}X": {"empty": ""},
    "O{undef}X": {"undef": ""},
    "{x,y}": {"x": "1024", "y": "768"},
    "{x,hello,y}": {"x": "1024", "hello": "Hello World!", "y": "768"},
    "?{x,empty}": {"x": "1024", "empty": ""},
    "?{x,undef}": None,
    "?{undef,y}": None,
    "{var:3}": {"var": "val"},
    "{var:30}": {"var": "value"},
    "{list}": None,
    "{list*}": {"list": "red,green,blue"},
    "map?{x,y}": {"x": "1024", "y": "768"},
    "{+var}": {"var": "value"},
    "{+hello}": {"hello": "Hello World!"},
    "{+half}": {"half": "50%"},
    "{base}index": {"base": "http://example.com/home/"},
    "{+base}index": {"base": "http://example.com/home/"},
    "O{+empty}X": {"empty": ""},
    "O{+undef}X": {"undef": ""},
    "{+path}/here": {"path": "/foo/bar"},
    "here?ref={+path}": {"path": "/foo/bar"},
    "{+path:6}/here": {"path": "/foo/b"},
    "{+list}": {"list": "red,green,blue"},
    "{+list*}": {"list": "red,green,blue"},
    "{#var}": {"var": "value"},
    "{#hello}": {"hello": "Hello World!"},
    "{#half}": {"half": "50%"},
    "foo{#empty}": {"empty": ""},
    "foo{#undef}": None,
    "X{#var}": {"var": "value"},
    "X{#hello}": {"hello": "Hello World!"},
    "{#path:6}/here": {"path": "/foo/b"},
    "{#list}": {"list": "red,green,blue"},
    "{#list*}": {"list": "red,green,blue"},
    "{.who}": {"who": "fred"},
    "X{.var}": {"var": "value"},
    "X{.empty}": {"empty": ""},
    "X{.undef}": None,
    "X{.var:3}": {"var": "val"},
    "X{.list}": None,
    "X{.empty_keys}": None,
    "{/who}": {"who": "fred"},
    "{/half,who}": {"half": "50%", "who": "fred"},
    "{/who,dub}": {"who": "fred", "dub": "me/too"},
    "{/var}": {"var": "value"},
    "{/var,empty}": {"var": "value", "empty": ""},
    "{/var,undef}": None,
    "{/var,x}/here": {"var": "value", "x": "1024"},
    "{/list}": None,
    "{/list*}": {"list": "red,green,blue"},
    "{/list*,path:4}": {"list": "red,green,blue", "path": "/foo"},
    "{;who}": {"who": "fred"},
    "{;half}": {"half": "50%"},
    "{;empty}": {"empty": ""},
    "{;v,empty,who}": {"v": "6", "empty": "", "who": "fred"},
    "{;v,bar,who}": None,
    "{;x,y}": {"x": "1024", "y": "768"},
    "{;x,y,empty}": {"x": "1024", "y": "768", "empty": ""},
    "{;x,y,undef}": None,
    "{;hello:5}": {"hello": "Hello"},
    "{;list}": None,
    "{;list*}": {"list": "red,green,blue"},
    "{?who}": {"who": "fred"},
    "{?half}": {"half": "50%"},
    "{?x,y}": {"x": "1024", "y": "768"},
    "{?x,y,empty}": {"x": "1024", "y": "768", "empty": ""},
    "{?x,y,undef}": {"x": "1024", "y": "768"},
    "{?var:3}": {"var": "val"},
    "{?list}": None,
    "{?list*}": {"list": "red,green,blue"},
    "{&who}": {"who": "fred"},
    "{&half}": {"half": "50%"},
    "?fixed=yes{&x}": {"x": "1024"},
    "{&x,y,empty}": {"x": "1024", "y": "768", "empty": ""},
    "{&var:3}": {"var": "val"},
    "{&list}": None,
    "{&list*}": {"list": "red,green,blue"},
}

# --- generated templates -------------------------------------------------------------------------

OPERATORS = ("", "+", "#", ".", "/", ";", "?", "&")
RESERVED_OPERATORS = frozenset("+#")
QUERY_OPERATORS = frozenset("?&")
LITERAL_ASCII = sorted(set(map(chr, range(0x21, 0x7F))) - set("\"%'<>\\^`{|}"))
TRIPLET = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True)
class Var:
    """One generated variable and the expression operator it sits in."""

    operator: str
    name: str
    prefix: int | None
    explode: bool

    @property
    def spec(self) -> str:
        """The varspec as written in the template."""
        if self.prefix is not None:
            return f"{self.name}:{self.prefix}"
        return self.name + ("*" if self.explode else "")


@dataclass(frozen=True)
class Generated:
    """A generated template text and its variables."""

    text: str
    variables: tuple[Var, ...]


# Names that are prefixes of one another test that named parameters cannot be confused.
NAMES = ("a", "ab", "a.b", "a_", "a%41", "B", "id", "x", "x.y.z", "_9", "%C3%A9", "q", "uri", "v")


# Strategies are built once here: building them inside every draw costs more than the test.
LITERAL_CHARS = st.one_of(
    st.sampled_from(LITERAL_ASCII), st.sampled_from(["/", "%2F", "%41", "%e9"])
)
LITERALS = {
    True: st.lists(LITERAL_CHARS, max_size=3).map("".join),
    False: st.lists(
        st.one_of(LITERAL_CHARS, st.characters(min_codepoint=0xA0, max_codepoint=0xD7FF)),
        max_size=3,
    ).map("".join),
}
MODIFIERS = st.sampled_from(["none", "none", "prefix", "explode"])
PREFIXES = st.one_of(st.integers(1, 12), st.just(9999))
EXPRESSION_SIZES = st.integers(1, 3)
EXPRESSION_COUNTS = st.integers(1, 4)
OPERATOR_CHOICES = st.sampled_from(OPERATORS)
NAME_ORDERS = st.permutations(NAMES)


@st.composite
def generated_texts(draw: st.DrawFn, *, ascii_only: bool) -> Generated:
    """A syntactically valid template of literals and 1-4 expressions of any operator.

    Literals may be empty, mix ASCII, %XX escapes and (unless `ascii_only`) non-ASCII; every
    variable has no modifier, a prefix or the explode modifier.
    """
    pool = list(draw(NAME_ORDERS))
    text: list[str] = []
    variables: list[Var] = []
    for _ in range(draw(EXPRESSION_COUNTS)):
        operator = draw(OPERATOR_CHOICES)
        expression: list[Var] = []
        for _ in range(draw(EXPRESSION_SIZES)):
            modifier = draw(MODIFIERS)
            prefix = draw(PREFIXES) if modifier == "prefix" else None
            expression.append(Var(operator, pool.pop(), prefix, explode=modifier == "explode"))
        text.append(draw(LITERALS[ascii_only]))
        text.append("{" + operator + ",".join(var.spec for var in expression) + "}")
        variables.extend(expression)
    text.append(draw(LITERALS[ascii_only]))
    return Generated("".join(text), tuple(variables))


@st.composite
def templates(draw: st.DrawFn, *, ascii_only: bool = False) -> tuple[UriTemplate, Generated]:
    """A generated template that `parse` accepts."""
    generated = draw(generated_texts(ascii_only=ascii_only))
    template = parse_or_none(generated.text)
    assume(template is not None)
    assert template is not None
    return template, generated


def parse_or_none(text: str) -> UriTemplate | None:
    """The template, or None where `parse` rejects it."""
    try:
        return UriTemplate.parse(text)
    except InvalidUriTemplateError:
        return None


# Characters that matter to URIs, escapes (valid, invalid UTF-8, malformed) and any other text.
value_pieces = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(list("%/?#&=;,.+ :@!$'()*[]~-_")),
    st.sampled_from(
        ["%41", "%2F", "%C3%A9", "%e2%82%ac", "%FF", "%", "%4", "\u00e9", "\U0001f600"]
    ),
)
strings = st.lists(value_pieces, max_size=6).map("".join)
reserved_strings = strings.filter(lambda v: not TRIPLET.search(v))
VALUE_KINDS = {
    (explode, query): st.sampled_from(
        ["string", *(["list"] if explode else []), *(["absent"] if query else [])]
    )
    for explode in (False, True)
    for query in (False, True)
}
VALUE_LISTS = {
    True: st.lists(strings, max_size=3),
    False: st.lists(strings, min_size=1, max_size=3),
}


@st.composite
def values_for(draw: st.DrawFn, variables: Sequence[Var]) -> Values:
    """Values for `variables`: query parameters may be absent, exploded ones may be lists."""
    values: Values = {}
    for var in variables:
        query = var.operator in QUERY_OPERATORS
        kind = draw(VALUE_KINDS[var.explode, query])
        if kind == "string":
            values[var.name] = draw(strings)
        elif kind == "list":
            values[var.name] = draw(VALUE_LISTS[query])
    return values


def expected_match(variables: Sequence[Var], values: Values) -> dict[str, str] | None:
    """What `match(expand(values))` must give, per the RFC and the module's documented rules."""
    expected: dict[str, str] = {}
    for var in variables:
        value = values.get(var.name)
        if value is None or value == []:
            continue  # undefined: only a query parameter may be, and it is left out
        items = [value[: var.prefix]] if isinstance(value, str) else value
        if var.operator in RESERVED_OPERATORS:
            # Reserved expansion passes %XX escapes through, so they come back decoded.
            try:
                items = [unquote(item, errors="strict") for item in items]
            except UnicodeDecodeError:
                return None
        expected[var.name] = ",".join(items)
    return expected


def oracle_values(variables: Sequence[Var]) -> st.SearchStrategy[dict[str, str]]:
    """String values, some absent, without the %XX escapes `uritemplate` treats differently.

    For `+`/`#` values holding an escape, `uritemplate` leaves the whole value unencoded, where
    the RFC escapes everything but the escapes; `test_undefined_empty_and_encoding_rules` and
    the round trip cover that case instead.
    """
    return st.fixed_dictionaries(
        {},
        optional={
            var.name: reserved_strings if var.operator in RESERVED_OPERATORS else strings
            for var in variables
        },
    )


def oracle_expand(text: str, values: Mapping[str, str]) -> str:
    """Expand with the `uritemplate` package."""
    arguments: dict[str, VariableValue] = dict(values)
    return uritemplate.URITemplate(text).expand(arguments)


# Templates to rank: hand-picked ones with ties on every criterion, and generated ones.
ranked_templates = st.one_of(
    st.sampled_from(
        [
            UriTemplate.parse(text)
            for text in (
                "test://template/{id}/data",
                "test://template/{id}/{rest}",
                "test://{+path}",
                "test://{id}",
                "test://{#id}",
                "test://{id}{?q}",
                "test://{id}{/q}",
                "test://a{id}",
                "test://%41{id}",
                "test://b{id}",
            )
        ]
    ),
    generated_texts(ascii_only=False).map(lambda g: parse_or_none(g.text)).filter(bool),
)


# --- tests ---------------------------------------------------------------------------------------


class TestParse:
    """`UriTemplate.parse`: what it accepts, what it rejects and why."""

    @pytest.mark.parametrize(
        ("text", "fragments"),
        [
            ("", ["the template is empty"]),
            ("x://{a", ["opened at position 4 is never closed", "add the missing '}'"]),
            ("x://}{a}", ["'}' at position 4 closes no expression"]),
            ("x://{a}}", ["'}' at position 7 closes no expression"]),
            ("x://{a{b}}", ["'{' at position 6", "opened at position 4", "do not nest"]),
            ("x://{}", ["empty expression '{}' at position 4", "e.g. '{id}'"]),
            ("x://{a-b}", ["invalid variable name 'a-b' at position 5", "letters, digits"]),
            ("x://{a..b}", ["invalid variable name 'a..b' at position 5"]),
            ("x://{.a.}", ["invalid variable name 'a.' at position 6"]),
            ("x://{a,}", ["a variable name is missing at position 7"]),
            ("x://{ a}", ["invalid variable name ' a' at position 5"]),
            ("x://{=a}", ["'=' at position 5", "reserved by RFC 6570", "one of the operators"]),
            ("x://{,a}", ["',' at position 5", "reserved by RFC 6570"]),
            ("x://{!a}", ["'!' at position 5", "reserved by RFC 6570"]),
            ("x://{@a}", ["'@' at position 5", "reserved by RFC 6570"]),
            ("x://{|a}", ["'|' at position 5", "reserved by RFC 6570"]),
            ("x://{$a}", ["'$' at position 5", "is not an operator", "one of the operators"]),
            ("x://{a:0}", ["prefix length '0' at position 7", "from 1 to 9999"]),
            ("x://{a:10000}", ["prefix length '10000' at position 7", "from 1 to 9999"]),
            ("x://{a:01}", ["prefix length '01'", "leading zeros"]),
            ("x://{a:x}", ["prefix length 'x'", "e.g. {a:3}"]),
            ("x://{a:}", ["prefix length ''"]),
            ("x://{a:3*}", ["has both a prefix and '*'", "use either {a:3} or {a*}"]),
            ("x://a b/{c}", ["character ' ' at position 5", "percent-encode it as '%20'"]),
            ("x://it's/{c}", ['character "\'" at position 6', "'%27'"]),
            ("x://100%/{c}", ["'%' at position 7 does not start a %XX escape", "'%25'"]),
            (
                "file:///docs/readme",
                ["no expression", "needs at least one {variable}", "use a plain Resource"],
            ),
            ("x://{a}/{b}/{a}", ["variable 'a' appears twice (positions 5 and 13)", "rename"]),
            ("x://{a}{?a}", ["variable 'a' appears twice"]),
        ],
    )
    def test_rejects_malformed_templates(self, text: str, fragments: list[str]) -> None:
        """Each malformed template is rejected, quoting it, with the position and a fix."""
        with pytest.raises(InvalidUriTemplateError) as caught:
            UriTemplate.parse(text)
        assert caught.value.template == text
        message = str(caught.value)
        assert message.startswith(f"invalid URI template {text!r}: ")
        for fragment in fragments:
            assert fragment in message

    @pytest.mark.parametrize(
        ("text", "fragments"),
        [
            (
                "x://{a}{b}",
                ["'{a}' at position 4 and '{b}' at position 7", "the URI 'x://x' reads both"],
            ),
            ("x://{+a}{b}", ["'{+a}' at position 4 and '{b}' at position 8", "{+...} value"]),
            ("x://{+a}{/b*}", ["'{+a}' at position 4 and '{/b*}' at position 8"]),
            ("x://{#a}{?b}", ["'{#a}' at position 4", "{#...} value"]),
            ("x://{+path}{?q}", ["'{+path}' at position 4 and '{?q}' at position 11"]),
            ("x://{+a,b}", ["'{+a,b}' at position 4", "single variable"]),
            ("x://{#a,b}/c", ["'{#a,b}' at position 4"]),
            ("x://{a}{.b}", ["'{a}' at position 4 and '{.b}' at position 7", "{/b}"]),
            ("x://{a}.{b}", ["'{a}' at position 4 and '{b}' at position 8", "never escaped"]),
            ("x://{a}-{b}", ["'{a}' at position 4 and '{b}' at position 8"]),
            ("x://{.a,b}", ["'{.a,b}' at position 4"]),
            ("x://{/a*}{/b*}", ["'{/a*}' at position 4 and '{/b*}' at position 9"]),
            ("x://{a:3}{b:3}", ["'{a:3}' at position 4 and '{b:3}' at position 9"]),
            ("x://{.list*}", ["the items of '{.list*}' at position 4 cannot be told apart"]),
            ("x://{?a}{+b}", ["'{?a}' at position 4 and '{+b}' at position 8"]),
        ],
    )
    def test_rejects_ambiguous_templates(self, text: str, fragments: list[str]) -> None:
        """A template some URI matches in two ways is rejected with an example URI and a fix."""
        with pytest.raises(InvalidUriTemplateError) as caught:
            UriTemplate.parse(text)
        assert caught.value.template == text
        message = str(caught.value)
        assert message.startswith(f"invalid URI template {text!r}: ")
        assert "reads both as" in message
        for fragment in fragments:
            assert fragment in message

    def test_the_ambiguity_message_shows_both_readings(self) -> None:
        """The message spells out the two readings of its example URI."""
        with pytest.raises(InvalidUriTemplateError, match="more than one way") as caught:
            UriTemplate.parse("x://{a}{b}")
        assert "a='x', b=''" in str(caught.value)
        assert "a='', b='x'" in str(caught.value)

    @pytest.mark.parametrize(
        "text",
        [
            "x://{a}{/b}",
            "x://{/a}{?b}",
            "x://{a}{;b}",
            "x://{a}{#b}",
            "x://{a}{?b}{&c}",
            "x://{?a}{&b}",
            "x://{?a}{?b}",
            "x://{/a*,b}",
            "x://{/a,b*}",
            "x://{a}.json",
            "x://{+path}",
            "x://{+path}/here",
            "x://{+a}/{b}/{c}",
            "x://{+a}{/b}",
            "x://{#frag}",
            "x://{x,y}",
            "x://{;x,y,z}",
            "x://{?a*,b*}",
            "x://%E2%82%AC/{a}",
            "x://caf\u00e9/{a}",
        ],
    )
    def test_accepts_matchable_templates(self, text: str) -> None:
        """Expressions whose own delimiter separates them from what precedes them are fine."""
        assert UriTemplate.parse(text).text == text

    def test_rejection_is_an_invalid_element_value_error(self) -> None:
        """The error slots into the package's tree and still is a ValueError."""
        with pytest.raises(ValueError, match="no expression") as caught:
            UriTemplate.parse("x://fixed")
        assert isinstance(caught.value, InvalidElementError)
        assert isinstance(caught.value, InvalidUriTemplateError)
        assert caught.value.field == "uri_template"

    def test_variables_are_listed_in_order_of_appearance(self) -> None:
        """`variables` lists every name once, in template order."""
        template = UriTemplate.parse("x://{b}{/a}{?d,c*}{#e}")
        assert template.variables == ("b", "a", "d", "c", "e")

    def test_templates_are_immutable_hashable_values(self) -> None:
        """Equality and hashing go by text; attributes cannot be changed."""
        first, second = UriTemplate.parse("x://{a}"), UriTemplate.parse("x://{a}")
        assert first == second
        assert hash(first) == hash(second)
        assert len({first, second, UriTemplate.parse("x://{b}")}) == 2
        assert first != UriTemplate.parse("x://{b}")
        with pytest.raises(dataclasses.FrozenInstanceError):
            first.text = "x://{b}"  # type: ignore[misc]  # the point: it is read-only
        assert repr(first) == "UriTemplate(text='x://{a}', variables=('a',))"

    def test_constructor_parses_like_parse(self) -> None:
        """Building one directly validates just as `parse` does."""
        assert UriTemplate("x://{a}") == UriTemplate.parse("x://{a}")
        with pytest.raises(InvalidUriTemplateError):
            UriTemplate("x://{a}{b}")

    @pytest.mark.parametrize(("text", "expansion"), RFC_EXAMPLES)
    def test_rfc_examples_parse_unless_unmatchable(self, text: str, expansion: str) -> None:
        """RFC examples parse, but those some URI would match in two ways, or that repeat a name."""
        if text not in RFC_UNMATCHABLE:
            assert UriTemplate.parse(text).expand(RFC_VALUES) == expansion
            return
        with pytest.raises(InvalidUriTemplateError) as caught:
            UriTemplate.parse(text)
        assert re.search("more than one way|cannot be told apart|appears twice", str(caught.value))

    @given(generated_texts(ascii_only=False))
    @settings(deadline=None)
    def test_parse_accepts_or_rejects_cleanly(self, generated: Generated) -> None:
        """Any syntactically valid template is either accepted or rejected with the error."""
        template = parse_or_none(generated.text)
        if template is not None:
            assert template.variables == tuple(var.name for var in generated.variables)
            return
        # Generated templates are well-formed, so only the matchability rules can reject them.
        with pytest.raises(
            InvalidUriTemplateError, match=r"more than one way|cannot be told apart|twice"
        ) as caught:
            UriTemplate.parse(generated.text)
        assert caught.value.template == generated.text


class TestMatch:
    """`UriTemplate.match`: reading variables back out of URIs."""

    @given(st.data())
    @settings(deadline=None, max_examples=300)
    def test_match_inverts_expand(self, data: st.DataObject) -> None:
        """For any accepted template and any values, `match(expand(values))` gives them back."""
        template, generated = data.draw(templates())
        values = data.draw(values_for(generated.variables))
        uri = template.expand(values)
        assert template.match(uri) == expected_match(generated.variables, values)

    @pytest.mark.parametrize(("text", "expected"), RFC_MATCHES.items())
    def test_rfc_examples_match_back(self, text: str, expected: dict[str, str] | None) -> None:
        """Each accepted RFC example's expansion reads back as documented."""
        expansion = dict(RFC_EXAMPLES)[text]
        assert UriTemplate.parse(text).match(expansion) == expected

    def test_rfc_match_table_covers_every_accepted_example(self) -> None:
        """The table above leaves no accepted RFC example out."""
        assert set(RFC_MATCHES) == {t for t, _ in RFC_EXAMPLES} - RFC_UNMATCHABLE

    def test_specificity_examples_match(self) -> None:
        """The MCP-style templates match what they should and nothing else."""
        data = UriTemplate.parse("test://template/{id}/data")
        rest = UriTemplate.parse("test://template/{id}/{rest}")
        path = UriTemplate.parse("test://{+path}")
        assert data.match("test://template/42/data") == {"id": "42"}
        assert data.match("test://template/42/other") is None
        assert data.match("test://template/4/2/data") is None
        assert rest.match("test://template/42/other") == {"id": "42", "rest": "other"}
        assert rest.match("test://template/42/a/b") is None
        assert path.match("test://template/42/a/b") == {"path": "template/42/a/b"}

    @pytest.mark.parametrize(
        ("uri", "expected"),
        [
            ("x://items/7", {"id": "7"}),
            ("x://items/7/", None),
            ("x://items/", {"id": ""}),
            ("x://items", None),
            ("y://items/7", None),
            ("x://items/7?extra=1", None),
            ("x://items/a%2Fb", {"id": "a/b"}),
            ("x://items/caf%C3%A9", {"id": "caf\u00e9"}),
            ("x://items/caf%c3%a9", {"id": "caf\u00e9"}),
            ("x://items/caf\u00e9", None),
            ("x://items/%FF", None),
            ("x://items/%C3", None),
            ("x://items/a b", None),
            ("x://items/a,b", None),
            ("x://items/%zz", None),
        ],
    )
    def test_simple_values(self, uri: str, expected: dict[str, str] | None) -> None:
        """The whole URI must match; simple values are unreserved or escaped, decoded as UTF-8."""
        assert UriTemplate.parse("x://items/{id}").match(uri) == expected

    @pytest.mark.parametrize(
        ("uri", "expected"),
        [
            ("x:///a/b/c.txt", {"path": "a/b/c.txt"}),
            ("x:///a?b#c,d;e=f", {"path": "a?b#c,d;e=f"}),
            ("x:///a%20b%2Fc", {"path": "a b/c"}),
            ("x:///", {"path": ""}),
            ("x:///a b", None),
        ],
    )
    def test_reserved_values(self, uri: str, expected: dict[str, str] | None) -> None:
        """A `+` value may hold reserved characters too."""
        assert UriTemplate.parse("x:///{+path}").match(uri) == expected

    @pytest.mark.parametrize(
        ("uri", "expected"),
        [
            ("x://items", {}),
            ("x://items?limit=5", {"limit": "5"}),
            ("x://items?offset=2", {"offset": "2"}),
            ("x://items?limit=5&offset=2", {"limit": "5", "offset": "2"}),
            ("x://items?offset=2&limit=5", None),
            ("x://items?limit=", {"limit": ""}),
            ("x://items?limit", {"limit": ""}),
            ("x://items?limit=1&limit=2", None),
            ("x://items&limit=5", None),
            ("x://items?other=1", None),
            ("x://items?limit=a%26b", {"limit": "a&b"}),
            ("x://items?limit=a&b", None),
        ],
    )
    def test_query_parameters(self, uri: str, expected: dict[str, str] | None) -> None:
        """Query parameters are optional, in template order; absent ones are left out."""
        assert UriTemplate.parse("x://items{?limit,offset}").match(uri) == expected

    def test_query_continuation(self) -> None:
        """`{&x}` continues a query, its parameters optional too."""
        template = UriTemplate.parse("x://s?fixed=1{&page,size}")
        assert template.match("x://s?fixed=1") == {}
        assert template.match("x://s?fixed=1&size=9") == {"size": "9"}
        assert template.match("x://s?fixed=1&page=2&size=9") == {"page": "2", "size": "9"}

    def test_path_style_parameters(self) -> None:
        """`;x` without a value reads as the empty string; `;` parameters are all required."""
        template = UriTemplate.parse("x://m{;x,y}")
        assert template.match("x://m;x;y=1") == {"x": "", "y": "1"}
        assert template.match("x://m;x=;y=") == {"x": "", "y": ""}
        assert template.match("x://m;y=1") is None

    @pytest.mark.parametrize(
        ("uri", "expected"),
        [
            ("x://abc", {"a": "abc"}),
            ("x://ab", {"a": "ab"}),
            ("x://abcd", None),
            ("x://%C3%A9%C3%A9%C3%A9", {"a": "\u00e9\u00e9\u00e9"}),
            ("x://%C3%A9%C3%A9%C3%A9%C3%A9", None),
            ("x://%25%25%25", {"a": "%%%"}),
        ],
    )
    def test_prefix_counts_decoded_characters(
        self, uri: str, expected: dict[str, str] | None
    ) -> None:
        """`{a:3}` matches at most three characters, counted after decoding."""
        assert UriTemplate.parse("x://{a:3}").match(uri) == expected

    @pytest.mark.parametrize(
        ("text", "uri", "expected"),
        [
            ("x://f{/path*}", "x://f/a/b%2Cc/", {"path": "a,b,c,"}),
            ("x://f{/path*}", "x://f/a", {"path": "a"}),
            ("x://f{/path*}", "x://f", None),
            ("x://f/{list*}", "x://f/a,b%20c", {"list": "a,b c"}),
            ("x://f{;list*}", "x://f;list=a;list;list=c", {"list": "a,,c"}),
            ("x://f{;list*}", "x://f;list=a;other=b", None),
            ("x://f{?list*}", "x://f?list=a&list=b", {"list": "a,b"}),
            ("x://f{?list*}", "x://f", {}),
            ("x://f{?list*,n}", "x://f?list=a&list=b&n=1", {"list": "a,b", "n": "1"}),
            ("x://f{?list*,n}", "x://f?n=1", {"n": "1"}),
            ("x://f/{+list*}", "x://f/a/b,c", {"list": "a/b,c"}),
            ("x://f{/list*,last}", "x://f/a/b/c", {"list": "a,b", "last": "c"}),
        ],
    )
    def test_exploded_lists_join_items_with_commas(
        self, text: str, uri: str, expected: dict[str, str] | None
    ) -> None:
        """An exploded variable yields its decoded items joined with ','."""
        assert UriTemplate.parse(text).match(uri) == expected

    def test_escapes_in_literals_match_either_case(self) -> None:
        """A literal escape matches in either case; non-ASCII literals match their escapes."""
        assert UriTemplate.parse("x://a%2Fb/{c}").match("x://a%2fb/1") == {"c": "1"}
        assert UriTemplate.parse("x://caf\u00e9/{c}").match("x://caf%C3%A9/1") == {"c": "1"}

    def test_a_variable_named_uri_is_like_any_other(self) -> None:
        """`uri` is an ordinary variable name."""
        template = UriTemplate.parse("res://{uri}{?uri.x}")
        assert template.variables == ("uri", "uri.x")
        assert template.expand({"uri": "a b", "uri.x": "1"}) == "res://a%20b?uri.x=1"
        assert template.match("res://a%20b?uri.x=1") == {"uri": "a b", "uri.x": "1"}
        assert template.match("res://a") == {"uri": "a"}


class TestExpand:
    """`UriTemplate.expand`: RFC 6570 expansion."""

    @pytest.mark.parametrize(("text", "expansion"), RFC_EXAMPLES)
    def test_rfc_examples(self, text: str, expansion: str) -> None:
        """The full grammar expands every RFC example (matchable or not) as the RFC says."""
        assert _expand_rfc6570(text, RFC_VALUES) == expansion

    @given(st.data())
    @settings(deadline=None, max_examples=300)
    def test_agrees_with_uritemplate(self, data: st.DataObject) -> None:
        """Expansion equals the `uritemplate` package's for accepted templates and string values."""
        template, generated = data.draw(templates(ascii_only=True))
        values = data.draw(oracle_values(generated.variables))
        assert template.expand(values) == oracle_expand(generated.text, values)

    @given(generated_texts(ascii_only=True), st.data())
    @settings(deadline=None)
    def test_full_grammar_agrees_with_uritemplate(
        self, generated: Generated, data: st.DataObject
    ) -> None:
        """The same holds for templates `parse` rejects as unmatchable."""
        values = data.draw(oracle_values(generated.variables))
        assert _expand_rfc6570(generated.text, values) == oracle_expand(generated.text, values)

    @pytest.mark.parametrize(
        ("text", "values", "expansion"),
        [
            ("x://{a}", {}, "x://"),
            ("x://{/a}", {}, "x://"),
            ("x://{/a}", {"a": ""}, "x:///"),
            ("x://{/a*}", {"a": []}, "x://"),
            ("x://{/a*}", {"a": [""]}, "x:///"),
            ("x://{?a,b}", {"b": ""}, "x://?b="),
            ("x://{;a,b}", {"a": "", "b": "1"}, "x://;a;b=1"),
            ("x://{?a*}", {"a": ["", "1"]}, "x://?a=&a=1"),
            ("x://{;a*}", {"a": ["", "1"]}, "x://;a;a=1"),
            ("x://{a:2}", {"a": "\u00e9\u00e9\u00e9"}, "x://%C3%A9%C3%A9"),
            ("x://{+a}", {"a": "%41%zz \u00e9/"}, "x://%41%25zz%20%C3%A9/"),
            ("x://{a}", {"a": "%41"}, "x://%2541"),
            ("x://caf\u00e9/{a}", {"a": "1"}, "x://caf%C3%A9/1"),
            ("x://%7e/{a}", {"a": "1"}, "x://%7e/1"),
        ],
    )
    def test_undefined_empty_and_encoding_rules(
        self, text: str, values: Mapping[str, str | Sequence[str]], expansion: str
    ) -> None:
        """Undefined values vanish, empty ones keep their delimiter; encoding is per operator."""
        assert UriTemplate.parse(text).expand(values) == expansion

    def test_rejects_values_that_are_not_strings_or_lists(self) -> None:
        """A mapping or a number is not a value; list items must be strings."""
        template = UriTemplate.parse("x://{a*}")
        with pytest.raises(TypeError, match="value of 'a' must be a string"):
            template.expand({"a": {"k": "v"}})  # type: ignore[dict-item]  # the point
        with pytest.raises(TypeError, match="items of 'a' must be strings"):
            template.expand({"a": [1]})  # type: ignore[list-item]  # the point

    def test_rejects_a_list_for_a_prefix(self) -> None:
        """RFC 6570 defines no prefix of a list."""
        with pytest.raises(ValueError, match="defines no prefix of a list"):
            UriTemplate.parse("x://{a:2}").expand({"a": ["x"]})


class TestSpecificity:
    """`specificity` and `most_specific_first`: the order templates are tried in."""

    MCP_EXAMPLE = (
        UriTemplate.parse("test://template/{id}/data"),
        UriTemplate.parse("test://template/{id}/{rest}"),
        UriTemplate.parse("test://{+path}"),
    )

    def test_more_literal_text_is_more_specific(self) -> None:
        """The fixed `/data` beats a second variable, which beats a catch-all path."""
        data, rest, path = self.MCP_EXAMPLE
        assert most_specific_first([path, rest, data]) == [data, rest, path]
        assert sorted([path, data, rest], key=lambda t: t.specificity, reverse=True) == [
            data,
            rest,
            path,
        ]

    @given(st.permutations(MCP_EXAMPLE))
    def test_order_does_not_depend_on_input_order(self, shuffled: list[UriTemplate]) -> None:
        """Any permutation of the input gives the same order."""
        assert most_specific_first(shuffled) == list(self.MCP_EXAMPLE)

    @pytest.mark.parametrize(
        ("better", "worse"),
        [
            ("t:///{x}", "t://{x}/{y}"),
            ("t://{x}", "t://{+x}"),
            ("t://{x}", "t://{#x}"),
            ("t://{x}{/q}", "t://{x}{?q}"),
            ("t://{x}{/q}", "t://{x}{&q}"),
            ("t://ab{x}", "t://%41{x}"),
            ("t://{x}/y", "t://{x}"),
        ],
    )
    def test_tie_breakers(self, better: str, worse: str) -> None:
        """Ties go to fewer variables, then fewer +/# and then fewer query expressions."""
        first, second = UriTemplate.parse(better), UriTemplate.parse(worse)
        assert first.specificity > second.specificity
        assert most_specific_first([second, first]) == [first, second]

    def test_an_escape_counts_as_one_literal_character(self) -> None:
        """`%41` is one character of the URI, so it ties with `a` and text decides."""
        escaped, plain = UriTemplate.parse("t://%41{x}"), UriTemplate.parse("t://a{x}")
        assert escaped.specificity == plain.specificity
        assert most_specific_first([plain, escaped]) == [escaped, plain]

    @given(
        st.lists(ranked_templates, max_size=8).flatmap(
            lambda t: st.tuples(st.just(t), st.permutations(t))
        )
    )
    @settings(deadline=None)
    def test_order_is_a_deterministic_sort(
        self, lists: tuple[list[UriTemplate], list[UriTemplate]]
    ) -> None:
        """The result is the input sorted by specificity, then text, whatever the input order."""
        items, shuffled = lists
        ordered = most_specific_first(items)
        assert sorted(ordered, key=id) == sorted(items, key=id)
        keys = [(tuple(-k for k in t.specificity), t.text) for t in ordered]
        assert keys == sorted(keys)
        assert most_specific_first(shuffled) == ordered
