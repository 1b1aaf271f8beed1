"""Estimated cost of a run, from a maintained price database, which users can override.

Prices are US dollars per million tokens (input, output, and where the provider caches prompts
`cached_input` for tokens served from its cache and `cache_write` for Anthropic cache writes;
`usage.cached_tokens` / `usage.cache_write_tokens` are priced so), list prices for online calls;
provider batch APIs cost `BATCH_DISCOUNT` of that. A model's price comes from, in order:

1. a TOML or JSON file passed as `--prices FILE` or named by $JUDGEFLOW_PRICES (the override);
2. the `genai-prices` package (a maintained price database shipped with the package, read
   offline; Python 3.11+), when installed and it knows the model;
3. the small built-in table below (checked late 2025), the fallback without that package.

Each `Price` says where it came from (`source`), and the run summary prints it.

    # prices.toml
    ["openai/gpt-4o-mini"]
    input = 0.15
    output = 0.60

In a table, a model matches its own entry, else the longest entry it starts with followed by a
version suffix (`VERSION_SUFFIX`: so a dated snapshot such as "openai/gpt-4o-mini-2024-07-18" uses
"openai/gpt-4o-mini"). genai-prices matches names by prefix and substring clauses, so its answer
is kept only when the name is one the database spells out (or one of them plus a version suffix):
a misspelt "claude-haiku-4-5x" is not Haiku. Local models (ollama/, baseline/) cost nothing.
Anything else has no known price and no estimate.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..results import Usage
from . import price_cache

PRICES_ENV = "JUDGEFLOW_PRICES"
BATCH_DISCOUNT = 0.5


BUILTIN = "built-in table"
MAINTAINED = "genai-prices"


class Price(BaseModel):
    """US dollars per million tokens, and where the price came from."""

    input: float
    output: float
    cached_input: float | None = None
    """Prompt tokens served from the provider's prompt cache (None: priced as `input`)."""
    cache_write: float | None = None
    """Prompt tokens written to Anthropic's prompt cache (None: priced as `input`)."""
    source: str = "given"
    """"built-in table", "genai-prices <version>", the price file's path, or "given" (passed in code)."""


#: list prices (USD per 1M tokens) checked in late 2025; override with --prices for yours
PRICES: dict[str, Price] = {  # cached_input: OpenAI cached input; Anthropic cache reads (0.1x), writes (1.25x, 5 min)
    "openai/gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075, source=BUILTIN),
    "openai/gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25, source=BUILTIN),
    "openai/gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50, source=BUILTIN),
    "openai/gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10, source=BUILTIN),
    "openai/gpt-4.1-nano": Price(input=0.10, output=0.40, cached_input=0.025, source=BUILTIN),
    "openai/gpt-5": Price(input=1.25, output=10.00, cached_input=0.125, source=BUILTIN),
    "openai/gpt-5-mini": Price(input=0.25, output=2.00, cached_input=0.025, source=BUILTIN),
    "openai/gpt-5-nano": Price(input=0.05, output=0.40, cached_input=0.005, source=BUILTIN),
    "anthropic/claude-opus-4-1": Price(input=15.00, output=75.00, cached_input=1.50, cache_write=18.75, source=BUILTIN),
    "anthropic/claude-sonnet-4-5": Price(input=3.00, output=15.00, cached_input=0.30, cache_write=3.75, source=BUILTIN),
    "anthropic/claude-sonnet-4": Price(input=3.00, output=15.00, cached_input=0.30, cache_write=3.75, source=BUILTIN),
    "anthropic/claude-haiku-4-5": Price(input=1.00, output=5.00, cached_input=0.10, cache_write=1.25, source=BUILTIN),
    "anthropic/claude-3-5-haiku": Price(input=0.80, output=4.00, cached_input=0.08, cache_write=1.00, source=BUILTIN),
}


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
            table[model] = Price.model_validate({**entry, "source": str(p)} if isinstance(entry, dict) else entry)
        except ValidationError:
            raise ConfigError(
                f'{p}: entry {model!r} must have numeric "input" and "output" prices in USD per 1M tokens, '
                f'e.g. ["{model}"] input = 0.15, output = 0.60'
            ) from None
    return table


#: what may follow a priced name and still be that model, as the providers spell versions: a
#: date (`-2024-08-06`, `-20250929`, `-0613`, `-preview-06-05`), a Gemini stable version (`-001`),
#: `-latest`/`-preview`/`-exp`, a Bedrock version (`-v1:0`), a Vertex version (`@20250929`,
#: `@001`), an OpenAI fine-tune's `:org:name:id`. Anything else is another model, or a misspelt
#: one (`gpt-4o-mni` is not `gpt-4o`, `claude-haiku-4-5x` is not Haiku): unknown, never guessed.
VERSION_SUFFIX = re.compile(
    r"(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{2}-\d{2}|-\d{3,4}|-latest|-preview|-exp|-v\d+"
    r"|@\d+|@latest|:\d+|:[\w-]+:[\w.-]*:\w+)*"
)


