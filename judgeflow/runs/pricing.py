"""Estimated cost of a run: a small price table per model, which users can override.

Prices are US dollars per million tokens (input, output, and where the provider caches prompts
`cached_input` for tokens served from its cache and `cache_write` for Anthropic cache writes;
`usage.cached_tokens` / `usage.cache_write_tokens` are priced so), list prices for online calls;
provider batch APIs cost `BATCH_DISCOUNT` of that. Prices change: override or extend the table
with a TOML or JSON file, passed as `--prices FILE` or named by $JUDGEFLOW_PRICES:

    # prices.toml
    ["openai/gpt-4o-mini"]
    input = 0.15
    output = 0.60

A model matches its own entry, else the longest entry it starts with (so a dated snapshot such as
"openai/gpt-4o-mini-2024-07-18" uses "openai/gpt-4o-mini"). Local models (ollama/, baseline/)
cost nothing. Anything else has no known price and no estimate.
"""

from __future__ import annotations

import json
import os
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..results import Usage

PRICES_ENV = "JUDGEFLOW_PRICES"
BATCH_DISCOUNT = 0.5


class Price(BaseModel):
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    """Prompt tokens served from the provider's prompt cache (None: priced as `input`)."""
    cache_write: float | None = None
    """Prompt tokens written to Anthropic's prompt cache (None: priced as `input`)."""


#: list prices (USD per 1M tokens) checked in late 2025; override with --prices for yours
PRICES: dict[str, Price] = {  # cached_input: OpenAI cached input; Anthropic cache reads (0.1x), writes (1.25x, 5 min)
    "openai/gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075),
    "openai/gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25),
    "openai/gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50),
    "openai/gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10),
    "openai/gpt-4.1-nano": Price(input=0.10, output=0.40, cached_input=0.025),
    "openai/gpt-5": Price(input=1.25, output=10.00, cached_input=0.125),
    "openai/gpt-5-mini": Price(input=0.25, output=2.00, cached_input=0.025),
    "openai/gpt-5-nano": Price(input=0.05, output=0.40, cached_input=0.005),
    "anthropic/claude-opus-4-1": Price(input=15.00, output=75.00, cached_input=1.50, cache_write=18.75),
    "anthropic/claude-sonnet-4-5": Price(input=3.00, output=15.00, cached_input=0.30, cache_write=3.75),
    "anthropic/claude-sonnet-4": Price(input=3.00, output=15.00, cached_input=0.30, cache_write=3.75),
    "anthropic/claude-haiku-4-5": Price(input=1.00, output=5.00, cached_input=0.10, cache_write=1.25),
    "anthropic/claude-3-5-haiku": Price(input=0.80, output=4.00, cached_input=0.08, cache_write=1.00),
}
FREE_PROVIDERS = ("ollama", "baseline")


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The built-in table updated with `path` (or $JUDGEFLOW_PRICES), if given.

    Raises:
        ConfigError: the file is missing, unreadable, or an entry lacks input/output prices.
    """
    table = dict(PRICES)
    path = path or os.environ.get(PRICES_ENV) or None
    if path is None:
        return table
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the price file ({e.strerror}); give a .toml or .json file") from None
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: {e}") from None
    for model, entry in data.items():
        try:
            table[model] = Price.model_validate(entry)
        except ValidationError:
            raise ConfigError(
                f'{p}: entry {model!r} must have numeric "input" and "output" prices in USD per 1M tokens, '
                f'e.g. ["{model}"] input = 0.15, output = 0.60'
            ) from None
    return table


def price_for(model: str, prices: dict[str, Price] | None = None) -> Price | None:
    """The price of `model` ("provider/model"), or None if unknown."""
    table = PRICES if prices is None else prices
    if model in table:
        return table[model]
    if model.partition("/")[0] in FREE_PROVIDERS:
        return Price(input=0.0, output=0.0)
    matches = [k for k in table if model.startswith(k)]
    return table[max(matches, key=len)] if matches else None


def estimate_cost(model: str, usage: Usage, *, prices: dict[str, Price] | None = None, batch: bool = False) -> float | None:
    """Estimated USD for `usage` on `model`, or None if its price is unknown."""
    price = price_for(model, prices)
    if price is None:
        return None
    cached, written = usage.cached_tokens, usage.cache_write_tokens
    fresh = max(usage.input_tokens - cached - written, 0)
    cost = (fresh * price.input + cached * _or(price.cached_input, price.input)
            + written * _or(price.cache_write, price.input) + usage.output_tokens * price.output) / 1_000_000
    return cost * BATCH_DISCOUNT if batch else cost


def _or(value: float | None, default: float) -> float:
    return default if value is None else value
