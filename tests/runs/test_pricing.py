"""Prices come from a maintained database (genai-prices, offline), with --prices as the override
and the built-in table as the fallback; the run says which source priced it (issue #11, point 12)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from judgeflow.results import Judgment, Usage
from judgeflow.runs import pricing
from judgeflow.runs.pricing import BUILTIN, PRICES, estimate_cost, load_prices, price_for
from judgeflow.runs.summary import summarize

NOT_IN_TABLE = "google/gemini-2.5-flash"  # not in the built-in table


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch):
    """No network: a connection attempt fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("pricing tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("JUDGEFLOW_PRICES", raising=False)
    pricing.maintained_price.cache_clear()
    yield
    pricing.maintained_price.cache_clear()


def test_the_maintained_database_prices_models_the_table_lacks() -> None:
    pytest.importorskip("genai_prices")
    assert not any(k.startswith(NOT_IN_TABLE) for k in PRICES)
    price = price_for(NOT_IN_TABLE, load_prices())
    assert price is not None and price.source.startswith("genai-prices")
    assert price.input > 0 and price.output > price.input
    # a dated snapshot and the base (not long-context) tier
    mini = price_for("openai/gpt-4o-mini-2024-07-18", load_prices())
    assert (mini.input, mini.output) == pytest.approx((0.15, 0.60)) and mini.source.startswith("genai-prices")
    sonnet = price_for("anthropic/claude-sonnet-4-5")
    assert (sonnet.input, sonnet.output) == pytest.approx((3.0, 15.0))
    assert price_for("openai/my-finetune-xyz") is None


def test_a_lookup_is_remembered_per_installed_database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The summary of a re-run need not import genai-prices (0.4 s): a lookup is remembered on
    disk under the installed database's identity, and made again for another database."""
    pytest.importorskip("genai_prices")
    from judgeflow.runs import price_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = pricing.maintained_price("openai/gpt-4o-mini")
    assert first is not None and price_cache.cache_file().is_relative_to(tmp_path)
    assert pricing.maintained_price("openai/my-finetune-xyz") is None
    pricing.maintained_price.cache_clear()
    looked_up: list[str] = []
    real = pricing._look_up
    monkeypatch.setattr(pricing, "_look_up", lambda m: looked_up.append(m) or real(m))
    assert pricing.maintained_price("openai/gpt-4o-mini") == first  # from the file
    assert pricing.maintained_price("openai/my-finetune-xyz") is None  # "not in the database" is remembered too
    assert looked_up == []
    pricing.maintained_price.cache_clear()
    monkeypatch.setattr(price_cache, "installed", lambda: "another version")
    assert pricing.maintained_price("openai/gpt-4o-mini") == first and looked_up == ["openai/gpt-4o-mini"]
    price_cache.cache_file().write_text("{not json")  # a damaged cache is no error
    pricing.maintained_price.cache_clear()
    assert pricing.maintained_price("openai/gpt-4o-mini") == first


def test_the_price_file_overrides_the_database(tmp_path: Path) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"openai/gpt-4o-mini": {"input": 1.0, "output": 2.0}}))
    price = price_for("openai/gpt-4o-mini-2024-07-18", load_prices(f))
    assert (price.input, price.output, price.source) == (1.0, 2.0, str(f))
    assert estimate_cost("openai/gpt-4o-mini", Usage(input_tokens=10**6), prices=load_prices(f)) == 1.0


def test_without_the_package_the_built_in_table_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # `import genai_prices` raises ImportError
    price = price_for("openai/gpt-4o-mini", load_prices())
    assert (price.input, price.output, price.source) == (0.15, 0.60, BUILTIN)
    assert price_for(NOT_IN_TABLE, load_prices()) is None


def test_the_summary_names_the_price_source(tmp_path: Path) -> None:
    pytest.importorskip("genai_prices")
    results = [Judgment(id="a", label=1, usage=Usage(calls=2, input_tokens=1_000_000, output_tokens=0))]
    line = summarize(results, model=NOT_IN_TABLE, prices=load_prices(), elapsed=0, session=Usage(),
                     session_items=0)[-1]
    assert line.startswith("estimated cost: $") and "(prices: genai-prices" in line
    f = tmp_path / "prices.toml"
    f.write_text(f'["{NOT_IN_TABLE}"]\ninput = 1.0\noutput = 2.0\n')
    line = summarize(results, model=NOT_IN_TABLE, prices=load_prices(f), elapsed=0, session=Usage(),
                     session_items=0)[-1]
    assert line == f"estimated cost: $1.0000 at list prices for {NOT_IN_TABLE} (prices: {f})"


