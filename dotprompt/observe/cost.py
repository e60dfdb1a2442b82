"""What model calls cost, from their token usage and the maintained `genai-prices` price data.

Optional: `pip install 'dotprompt-toolkit[cost]'`. Without the package a cost is simply unknown
(`Cost.usd is None`, with the reason), never guessed from a table kept here. Nothing is fetched:
genai-prices ships its prices and is imported only when a cost is asked for.

A price is found by the endpoint the model calls (its base URL: api.openai.com, *.openai.azure.com,
*-aiplatform.googleapis.com, openrouter.ai, ...) and the model id after the prefix. A server no
price list knows (a loopback vLLM or llama-server, the local model) has no price: its cost is
unknown rather than that of a hosted model with the same name. A run's cost is the sum of its
calls' costs, each call priced on its own usage, because some prices depend on one call's size
(Gemini's long-context tiers): pricing the summed usage could cross a tier no call crossed.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .._util.cache import LRU
from ..errors import UsageError
from ..providers.config import endpoint_url
from ..providers.registry import provider_spec
from ..types import Usage

__all__ = ["INSTALL_HINT", "Cost", "endpoints_fixed", "format_usd", "load_prices", "missing_prices", "price_call",
           "price_response", "price_run"]

INSTALL_HINT = "cost needs the price data: pip install 'dotprompt-toolkit[cost]'"


@dataclass(frozen=True)
class Cost:
    """A cost in US dollars, or None with the reason it is unknown."""

    usd: Decimal | None
    reason: str | None = None
    calls: int = 0  # the model calls it covers

    def __str__(self) -> str:
        return format_usd(self.usd) if self.usd is not None else "?"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape batch rows and reports carry: `{"usd": 0.000435}` or `{"usd": null, "reason": ...}`."""
        return {"usd": float(self.usd)} if self.usd is not None else {"usd": None, "reason": self.reason}


def format_usd(value: Decimal) -> str:
    """`$0.000435`, `$0.0123`, `$12.50`: at least cents, and the leading digits of a small amount."""
    places = 2 if abs(value) >= 1 else 4 if abs(value) >= Decimal("0.01") else 8
    whole, _, fraction = f"{value:,.{places}f}".partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(2, '0')}"


@functools.lru_cache(maxsize=1)
def _prices() -> Any:
    try:
        import genai_prices
    except Exception:  # not installed, or unusable on this Python: cost is simply unknown
        return None
    return genai_prices


def load_prices(model: str) -> None:
    """Load the price data now if `model` will be priced: a batch does it before its first request,
    so the ~0.2 s it takes does not stall the replies already arriving."""
    where = _where(model)
    if isinstance(where, str):  # not priced (the reason)
        return
    prices = _prices()
    if prices is not None:
        with contextlib.suppress(Exception):  # only the loading matters here; a missing price shows later
            prices.calc_price(prices.Usage(input_tokens=1), where[0], **where[1])


def missing_prices() -> str | None:
    """None when prices can be looked up, else what to install (say it once where cost was asked for)."""
    return None if _prices() is not None else INSTALL_HINT


def price_call(model: str, usage: Usage | None) -> Cost:
    """The cost of one call of `model` (`provider/model-id`) that used `usage`."""
    if usage is None or (usage.input_tokens is None and usage.output_tokens is None):
        return Cost(None, f"the call to {model} reported no token usage", 1)
    where = _where(model)  # before the import: a local model's run never pays for loading the price data
    if isinstance(where, str):
        return Cost(None, where, 1)
    prices = _prices()
    if prices is None:
        return Cost(None, INSTALL_HINT, 1)
    model_ref, place = where
    known = (model, model_ref, *place.items())
    reason = _unpriced.get(known, "")
    if reason is not None:
        return Cost(None, reason, 1)
    try:
        found = prices.calc_price(_their_usage(prices, usage), model_ref, **place)
    except LookupError as exc:  # no such provider or model: so for any usage, and not worth asking again
        reason = _no_price(model, place, exc)
        _unpriced.put(known, "", reason)
        return Cost(None, reason, 1)
    except (ValueError, ArithmeticError) as exc:
        return Cost(None, _no_price(model, place, exc), 1)
    return Cost(found.total_price, None, 1)


