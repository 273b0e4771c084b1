"""``registry.templates`` across sources: equally specific templates resolve by precedence.

The single-source check of this law (in ``registry_laws``) accepts any of several equally
specific templates; when they come from different sources the choice is not free: the template
of the source that ranks first (higher priority; at equal priority, the source added first)
must answer, as it would win any other conflict.
"""

from __future__ import annotations

from typing import Final

import anyio
from hypothesis import strategies as st

from mcp_conformance._contract import ROLE_NAMES, LawViolation, probe_roles
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture
from mcp_conformance._machine import make_registry
from mcp_conformance.faults import MutableSource
from mcp_core.elements import Element, ElementCollection, HandlerRef, ResourceTemplate, UriTemplate

# Two templates of equal specificity and a URI (``{v}`` filled in) that both match.
_TIES: Final = (
    ("kit://items/{id}", "kit://items/{name}", "kit://items/{v}"),
    ("kit://{a}/same", "kit://same/{b}", "kit://same/same"),
    ("kit://q/{x}{?page}", "kit://q/{y}{?size}", "kit://q/{v}"),
    ("kit://{+rest}/x", "kit://y/{+more}", "kit://y/x"),
)
_values: Final = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=5)


def _template(text: str, name: str) -> Element:
    return Element(
        definition=ResourceTemplate(uri_template=text, name=name),
        handler=HandlerRef("mcp_conformance._handlers:resource_template"),
    )


@checks("registry.templates")
def test_registry_templates_tie_by_precedence(kit: Kit) -> None:
    """Of two equally specific matching templates, the higher-precedence source's answers."""
    capabilities = kit.capabilities

    async def roles() -> dict[str, bool]:
        status = probe_roles(kit.target.factory([]), capabilities)["resolver"]
        if status.claimed_but_missing:
            raise LawViolation(f"the target claims {ROLE_NAMES['resolver']}, but {status.reason}")
        return {"present": status.present, "declared": status.declared}

    resolver = anyio.run(roles)
    if not resolver["present"]:
        kit.not_applicable(
            f"it has no {ROLE_NAMES['resolver']}",
            why="declared" if resolver["declared"] else "absent",
        )
    if not capabilities.composes_sources:
        kit.not_applicable(
            "ties across sources need a registry built over sources; not claimed "
            f"(composes_sources=False): {capabilities.reason}",
            why="declared",
        )

    async def body(example: tuple[int, int, int, bool, str]) -> None:
        tie, first_priority, second_priority, swap, value = example
        one, other, probe = _TIES[tie]
        texts = (other, one) if swap else (one, other)
        first, second = _template(texts[0], "first"), _template(texts[1], "second")
        uri = UriTemplate.parse(probe).expand({"v": value}) if "{" in probe else probe
        registry = await make_registry(
            kit,
            [
                (MutableSource(ElementCollection([first])), first_priority),
                (MutableSource(ElementCollection([second])), second_priority),
            ],
        )
        # The first source added wins at equal priority.
        winner = first if first_priority >= second_priority else second
        resolved = await registry.get_resource(uri)
        if resolved is None or resolved.element != winner:
            got = "nothing" if resolved is None else repr(resolved.element.ref.key)
            raise LawViolation(
                f"{uri!r} matches {texts[0]!r} (priority {first_priority}, added first) and "
                f"{texts[1]!r} (priority {second_priority}), equally specific; "
                f"{winner.ref.key!r} must answer, but {got} did"
            )

    priorities = st.integers(min_value=-2, max_value=2)
    kit.given(
        st.tuples(
            st.integers(min_value=0, max_value=len(_TIES) - 1),
            priorities,
            priorities,
            st.booleans(),
            _values,
        ),
        body,
        name="registry_templates_tie_by_precedence",
    )
