"""mcp-core's visibility combinators as ``--mcp-visibility`` targets: rules made of the kit's parts.

``visibility.uri-narrows`` is a law about rules that compose others (a rule deciding on its own is
applied by the server, which ``server.visibility-agrees`` certifies)::

    pytest --mcp-conformance --mcp-visibility=mcp_conformance.reference.visibility:all_of

``composed`` nests all three, so one target certifies them together as an application would use
them; the single ones say which combinator a failure is in.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_conformance import Capabilities, declare
from mcp_core import visibility
from mcp_core.visibility import ElementVisibility

__all__ = ["all_of", "any_of", "composed", "not_"]


@declare(Capabilities(decides=all))
def all_of(parts: Sequence[ElementVisibility]) -> ElementVisibility:
    """``visibility.all_of(*parts)``."""
    return visibility.all_of(*parts)


@declare(Capabilities(decides=any))
def any_of(parts: Sequence[ElementVisibility]) -> ElementVisibility:
    """``visibility.any_of(*parts)``."""
    return visibility.any_of(*parts)


def _not_first(decisions: Sequence[bool]) -> bool:
    return not decisions[0]


def _composed(decisions: Sequence[bool]) -> bool:
    return all(decisions) or not decisions[-1]


@declare(Capabilities(decides=_not_first))
def not_(parts: Sequence[ElementVisibility]) -> ElementVisibility:
    """``visibility.not_(parts[0])`` (the other parts are not used)."""
    return visibility.not_(parts[0])


@declare(Capabilities(decides=_composed))
def composed(parts: Sequence[ElementVisibility]) -> ElementVisibility:
    """``any_of(all_of(first, *rest), not_(last))``: the three combinators nested."""
    first, *rest = parts
    return visibility.any_of(visibility.all_of(first, *rest), visibility.not_(parts[-1]))
