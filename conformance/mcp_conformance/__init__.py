"""The mcp-core conformance kit: ``pytest --mcp-conformance`` certifies an implementation.

It checks a registry, source or source wrapper against the laws of the contracts
(docs/architecture.md section 3; the Protocol docstrings' ``Laws:`` lists carry the same ids).

Public API:

- :class:`Capabilities`: what a target declares it does not claim (``MCP_CONFORMANCE``).
- :data:`LAWS`, :class:`Law`: the law table.
- :mod:`mcp_conformance.faults`: sources that misbehave on purpose.
- :mod:`mcp_conformance.strategies`: hypothesis strategies for valid elements and collections.
- :mod:`mcp_conformance.report`: the report model, and ``python -m mcp_conformance.report``.
"""

from mcp_conformance._capabilities import Capabilities
from mcp_conformance._laws import LAWS, Law, laws_for

__all__ = ["LAWS", "Capabilities", "Law", "laws_for"]