#: the version of the rule `spelt_out` applies to genai-prices' answers (part of the price cache key)
NAME_RULE = "names-2"


def _match(model: str, table: dict[str, Price]) -> Price | None:
    if model in table:
        return table[model]
    matches = [k for k in table if model.startswith(k) and VERSION_SUFFIX.fullmatch(model[len(k):])]
    return table[max(matches, key=len)] if matches else None


def spelt_out(name: str, names: set[str]) -> bool:
    """Whether `name` is one of `names`, or one plus a version suffix; after a path too (Google's
    `models/NAME`, a Bedrock ARN's `.../inference-profile/NAME`)."""
    name = name.lower()
    return any(rest.startswith(n) and VERSION_SUFFIX.fullmatch(rest[len(n):])
               for rest in {name, name.rpartition("/")[2]} for n in names if n)


def price_for(model: str, prices: dict[str, Price] | None = None) -> Price | None:
    """The price of `model` ("provider/model"), or None if unknown: an override in `prices` first,
    then genai-prices, then the built-in entries."""
    table = PRICES if prices is None else prices
    override = _match(model, {k: v for k, v in table.items() if v.source != BUILTIN})
    if override is not None:
        return override
    if _free(model.partition("/")[0]):
        return Price(input=0.0, output=0.0, source="local model")
    return maintained_price(model) or _match(model, {k: v for k, v in table.items() if v.source == BUILTIN})


def _free(prefix: str) -> bool:
    """An offline judge, or a provider whose calls cost nothing (a local server: its `free` hook)."""
    from ..backends.providers import known, provider

    return prefix == "baseline" or (known(prefix) and provider(prefix).free)


def _prices_id(prefix: str) -> str | None:
    """The genai-prices id of a provider (its `prices_id` hook), None for one it does not price."""
    from ..backends.providers import known, provider

    return provider(prefix).prices_id if known(prefix) else None


@lru_cache(maxsize=64)
def maintained_price(model: str) -> Price | None:
    """`model`'s list price from the genai-prices database (offline, bundled), or None when the
    package is not installed or does not know the model. The base tier is used (priced per call,
    as judge calls are small), not the long-context tier. Remembered on disk per installed
    database (`price_cache`): the package is imported only for a model not looked up before."""
    database = price_cache.installed()
    if database is None:
        return None
    database += f" {NAME_RULE}"  # a lookup remembered under an older name rule is made again
    known = price_cache.recall(database, model)
    if known is not price_cache.MISSING:
        return Price.model_validate(known) if known is not None else None
    price = _look_up(model)
    price_cache.remember(database, model, price.model_dump() if price is not None else None)
    return price


def _look_up(model: str) -> Price | None:
    provider, _, name = model.partition("/")
    provider_id = _prices_id(provider.lower())
    if provider_id is None or not name:
        return None
    try:
        import genai_prices
    except ImportError:
        return None
    try:
        probe = 1000  # tokens: well under any long-context tier
        calc_in = genai_prices.calc_price(genai_prices.Usage(input_tokens=probe), name, provider_id=provider_id)
        calc_out = genai_prices.calc_price(genai_prices.Usage(output_tokens=probe), name, provider_id=provider_id)
        calc_read = genai_prices.calc_price(genai_prices.Usage(input_tokens=probe, cache_read_tokens=probe), name,
                                            provider_id=provider_id)
        calc_write = genai_prices.calc_price(genai_prices.Usage(input_tokens=probe, cache_write_tokens=probe), name,
                                             provider_id=provider_id)
    except LookupError:
        return None
    except Exception:  # a broken price database never breaks a run: no estimate instead
        return None
    if not spelt_out(name, database_names(calc_in.model)):
        return None  # matched by a prefix or substring clause only: a typo, not this model
    scale = 1_000_000 / probe
    return Price(input=float(calc_in.input_price) * scale, output=float(calc_out.output_price) * scale,
                 cached_input=float(calc_read.input_price) * scale, cache_write=float(calc_write.input_price) * scale,
                 source=f"{MAINTAINED} {getattr(genai_prices, '__version__', '')}".strip())


def database_names(model: object) -> set[str]:
    """The names a genai-prices model entry spells out: its id, its `equals` names, and the stems
    of its `starts_with`/`contains`/`ends_with` clauses (without a trailing `-`, `@`, `.` or `:`).
    Its regexes are left out: they only admit a date after a name already here."""
    names = {str(getattr(model, "id", "")).lower()}
    stack = [getattr(model, "match", None)]
    while stack:
        clause = stack.pop()
        stack += getattr(clause, "or_", None) or getattr(clause, "and_", None) or []
        if (equals := getattr(clause, "equals", None)) is not None:
            names.add(str(equals).lower())
        for key in ("starts_with", "contains", "ends_with"):
            if (stem := getattr(clause, key, None)) is not None:
                names.add(str(stem).lower().rstrip("-@.:").lstrip("/"))
    return names


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