def test_run_json_records_the_price_source(tmp_path: Path) -> None:
    from judgeflow.runs.summary import summary_json

    results = [Judgment(id="a", label=1, usage=Usage(calls=1, input_tokens=1000, output_tokens=10))]
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"openai/x": {"input": 1.0, "output": 1.0}}))
    out = summary_json(results, run_id="r", model="openai/x", output=tmp_path / "o.jsonl", prices=load_prices(f),
                       elapsed=1, session_items=1)
    assert out["priced_by"] == str(f) and out["cost_usd"] == pytest.approx(0.00101)


def test_a_misspelt_model_is_priced_as_unknown_not_guessed() -> None:
    """Before: `openai/gpt-4o-mni` got gpt-4o's price from the built-in table (a prefix match),
    "$0.0035 ... built-in table". A dated snapshot of a priced model still gets its price."""
    for typo in ("openai/gpt-4o-mni", "openai/gpt-4o-mini-typo", "openai/gpt-5-minii"):
        assert price_for(typo, PRICES) is None, typo
        assert estimate_cost(typo, Usage(calls=1, input_tokens=1000, output_tokens=100), prices=PRICES) is None
    line = summarize([Judgment(id="a", label=0, status="judged", usage=Usage(calls=1, input_tokens=10))],
                     model="openai/gpt-4o-mni", prices=PRICES, elapsed=1.0, session=Usage(), session_items=1)[-1]
    assert line.startswith("estimated cost: unknown (no price for openai/gpt-4o-mni")
    builtin = {k: v for k, v in PRICES.items() if v.source == BUILTIN}
    assert pricing._match("openai/gpt-4o-2024-08-06", builtin) is PRICES["openai/gpt-4o"]
    assert pricing._match("anthropic/claude-sonnet-4-5-20250929", builtin) is PRICES["anthropic/claude-sonnet-4-5"]
    assert pricing._match("openai/gpt-4o-mni", builtin) is None


def test_a_typo_that_shares_a_database_prefix_is_unknown_and_real_versions_keep_their_price(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Before: genai-prices' prefix clauses priced `claude-haiku-4-5x` as Haiku ($1/$5), and a lookup
    remembered under that rule was served again. Now only a name the database spells out, or one
    plus a version suffix the providers use, is priced (#48 item 9)."""
    pytest.importorskip("genai_prices")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for typo in ("anthropic/claude-haiku-4-5x", "anthropic/claude-sonnet-4-5-typo", "google/gemini-2.5-prox",
                 "openai/gpt-5-nanox", "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0x"):
        assert price_for(typo) is None, typo
    haiku = price_for("anthropic/claude-haiku-4-5")
    assert (haiku.input, haiku.output) == pytest.approx((1.0, 5.0))
    for real in ("anthropic/claude-haiku-4-5-20251001", "anthropic/claude-haiku-4-5-latest",
                 "google/gemini-2.5-pro-preview-06-05", "google/gemini-2.0-flash-001",
                 "google/claude-haiku-4-5@20251001", "google/claude-3-5-sonnet-v2@20241022",
                 "openai/gpt-5-nano-2025-08-07", "openai/gpt-5-nano-20250807", "mistral/mistral-large-2411",
                 "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
                 "bedrock/arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0",
                 "openai/ft:gpt-4o-mini-2024-07-18:my-org:custom:abc123"):
        assert price_for(real) is not None, real
    assert pricing.spelt_out("claude-haiku-4-5-20251001", {"claude-haiku-4-5"})
    assert not pricing.spelt_out("claude-haiku-4-5x", {"claude-haiku-4-5"})
    # a price remembered on disk under the old rule is not served under the new one
    from judgeflow.runs import price_cache

    database = price_cache.installed()
    price_cache.remember(database, "anthropic/claude-haiku-4-5x", haiku.model_dump())
    pricing.maintained_price.cache_clear()
    assert pricing.maintained_price("anthropic/claude-haiku-4-5x") is None
