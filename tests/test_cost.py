"""Cost from token usage: priced by genai-prices by endpoint and model, per call, never guessed.

Expected amounts come from genai-prices itself (called directly here), so these tests check what we
hand it (which provider, which model, which token counts) rather than copying a price.
"""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest

from dotprompt.observe.cost import INSTALL_HINT, format_usd, missing_prices, price_call, price_response, price_run
from dotprompt.types import Usage
from tests.isolation import ROOT, assert_finishes

genai_prices = pytest.importorskip("genai_prices")


def expected(model_ref: str, provider_id: str, **tokens: int) -> Decimal:
    return genai_prices.calc_price(genai_prices.Usage(**tokens), model_ref, provider_id=provider_id).total_price


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no [tool.dotprompt.providers] table from the repository
    for name in ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "GEMINI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("model", "provider", "ref"), [
    ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
    ("openai-responses/gpt-5-mini", "openai", "gpt-5-mini"),
    ("anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
    ("googleai/gemini-2.5-flash", "google", "gemini-2.5-flash"),
    ("vertexai/gemini-2.5-flash", "google", "gemini-2.5-flash"),
    ("azure/gpt-4o", "azure", "gpt-4o"),
])
def test_each_hosted_provider_is_priced_by_its_endpoint(model, provider, ref):
    cost = price_call(model, Usage(input_tokens=12_000, output_tokens=3_000))
    assert cost.usd == expected(ref, provider, input_tokens=12_000, output_tokens=3_000) and cost.usd > 0


def test_cache_reads_and_writes_are_priced_apart_from_plain_input():
    plain = price_call("anthropic/claude-sonnet-4-5", Usage(input_tokens=10_000, output_tokens=100)).usd
    read = price_call("anthropic/claude-sonnet-4-5", Usage(input_tokens=10_000, output_tokens=100,
                                                           cached_content_tokens=8_000)).usd
    written = price_call("anthropic/claude-sonnet-4-5", Usage(input_tokens=10_000, output_tokens=100,
                                                              cache_creation_tokens=8_000)).usd
    assert read < plain < written
    assert read == expected("claude-sonnet-4-5", "anthropic", input_tokens=10_000, output_tokens=100,
                            cache_read_tokens=8_000)


def test_a_run_is_priced_call_by_call_not_on_its_summed_usage():
    # gemini-2.5-pro charges more per token for prompts over 200k tokens: two 150k calls cross no tier.
    call = Usage(input_tokens=150_000, output_tokens=1_000)
    run = price_run("googleai/gemini-2.5-pro", [call, call])
    one = expected("gemini-2.5-pro", "google", input_tokens=150_000, output_tokens=1_000)
    summed = expected("gemini-2.5-pro", "google", input_tokens=300_000, output_tokens=2_000)
    assert run.usd == 2 * one and run.calls == 2 and run.usd != summed


def test_a_response_is_priced_from_its_per_call_usages_when_it_keeps_them():
    call = Usage(input_tokens=150_000, output_tokens=1_000)
    total = Usage.total([call, call])
    per_call = SimpleNamespace(usage=total, usage_per_call=[call, call])
    only_total = SimpleNamespace(usage=Usage(input_tokens=1_000, output_tokens=10))
    assert price_response("googleai/gemini-2.5-pro", per_call).usd == price_run("googleai/gemini-2.5-pro", [call, call]).usd
    assert price_response("openai/gpt-4o-mini", only_total).usd == price_call("openai/gpt-4o-mini", only_total.usage).usd


