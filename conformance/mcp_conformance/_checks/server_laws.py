"""Server laws: a served registry at the wire, through the official client, in both eras.

The target's factory builds a server over one kit source and the kit's visibility rule; the kit
connects ``mcp.Client`` to its ``.lowlevel`` in memory, once in the handshake era (2025-11-25,
``mode="legacy"``) and once in the per-request era (2026-07-28), and checks what a client sees.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, final

import anyio
import anyio.lowlevel
import mcp_types as types
from hypothesis import strategies as st
from mcp import Client

from mcp_conformance._contract import LawViolation
from mcp_conformance._handlers import completed, template_text
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._universe import (
    ALL_SLOTS,
    ContentItem,
    Slot,
    Vocabulary,
    collection,
    features,
    listed_matches,
    vocabularies,
)
from mcp_conformance._wire import ERAS, LISTS, Answer, Era, Served, ask, connect, walk
from mcp_conformance.strategies import element_kinds
from mcp_core.elements import (
    SINGLE_KINDS,
    Element,
    ElementCollection,
    ElementKind,
    ElementRef,
    UriTemplate,
    most_specific_first,
)

# -- what the kit serves -----------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class ServerCase:
    """One generated server: its keys, content, hidden slots, declared kinds and page size.

    ``narrowed`` pairs templates with concrete URIs they may not answer (the rule's per-URI
    decision); ``fresh`` is the content a change replaces it with (``server.list-changed``).
    """

    words: Vocabulary
    content: tuple[ContentItem, ...]
    hidden: frozenset[Slot]
    declared: ElementKind
    page_size: int
    fresh: tuple[ContentItem, ...]
    narrowed: frozenset[tuple[Slot, str]] = frozenset()


@st.composite
def _contents(draw: st.DrawFn) -> tuple[ContentItem, ...]:
    chosen = draw(st.lists(st.sampled_from(ALL_SLOTS), max_size=8, unique=True))
    return tuple((slot, False, draw(features(slot[0]))) for slot in chosen)


@st.composite
def _cases(draw: st.DrawFn, *, hiding: bool) -> ServerCase:
    # Half the time every slot is filled, over overlapping templates and resource URIs they
    # match, with about half the elements hidden: hidden elements then shadow visible ones in
    # resolution (a hidden specific template over a visible general one, a hidden resource at a
    # URI a visible template matches), which is where "hidden answers like missing" breaks.
    crowded = draw(st.booleans())
    words = draw(vocabularies(overlapping=crowded))
    content = (
        tuple((slot, False, draw(features(slot[0]))) for slot in ALL_SLOTS)
        if crowded
        else draw(_contents())
    )
    slots = [slot for slot, _, _ in content]
    hidden: frozenset[Slot] = frozenset()
    if hiding and slots:
        hidden = frozenset(slot for slot in slots if draw(st.booleans())) or frozenset(
            {draw(st.sampled_from(slots))}
        )
    kinds = ElementKind.NONE
    for slot in slots:
        kinds |= slot[0]
    return ServerCase(
        words=words,
        content=content,
        hidden=hidden,
        # Sources may declare more than they hold (honest over-advertising).
        declared=kinds | draw(element_kinds()),
        # From 1 to one more than a list can hold (three elements of a kind): every page size
        # from a page per element to a single short page.
        page_size=draw(st.integers(min_value=1, max_value=len(ALL_SLOTS) // 4 + 1)),
        fresh=draw(_contents()),
        narrowed=draw(_narrowings(words, slots)) if hiding else frozenset(),
    )


def _narrowings(
    words: Vocabulary, slots: list[Slot]
) -> st.SearchStrategy[frozenset[tuple[Slot, str]]]:
    """Up to two (template, URI it matches) pairs the rule refuses at that URI.

    Never a template's own text (a completion naming a template by its text is a list-time
    decision, not one of a concrete URI).
    """
    texts = set(words.resource_templates)
    pairs = sorted(
        (slot, uri)
        for slot in slots
        if slot[0] is ElementKind.RESOURCE_TEMPLATE
        for uri in words.probe_uris()
        if uri not in texts and UriTemplate.parse(words.key(slot)).match(uri) is not None
    )
    if not pairs:
        return st.just(frozenset())
    return st.frozensets(st.sampled_from(pairs), max_size=2)


def _serve(kit: Kit, case: ServerCase, *, hide: bool = True) -> Served:
    return Served(
        kit,
        case.words,
        case.content,
        declared=case.declared,
        hidden=case.hidden if hide else frozenset(),
        narrowed=case.narrowed if hide else frozenset(),
        page_size=case.page_size,
    )


def _given(kit: Kit, body: Any, *, name: str, hiding: bool = False) -> None:
    kit.given(_cases(hiding=hiding), body, name=name, max_examples=kit.profile.server_examples)


_UNKNOWN: Final = "kit-unknown"


# -- server.capabilities ---------------------------------------------------------------------------

_ADVERTISED: Final = (
    ("tools", ElementKind.TOOL),
    ("resources", ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE),
    ("prompts", ElementKind.PROMPT),
)


@checks("server.capabilities")
def test_server_capabilities(kit: Kit) -> None:
    """Tools, resources and prompts are advertised exactly for the kinds the registry may hold."""

    async def body(case: ServerCase) -> None:
        served = _serve(kit, case)
        for era in ERAS:
            async with connect(served, era) as client:
                capabilities = client.server_capabilities
            for name, kinds in _ADVERTISED:
                advertised = getattr(capabilities, name) is not None
                holds = bool(case.declared & kinds)
                if advertised != holds:
                    raise LawViolation(
                        f"in {era}, the server {'advertises' if advertised else 'does not advertise'}"
                        f" the {name} capability, but the registry's sources declare "
                        f"{case.declared.label or 'no kind'}"
                    )

    _given(kit, body, name="server_capabilities")


# -- server.pagination -------------------------------------------------------------------------


@checks("server.pagination")
def test_server_pagination(kit: Kit) -> None:
    """A walk yields every visible element once; walks repeat; cursors can be used again."""

    async def body(case: ServerCase) -> None:
        served = _serve(kit, case)
        expected = served.visible()
        for era in ERAS:
            async with connect(served, era) as client:
                for entry in LISTS:
                    want = expected[entry.kind]
                    limit = len(want) + 3
                    first = await walk(client, entry, limit=limit)
                    twice = sorted(key for key, n in Counter(first.keys).items() if n > 1)
                    if twice or set(first.keys) != want:
                        raise LawViolation(
                            f"in {era}, walking {entry.method} with page size {case.page_size} "
                            f"gave {list(first.keys)}; expected each of {sorted(want)} once "
                            f"(repeated: {twice or 'none'}, missing: "
                            f"{sorted(want - set(first.keys)) or 'none'}, unexpected: "
                            f"{sorted(set(first.keys) - want) or 'none'})"
                        )
                    again = await walk(client, entry, limit=limit)
                    if again.pages != first.pages:
                        raise LawViolation(
                            f"in {era}, walking {entry.method} twice gave different pages: "
                            f"{_first_difference(first.pages, again.pages)}"
                        )
                    for number, cursor in enumerate(first.cursors[1:], start=2):
                        page = await ask(
                            client,
                            entry.request(params=types.PaginatedRequestParams(cursor=cursor)),
                            entry.method,
                        )
                        if page != first.pages[number - 1]:
                            raise LawViolation(
                                f"in {era}, {entry.method} with the cursor of page {number} used "
                                f"again answered {page}, first {first.pages[number - 1]}"
                            )

    _given(kit, body, name="server_pagination", hiding=True)


def _first_difference(first: tuple[Answer, ...], second: tuple[Answer, ...]) -> str:
    for number, (a, b) in enumerate(zip(first, second, strict=False), start=1):
        if a != b:
            return f"page {number}: {a} then {b}"
    return f"{len(first)} pages, then {len(second)}"


# -- server.visibility-agrees ----------------------------------------------------------------------


def _probes(case: ServerCase, era: Era) -> list[tuple[str, Any, str | None]]:
    """Every request that names an element: (what, request, the URI it names or None)."""
    words = case.words
    content = collection(words, case.content, "source 0 v0")
    probes: list[tuple[str, Any, str | None]] = []
    for name in words.tools:
        call = types.CallToolRequestParams(name=name, arguments={})
        probes.append((f"tools/call {name!r}", types.CallToolRequest(params=call), None))
    for name in words.prompts:
        get = types.GetPromptRequestParams(name=name, arguments={})
        probes.append((f"prompts/get {name!r}", types.GetPromptRequest(params=get), None))
        argument = _first_argument(content, ElementKind.PROMPT, name)
        probes.append(
            (
                f"completion/complete prompt {name!r}",
                _complete(types.PromptReference(type="ref/prompt", name=name), argument),
                None,
            )
        )
    for uri in words.probe_uris():
        params_read = types.ReadResourceRequestParams(uri=uri)
        read = types.ReadResourceRequest(params=params_read)
        probes.append((f"resources/read {uri!r}", read, uri))
        if era == "2025-11-25":
            params_sub = types.SubscribeRequestParams(uri=uri)
            probes.append(
                (f"resources/subscribe {uri!r}", types.SubscribeRequest(params=params_sub), uri)
            )
    for template in (*words.resource_templates, *words.probe_uris()):
        variable = _template_variable(words, template)
        ref = types.ResourceTemplateReference(type="ref/resource", uri=template)
        what = f"completion/complete resource {template!r}"
        probes.append((what, _complete(ref, variable), template))
    return probes


def _first_argument(content: ElementCollection, kind: ElementKind, key: str) -> str:
    for element in content:
        if element.kind is kind and element.ref.key == key:
            for argument in getattr(element.definition, "arguments", None) or ():
                return str(argument.name)
    return "x"


def _template_variable(words: Vocabulary, uri: str) -> str:
    for template in words.resource_templates:
        parsed = UriTemplate.parse(template)
        if template == uri or parsed.match(uri) is not None:
            return parsed.variables[0] if parsed.variables else "x"
    return "x"


def _complete(ref: Any, argument: str) -> Any:
    params = types.CompleteRequestParams(
        ref=ref, argument=types.CompletionArgument(name=argument, value="")
    )
    return types.CompleteRequest(params=params)


@final
class _Twins:
    """Servers without the hidden elements, and per URI without the templates refused there.

    Each is built once per example, from the target's factory, and connected once per era.
    """

    def __init__(self, kit: Kit, case: ServerCase) -> None:
        self.kit, self.case = kit, case
        self.served: dict[frozenset[Slot], Served] = {}

    def refused(self, uri: str | None) -> frozenset[Slot]:
        """The templates the rule refuses at ``uri`` (none for a request naming no URI)."""
        return frozenset(slot for slot, at in self.case.narrowed if at == uri)

    @asynccontextmanager
    async def truths(
        self, era: Era
    ) -> AsyncIterator[Callable[[frozenset[Slot]], Awaitable[Client]]]:
        """A function connecting (once) to the twin without ``refused`` as well, in ``era``."""
        async with AsyncExitStack() as stack:
            clients: dict[frozenset[Slot], Client] = {}

            async def truth(refused: frozenset[Slot]) -> Client:
                if refused not in self.served:
                    gone = self.case.hidden | refused
                    self.served[refused] = _serve(self.kit, _without(self.case, gone), hide=False)
                if refused not in clients:
                    served = self.served[refused]
                    clients[refused] = await stack.enter_async_context(connect(served, era))
                return clients[refused]

            yield truth


@checks("server.visibility-agrees")
def test_server_visibility_agrees(kit: Kit) -> None:
    """Hidden elements answer every method byte for byte like elements that do not exist.

    Per URI too: a template the rule refuses at a URI answers that URI as if it did not exist.
    """

    async def body(case: ServerCase) -> None:
        hiding = _serve(kit, case)
        twins = _Twins(kit, case)
        for era in ERAS:
            async with connect(hiding, era) as seen, twins.truths(era) as truth:
                lacking = await truth(frozenset())
                for entry in LISTS:
                    limit = len(case.content) + 3
                    hid, lacked = (
                        await walk(seen, entry, limit=limit),
                        await walk(lacking, entry, limit=limit),
                    )
                    if hid.pages != lacked.pages:
                        raise LawViolation(
                            f"in {era}, {entry.method} with {_hidden(case)} hidden differs from a "
                            f"server without them: {_first_difference(lacked.pages, hid.pages)}"
                        )
                for what, request, uri in _probes(case, era):
                    refused = twins.refused(uri)
                    hid_answer, lacked_answer = (
                        await ask(seen, request, what),
                        await ask(await truth(refused), request, what),
                    )
                    if hid_answer != lacked_answer:
                        also = f" and {_named(case, refused)} refused at {uri!r}" if refused else ""
                        raise LawViolation(
                            f"in {era}, {what} with {_hidden(case)} hidden{also} answered "
                            f"{hid_answer}, but a server without them answers {lacked_answer}"
                            + (_candidates_hint(hiding) if uri is not None else "")
                        )

    _given(kit, body, name="server_visibility_agrees", hiding=True)


def _without(case: ServerCase, gone: frozenset[Slot]) -> ServerCase:
    kept = tuple(item for item in case.content if item[0] not in gone)
    return ServerCase(case.words, kept, frozenset(), case.declared, case.page_size, case.fresh)


def _named(case: ServerCase, slots: frozenset[Slot]) -> str:
    return ", ".join(sorted(str(case.words.ref(slot)) for slot in slots)) or "nothing"


def _hidden(case: ServerCase) -> str:
    return _named(case, case.hidden)


def _candidates_hint(served: Served) -> str:
    """Why a URI may answer differently: a served registry without ``resource_candidates``."""
    registry = getattr(served.obj, "registry", None)
    if registry is None or callable(getattr(registry, "resource_candidates", None)):
        return ""
    return (
        f"\nhint: the served {type(registry).__qualname__} has no resource_candidates(uri) (the "
        "optional ResourceCandidates role), so a hidden winner cannot make way for a visible "
        "runner-up; implement it (law registry.candidates)"
    )


# -- server.answers ------------------------------------------------------------------------------

_Check: TypeAlias = Callable[[dict[str, Any]], str]
"""What an answer must be: a check returning what is wrong with it ("" when nothing is)."""


@checks("server.answers")
def test_server_answers(kit: Kit) -> None:
    """Each request naming an element answers what the element's handler makes of it.

    Nothing is hidden: a read answers the resource's contents at the URI asked (a template's at
    the URI it matched), a subscription ``{}``, a prompt its messages, a completion its
    provider's values for the argument and context sent (none without a provider, none for a
    fixed resource), all of them, with no more to come.
    """

    async def body(case: ServerCase) -> None:
        served = _serve(kit, case)
        for era in ERAS:
            async with connect(served, era) as client:
                for what, request, check in _answers(served.collection, case.words, era):
                    answer = json.loads(await ask(client, request, what))
                    problem = check(answer)
                    if problem:
                        raise LawViolation(
                            f"in {era}, {what} answered {json.dumps(answer, ensure_ascii=False)[:300]}"
                            f"; {problem}"
                        )

    _given(kit, body, name="server_answers")


def _answers(
    content: ElementCollection, words: Vocabulary, era: Era
) -> list[tuple[str, Any, _Check]]:
    """Every request naming an element of ``content`` (none hidden), with what it must answer."""
    asked: list[tuple[str, Any, _Check]] = []
    for prompt in content:
        if prompt.kind is not ElementKind.PROMPT:
            continue
        name = prompt.ref.key
        arguments = _argument_names(prompt)
        given = {argument: f"a{number}" for number, argument in enumerate(arguments)}
        get = types.GetPromptRequest(
            params=types.GetPromptRequestParams(name=name, arguments=given)
        )
        asked.append((f"prompts/get {name!r} {given}", get, _messages_of(str(given))))
        named: Any = types.PromptReference(type="ref/prompt", name=name)
        asked.extend(_completions(f"prompt {name!r}", named, prompt, arguments))
    templates = [element for element in content if element.kind is ElementKind.RESOURCE_TEMPLATE]
    for template in templates:
        # A completion may name a template by its own text.
        ref = types.ResourceTemplateReference(type="ref/resource", uri=template.ref.key)
        variables = tuple(UriTemplate.parse(template.ref.key).variables)
        asked.extend(_completions(f"resource {template.ref.key!r}", ref, template, variables))
    for uri in words.probe_uris():
        answering = _answering(content, templates, uri)
        if not answering:
            continue
        read = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
        texts = [_read_text(element, uri) for element in answering]
        asked.append((f"resources/read {uri!r}", read, _contents_of(uri, texts)))
        if era == "2025-11-25":
            subscribe = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
            asked.append((f"resources/subscribe {uri!r}", subscribe, _result_is({})))
        ref = types.ResourceTemplateReference(type="ref/resource", uri=uri)
        first = answering[0]
        variables = (
            tuple(UriTemplate.parse(first.ref.key).variables)
            if first.kind is ElementKind.RESOURCE_TEMPLATE
            else ("x",)
        )
        for variable in variables[:1] or ("x",):
            context = {other: "c" for other in variables if other != variable}
            expected = [_completion_of(element, variable, context) for element in answering]
            asked.append(
                (
                    f"completion/complete resource {uri!r} {variable!r} (context {context})",
                    _completion_request(ref, variable, context),
                    _completion_in(expected),
                )
            )
    return asked


def _argument_names(prompt: Element) -> tuple[str, ...]:
    return tuple(str(a.name) for a in getattr(prompt.definition, "arguments", None) or ())


def _answering(content: ElementCollection, templates: list[Element], uri: str) -> list[Element]:
    """What may answer ``uri``: its resource, else the most specific templates matching it."""
    exact = content.get(ElementRef(ElementKind.RESOURCE, uri))
    if exact is not None:
        return [exact]
    by_text = {template.ref.key: template for template in templates}
    matching = [
        parsed
        for parsed in most_specific_first(UriTemplate.parse(text) for text in by_text)
        if parsed.match(uri) is not None
    ]
    return [
        by_text[parsed.text] for parsed in matching if parsed.specificity == matching[0].specificity
    ]


def _completions(
    what: str, ref: Any, element: Element, arguments: tuple[str, ...]
) -> list[tuple[str, Any, _Check]]:
    """A completion of each argument, the others sent as its context."""
    found = []
    for argument in arguments:
        context = {other: "c" for other in arguments if other != argument}
        found.append(
            (
                f"completion/complete {what} {argument!r} (context {context})",
                _completion_request(ref, argument, context),
                _completion_in([_completion_of(element, argument, context)]),
            )
        )
    return found


_VALUE: Final = "v"
"""The partial value every completion sends."""


def _completion_request(ref: Any, argument: str, context: dict[str, str]) -> Any:
    params = types.CompleteRequestParams(
        ref=ref,
        argument=types.CompletionArgument(name=argument, value=_VALUE),
        context=types.CompletionContext(arguments=context) if context else None,
    )
    return types.CompleteRequest(params=params)


def _completion_of(element: Element, argument: str, context: dict[str, str]) -> list[str]:
    """The values a completion of ``argument`` must answer: the kit's provider's, if it has one."""
    if element.kind is ElementKind.RESOURCE or argument not in (element.completions or {}):
        return []
    return completed(_VALUE, context)


def _completion_in(expected: list[list[str]]) -> _Check:
    def check(answer: dict[str, Any]) -> str:
        completion = answer.get("result", {}).get("completion")
        if not isinstance(completion, dict):
            return f"expected a completion with values {expected[0]}"
        values = completion.get("values")
        if values not in expected:
            return f"expected the values {' or '.join(map(str, expected))}"
        if completion.get("hasMore"):
            return "hasMore is true, but every value was answered"
        total = completion.get("total")
        if total is not None and total != len(values):
            return f"total is {total}, but all {len(values)} values were answered"
        return ""

    return check


def _read_text(element: Element, uri: str) -> str:
    """What the kit's handler of ``element`` reads at ``uri`` (a template's, its variables too)."""
    if element.kind is ElementKind.RESOURCE:
        return uri
    return template_text(uri, UriTemplate.parse(element.ref.key).match(uri) or {})


def _contents_of(uri: str, texts: list[str]) -> _Check:
    def check(answer: dict[str, Any]) -> str:
        contents = answer.get("result", {}).get("contents")
        if (
            not isinstance(contents, list)
            or len(contents) != 1
            or contents[0].get("uri") != uri
            or contents[0].get("text") not in texts
        ):
            return f"expected its handler's contents: one text {' or '.join(map(repr, texts))} at {uri!r}"
        return ""

    return check


def _messages_of(text: str) -> _Check:
    def check(answer: dict[str, Any]) -> str:
        messages = answer.get("result", {}).get("messages")
        if not isinstance(messages, list) or [
            message.get("content", {}).get("text") for message in messages
        ] != [text]:
            return f"expected its handler's one message {text!r}"
        return ""

    return check


def _result_is(expected: dict[str, Any]) -> _Check:
    def check(answer: dict[str, Any]) -> str:
        got = answer.get("result")
        if got != expected:
            return f"expected the result {expected}"
        return ""

    return check


# -- server.errors -------------------------------------------------------------------------------

_NOT_FOUND: Final[dict[Era, int]] = {"2025-11-25": -32002, "2026-07-28": -32602}
"""Resource not found: -32002 in 2025-11-25; -32602 from 2026-07-28 (SEP-2164 retired -32002)."""


@checks("server.errors")
def test_server_errors(kit: Kit) -> None:
    """Unknown tools, prompts and cursors are -32602; unknown resources -32002 (2026: -32602)."""

    async def body(case: ServerCase) -> None:
        served = _serve(kit, case)
        listed = {e.ref: e.definition for e in served.collection}
        uri = next(
            candidate
            for candidate in (f"{_UNKNOWN}://nowhere/{n}" for n in range(10))
            if not listed_matches(listed, candidate)
        )
        for era in ERAS:
            async with connect(served, era) as client:
                expected = [
                    (
                        f"tools/call of unknown tool {_UNKNOWN!r}",
                        types.CallToolRequest(
                            params=types.CallToolRequestParams(name=_UNKNOWN, arguments={})
                        ),
                        -32602,
                        _UNKNOWN,
                    ),
                    (
                        f"prompts/get of unknown prompt {_UNKNOWN!r}",
                        types.GetPromptRequest(params=types.GetPromptRequestParams(name=_UNKNOWN)),
                        -32602,
                        _UNKNOWN,
                    ),
                    (
                        f"resources/read of unknown resource {uri!r}",
                        types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri)),
                        _NOT_FOUND[era],
                        uri,
                    ),
                    *(
                        (
                            f"{entry.method} with a cursor it never issued",
                            entry.request(
                                params=types.PaginatedRequestParams(cursor="not-a-cursor")
                            ),
                            -32602,
                            None,
                        )
                        for entry in LISTS
                    ),
                ]
                for what, request, code, named in expected:
                    answer = json.loads(await ask(client, request, what))
                    got = answer.get("error", {}).get("code")
                    if got != code:
                        shown = f"error {got}" if got is not None else "a result"
                        raise LawViolation(
                            f"in {era}, {what} answered {shown} ({json.dumps(answer)[:200]}); "
                            f"expected error {code}"
                        )
                    # The error names what the client asked for (in its message or its data).
                    if named is not None and named not in json.dumps(answer["error"]):
                        raise LawViolation(
                            f"in {era}, {what} answered {json.dumps(answer)[:200]}, which does "
                            f"not name {named!r}: an error names what the client asked for"
                        )
                # And a listed tool is found: its call is a result (its arguments may fail its
                # schema, an error result then), never a JSON-RPC error.
                tools = next(entry for entry in LISTS if entry.method == "tools/list")
                for name in (await walk(client, tools, limit=len(case.content) + 3)).keys:
                    what = f"tools/call of listed tool {name!r}"
                    request = types.CallToolRequest(
                        params=types.CallToolRequestParams(name=name, arguments={})
                    )
                    answer = json.loads(await ask(client, request, what))
                    if "error" in answer:
                        raise LawViolation(
                            f"in {era}, {what} answered error {answer['error'].get('code')} "
                            f"({json.dumps(answer)[:200]}); a tool the server lists is found, "
                            "and its call answers a result (isError for a failure of its own)"
                        )

    _given(kit, body, name="server_errors")


# -- server.list-changed -------------------------------------------------------------------------

_GROUPS: Final = (
    ("tools", ElementKind.TOOL, "notifications/tools/list_changed", "ToolsListChanged"),
    (
        "resources",
        ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE,
        "notifications/resources/list_changed",
        "ResourcesListChanged",
    ),
    ("prompts", ElementKind.PROMPT, "notifications/prompts/list_changed", "PromptsListChanged"),
)
_WAIT: Final = 2.0
"""Seconds a notification may take to arrive (in memory it takes a few turns of the loop)."""


def _changed(
    before: ElementCollection, after: ElementCollection, declared: ElementKind
) -> ElementKind:
    changed = ElementKind.NONE
    for kind in SINGLE_KINDS:
        if kind & declared and Counter(before.definitions(kind)) != Counter(
            after.definitions(kind)
        ):
            changed |= kind
    return changed


def _announced(capabilities: types.ServerCapabilities) -> set[str]:
    return {
        name
        for name, _, _, _ in _GROUPS
        if getattr(getattr(capabilities, name), "list_changed", None) is True
    }


@checks("server.list-changed")
def test_server_list_changed(kit: Kit) -> None:
    """A change reaches clients as list_changed for exactly the changed lists, in both eras."""
    if kit.capabilities.change_events is False:
        kit.not_applicable(
            f"not claimed (change_events=False): {kit.capabilities.reason}", why="declared"
        )
    judged = 0
    absent = ""

    async def body(case: ServerCase) -> None:
        nonlocal judged, absent
        for era in ERAS:
            served = _serve(kit, case)
            reload = getattr(getattr(served.obj, "registry", None), "reload", None)
            if not callable(reload):
                absent = (
                    f"the factory's {type(served.obj).__qualname__} has no .registry with "
                    "reload(), so the kit cannot change what it serves"
                )
                return
            fresh = collection(case.words, case.fresh, "source 0 v1")
            heard = await _hear(kit, case, served=served, era=era, fresh=fresh, reload=reload)
            if heard is not None:
                judged += 1

    _given(kit, body, name="server_list_changed")
    if absent:
        kit.not_applicable(absent, why="absent")
    if not judged:
        kit.not_applicable(
            "the server advertised listChanged for no list in any example", why="absent"
        )


@final
class _Inbox:
    """Notifications a client received, and a way to wait for more."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.arrived = anyio.Event()

    async def on_message(self, message: object) -> None:
        self.methods.append(str(getattr(message, "method", type(message).__name__)))
        self.arrived.set()
        self.arrived = anyio.Event()


