"""The tools the example `assistant` prompt names. Registered for the CLI, `dotprompt test` and
`load_prompt` through `[tool.dotprompt] tools` in pyproject.toml."""

from __future__ import annotations

from dotprompt import tool

ORDERS = {
    "1042": {"order_id": "1042", "customer_id": "c-7", "status": "shipped", "total": 59.90, "currency": "EUR"},
    "1043": {"order_id": "1043", "customer_id": "c-7", "status": "processing", "total": 12.00, "currency": "EUR"},
}


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order by its id: status, total and currency."""
    order = ORDERS.get(order_id.strip().lstrip("#"))
    return order if order is not None else {"error": f"no order {order_id}"}


@tool
def issue_refund(order_id: str, amount: float) -> dict:
    """Refund part or all of an order. Never more than the order total."""
    order = ORDERS.get(order_id.strip().lstrip("#"))
    if order is None:
        return {"refunded": False, "reason": f"no order {order_id}"}
    if amount > order["total"]:
        return {"refunded": False, "reason": f"{amount} is more than the order total {order['total']}"}
    return {"refunded": True, "order_id": order["order_id"], "amount": amount}


if __name__ == "__main__":
    print(lookup_order("1042"))
