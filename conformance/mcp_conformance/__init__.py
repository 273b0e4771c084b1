"""The mcp-core conformance kit: ``pytest --mcp-conformance`` certifies an implementation.

It checks a registry, source, source wrapper or server against the laws of the contracts (the
Protocol docstrings' ``Laws:`` lists carry the same ids); pytest exits non-zero unless the run
certifies the target.

Public API:

- :class:`Capabilities`: what a target declares it does not claim (``MCP_CONFORMANCE``), and
  :func:`declare` to attach it to one factory.
- :data:`LAWS`, :class:`Law`: the law table.
- :mod:`mcp_conformance.faults`: sources that misbehave on purpose.
- :mod:`mcp_conformance.strategies`: hypothesis strategies for valid elements and collections.
- :mod:`mcp_conformance.report`: the report model, and ``python -m mcp_conformance.report``.
"""

from mcp_conformance._capabilities import Capabilities, declare
from mcp_conformance._laws import LAWS, Law, laws_for

__all__ = ["LAWS", "Capabilities", "Law", "declare", "laws_for"]
