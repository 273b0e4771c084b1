"""Not broken: the reference Registry behind a forwarder without ``resource_candidates``.

Certified (the capability is optional), with a warning on the certificate: served with a
visibility rule, it fails ``server.visibility-agrees`` (see ``server_no_candidates``).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.sources import ElementSource

from ._delegate import Forwarding, reference


def make_registry(sources: Sequence[tuple[ElementSource, int]]) -> Forwarding:
    """The reference Registry, every role forwarded but ``resource_candidates``."""
    return Forwarding(reference(sources))
