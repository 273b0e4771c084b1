"""The shop's elements, declared with decorators: what the build step dumps.

    mcp-core dump examples/build_time/shop_elements.py -o examples/build_time/catalog.json

Nothing serves this file directly: the build dumps its catalogue (names, schemas derived from the
signatures, and each handler as its import path, ``shop_elements:quote``), and the servers
(``storefront.py``, ``backoffice.py``) serve that file. At run time this module is imported only
when one of its handlers is called.

Tags say who each element is for: ``public`` ones are the storefront's.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from mcp_core import App, Message, ToolError

app = App("shop")

PRICES: Final = {"tea-01": 4.5, "mug-02": 12.0, "pot-03": 30.0}
NAMES: Final = {"tea-01": "Green tea", "mug-02": "Blue mug", "pot-03": "Tea pot"}


@app.tool(tags={"public"})
def search_products(query: str) -> list[str]:
    """Find products whose name contains the query.

    Args:
        query: Words of the product's name.
    """
    words = query.lower()
    return sorted(sku for sku, name in NAMES.items() if words in name.lower())


@app.tool(tags={"public"})
def quote(sku: str, quantity: Annotated[int, Field(ge=1, le=100)] = 1) -> float:
    """The price of a quantity of one product.

    Args:
        sku: The product.
        quantity: How many.
    """
    if sku not in PRICES:
        raise ToolError(f"there is no product {sku!r}")
    return PRICES[sku] * quantity


@app.tool(tags={"internal"})
def refund(order_id: int, reason: str) -> str:
    """Refund an order (staff only).

    Args:
        order_id: The order.
        reason: Why, for the books.
    """
    return f"order {order_id} refunded: {reason}"


@app.resource("shop://policies", mime_type="text/plain", tags={"public"})
def policies() -> str:
    """The shop's delivery and returns policies."""
    return "Delivery in 3 days. Returns within 30 days."


@app.resource_template("shop://products/{sku}", mime_type="application/json", tags={"public"})
def product(sku: str) -> dict[str, object]:
    """One product's page."""
    if sku not in NAMES:
        raise ToolError(f"there is no product {sku!r}")
    return {"sku": sku, "name": NAMES[sku], "price": PRICES[sku]}


@app.prompt(tags={"internal"})
def support_reply(complaint: str) -> list[Message]:
    """Draft a reply to a customer's complaint (staff only).

    Args:
        complaint: What the customer wrote.
    """
    return [Message.user(f"Draft a polite reply to this complaint:\n{complaint}")]