def test_a_self_hosted_endpoint_has_no_price_even_for_a_known_model_name(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    cost = price_call("openai/gpt-4o-mini", Usage(input_tokens=10, output_tokens=5))
    assert cost.usd is None and "no price list knows the endpoint http://127.0.0.1:8080/v1" in cost.reason
    assert price_call("local/smollm2", Usage(input_tokens=10, output_tokens=5)).usd is None
    echo = price_call("echo", Usage(input_tokens=10, output_tokens=5))
    assert echo.reason == "no price for echo: not a hosted provider's model"


def test_a_configured_server_is_priced_when_its_url_is_a_known_provider(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.providers.openrouter]\nbase_url = "https://openrouter.ai/api/v1"\n')
    cost = price_call("openrouter/openai/gpt-4o-mini", Usage(input_tokens=1_000, output_tokens=100))
    assert cost.usd == expected("openai/gpt-4o-mini", "openrouter", input_tokens=1_000, output_tokens=100)


@pytest.mark.parametrize(("usage", "reason"), [
    (None, "reported no token usage"),
    (Usage(), "reported no token usage"),
    (Usage(input_tokens=-5, output_tokens=1), "Invalid usage value for input_tokens"),
    (Usage(input_tokens=5, output_tokens=1, cached_content_tokens=50), "cannot exceed input_tokens"),
    (Usage(input_tokens=1, output_tokens=1), "Unable to find model"),
])
def test_unpriceable_calls_say_why_and_never_raise(usage, reason):
    model = "openai/no-such-model-xyz" if reason == "Unable to find model" else "openai/gpt-4o-mini"
    cost = price_call(model, usage)
    assert cost.usd is None and reason in cost.reason and str(cost) == "?"
    assert price_run(model, [Usage(input_tokens=1, output_tokens=1), usage]).usd is None


def test_a_run_with_one_unknown_call_is_unknown_not_undercounted():
    known = Usage(input_tokens=100, output_tokens=10)
    assert price_run("openai/gpt-4o-mini", [known, None]).usd is None


@pytest.mark.parametrize(("value", "text"), [("0", "$0.00"), ("0.000435", "$0.000435"), ("0.0123", "$0.0123"),
                                             ("0.5", "$0.50"), ("12.5", "$12.50"), ("1234.567", "$1,234.57"),
                                             ("0.00000004", "$0.00000004")])
def test_amounts_read_as_dollars(value, text):
    assert format_usd(Decimal(value)) == text


def test_to_dict_is_json_ready():
    assert price_call("echo", None).to_dict()["usd"] is None
    assert isinstance(price_call("openai/gpt-4o-mini", Usage(input_tokens=1, output_tokens=1)).to_dict()["usd"], float)


def test_without_genai_prices_cost_is_unknown_with_the_install_hint():
    assert missing_prices() is None
    done = assert_finishes("""
import sys
sys.modules["genai_prices"] = None  # as if not installed: importing it raises ImportError
from dotprompt.observe.cost import missing_prices, price_call
from dotprompt.types import Usage
cost = price_call("openai/gpt-4o-mini", Usage(input_tokens=10, output_tokens=5))
print(cost.usd, "|", cost.reason, "|", missing_prices())
""", cwd=ROOT)
    assert done.stdout.strip() == f"None | {INSTALL_HINT} | {INSTALL_HINT}"


def test_a_response_priced_twice_is_looked_up_once_per_model_name():
    # The run log and the batch row both price a response; a different model name is its own question.
    response = SimpleNamespace(usage=Usage(input_tokens=1_000, output_tokens=100), usage_per_call=[])
    first = price_response("openai/gpt-4o-mini", response)
    assert price_response("openai/gpt-4o-mini", response) is first
    other = price_response("openai/gpt-4o", response)
    assert other.usd == expected("gpt-4o", "openai", input_tokens=1_000, output_tokens=100) != first.usd


def test_an_unknown_endpoint_is_remembered_but_a_bad_usage_is_not(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8081/v1")
    assert "no price list knows" in price_call("openai/gpt-4o-mini", Usage(input_tokens=9, output_tokens=1)).reason
    assert "no price list knows" in price_call("openai/gpt-4o-mini", Usage(input_tokens=1, output_tokens=1)).reason
    monkeypatch.delenv("OPENAI_BASE_URL")
    bad = price_call("openai/gpt-4o-mini", Usage(input_tokens=-1, output_tokens=1))
    good = price_call("openai/gpt-4o-mini", Usage(input_tokens=10, output_tokens=1))
    assert bad.usd is None and good.usd == expected("gpt-4o-mini", "openai", input_tokens=10, output_tokens=1)


def test_inside_endpoints_fixed_a_model_is_priced_where_it_was_first_found(monkeypatch):
    from dotprompt.observe.cost import endpoints_fixed

    usage = Usage(input_tokens=10, output_tokens=1)
    with endpoints_fixed():
        assert price_call("openai/gpt-4o-mini", usage).usd is not None
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8082/v1")  # the batch's clients keep their URL too
        assert price_call("openai/gpt-4o-mini", usage).usd is not None
    assert price_call("openai/gpt-4o-mini", usage).usd is None  # outside, every call looks again