# (model, where) that no price list knows, with the reason. Every call of a self-hosted model asked again,
# and the price data's search through every provider for the unknown endpoint was 3-4 % of a batch row.
_unpriced: LRU[str] = LRU(256)


def price_run(model: str, usages: Sequence[Usage | None]) -> Cost:
    """The cost of a run's calls, each priced on its own usage; unknown if any call's is."""
    total = Decimal(0)
    for usage in usages:
        cost = price_call(model, usage)
        if cost.usd is None:
            return Cost(None, cost.reason, len(usages))
        total += cost.usd
    return Cost(total, None, len(usages))


def price_response(model: str, response: Any) -> Cost:
    """The cost of a generate run: each call's usage when the response keeps them (`usage_per_call`),
    else its one `usage`. A response is priced once: the run log and the batch row that both ask get
    the same answer without looking it up twice."""
    found = _priced.get(id(response), model)
    if found is not None and found[0] is response:
        return found[1]
    per_call = getattr(response, "usage_per_call", None)
    cost = price_run(model, list(per_call) if per_call else [getattr(response, "usage", None)])
    _priced.put(id(response), model, (response, cost))  # the response is held, so its id cannot be reused meanwhile
    return cost


_priced: LRU[tuple[Any, Cost]] = LRU(64)  # by id(response), for the model name


@contextlib.contextmanager
def endpoints_fixed() -> Iterator[None]:
    """Inside the block, where each model is priced is looked up once (a batch: its model clients are
    made once too, so a settings change mid-run moves neither). The lookup reads pyproject.toml's
    stamp and the environment, 2-3 % of a batch row's time when done per row."""
    token = _fixed.set({})
    try:
        yield
    finally:
        _fixed.reset(token)


_fixed: contextvars.ContextVar[dict[str, tuple[str, dict[str, str]] | str] | None] = contextvars.ContextVar(
    "dotprompt_price_endpoints", default=None)


def _where(model: str) -> tuple[str, dict[str, str]] | str:
    fixed = _fixed.get()
    if fixed is None:
        return _look_up_where(model)
    found = fixed.get(model)
    if found is None:
        found = fixed[model] = _look_up_where(model)
    return found


def _look_up_where(model: str) -> tuple[str, dict[str, str]] | str:
    """(model id, where its provider is: its endpoint URL or genai-prices' id), or why there is no price."""
    prefix, slash, model_id = model.partition("/")
    spec = provider_spec(prefix) if slash and model_id else None
    if spec is None:
        return f"no price for {model}: not a hosted provider's model"
    try:
        url = endpoint_url(spec)
    except UsageError as exc:
        return f"no price for {model}: {exc}"
    if url:
        return model_id, {"provider_api_url": url}
    if spec.prices_id:
        return model_id, {"provider_id": spec.prices_id}
    return f"no price for {model}: its endpoint is not configured"


def _no_price(model: str, place: dict[str, str], exc: Exception) -> str:
    url = place.get("provider_api_url")
    if url and str(exc).startswith("Unable to find provider"):
        return f"no price for {model}: no price list knows the endpoint {url} (a self-hosted server?)"
    return f"no price for {model}: {exc}"


def _their_usage(prices: Any, usage: Usage) -> Any:
    # Our input count includes cache reads and writes, as genai-prices' does: it prices those apart.
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
              "cache_read_tokens": usage.cached_content_tokens, "cache_write_tokens": usage.cache_creation_tokens}
    return prices.Usage(**{k: v for k, v in counts.items() if v is not None})
