"""PDF reports: needs the vendor's ``acme_pdf`` library, which is not installed here.

Discovery cannot import this module; it is skipped with a diagnostic and the other modules are
served (``DiscoverySource``: a module that fails to import costs only itself).
"""

from __future__ import annotations

import acme_pdf  # type: ignore[import-not-found]  # deliberately absent: this module fails

from mcp_core.handlers import tool


@tool
def weekly_report() -> str:
    """This week's tickets, as a PDF."""
    return str(acme_pdf.render("weekly"))