async def _hear(
    kit: Kit,
    case: ServerCase,
    *,
    served: Served,
    era: Era,
    fresh: ElementCollection,
    reload: Any,
) -> set[str] | None:
    """Change the catalogue under a connected client; what it heard (None: nothing announced)."""
    inbox = _Inbox()

    async def change() -> None:
        served.source.content = fresh
        await reload()

    changed = _changed(served.collection, fresh, case.declared)
    async with connect(served, era, message_handler=inbox.on_message) as client:
        announced = _announced(client.server_capabilities)
        if not announced:
            return None
        for entry in LISTS:
            await walk(client, entry, limit=len(served.collection) + 3)  # loads the catalogue
        expected = {name for name, kinds, _, _ in _GROUPS if kinds & changed and name in announced}
        if era == "2025-11-25":
            await change()
            heard = await _legacy_notes(client, inbox, expected)
        else:
            heard = await _listen(client, change, announced, expected)
        if heard != expected:
            raise LawViolation(
                f"in {era}, after a reload that changed {changed.label or 'no list'}, the client "
                f"heard list_changed for {sorted(heard) or 'nothing'}; expected "
                f"{sorted(expected) or 'nothing'} (listChanged advertised for {sorted(announced)})"
            )
        await _refetch(client, fresh=fresh, era=era, kit=kit, case=case)
    return heard


async def _legacy_notes(client: Client, inbox: _Inbox, expected: set[str]) -> set[str]:
    names = {method: name for name, _, method, _ in _GROUPS}

    def heard() -> set[str]:
        return {names.get(method, method) for method in inbox.methods}

    with anyio.move_on_after(_WAIT):
        while not expected <= heard():
            await inbox.arrived.wait()
    await _settle(client)
    return heard()


async def _listen(
    client: Client, change: Callable[[], Awaitable[None]], announced: set[str], expected: set[str]
) -> set[str]:
    names = {event: name for name, _, _, event in _GROUPS}
    heard: set[str] = set()
    async with client.listen(
        tools_list_changed="tools" in announced,
        resources_list_changed="resources" in announced,
        prompts_list_changed="prompts" in announced,
    ) as events:
        await change()
        with anyio.move_on_after(_WAIT):
            while not expected <= heard:
                event = await anext(aiter(events))
                heard.add(names.get(type(event).__name__, type(event).__name__))
        await _settle(client)
        with anyio.move_on_after(0.05):
            while True:
                event = await anext(aiter(events))
                heard.add(names.get(type(event).__name__, type(event).__name__))
    return heard


async def _settle(client: Client) -> None:
    """Let anything still in flight arrive: a round trip, then a few turns of the loop."""
    # Not ping: 2026-07-28 removed it.
    await ask(
        client, types.ListPromptsRequest(params=types.PaginatedRequestParams()), "prompts/list"
    )
    for _ in range(20):
        await anyio.lowlevel.checkpoint()


async def _refetch(
    client: Client, *, fresh: ElementCollection, era: Era, kit: Kit, case: ServerCase
) -> None:
    """After the notification, the lists show what the same server over the new content lists."""
    twin = Served(
        kit,
        case.words,
        case.fresh,
        declared=case.declared,
        hidden=case.hidden,
        page_size=case.page_size,
    )
    async with connect(twin, era) as truth:
        for entry in LISTS:
            limit = len(fresh) + 3
            got, expected = (
                await walk(client, entry, limit=limit),
                await walk(truth, entry, limit=limit),
            )
            if got.keys != expected.keys:
                raise LawViolation(
                    f"in {era}, after the change {entry.method} lists {list(got.keys)}; the same "
                    f"server built over the new catalogue lists {list(expected.keys)}"
                )
