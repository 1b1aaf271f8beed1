"""The one seam to LLM providers, built on Instructor.

`make_client("provider/model", base_url=..., api_key=...)` (providers.py: per-provider
construction) returns an `LLMClient` (client.py: the ask loop); everything else receives it. What
differs between providers is a `Wire` of hooks (backends/providers/: the OpenAI wire's defaults in
wire.py, each other wire in its provider's module), never a branch in the loop; what a
failure means is failures.py. `LLMClient.ask()` sends typed requests (Instructor validates and re-asks on a
`ValidationError`), counts calls, tokens, repairs and re-asks, and turns every provider or
parsing failure into `LLMError`. This is the only module that imports instructor, openai or
anthropic, and it imports them only when a request is really sent: an openai/ model never loads
anthropic, and a run served entirely from the response cache loads neither (seconds at start-up).

Providers: `openai/<model>`, `anthropic/<model>`, `ollama/<model>`, `azure/<deployment>`;
through Instructor's `from_provider`: `google/<model>` (Gemini), `bedrock/<model>`,
`mistral/<model>`. With `base_url`, `openai/` speaks to any OpenAI-compatible server (vLLM,
llama.cpp, LM Studio) and `anthropic/` to any Anthropic-compatible endpoint.

What the boundary does for the caller (structured output modes, sized requests, loud systemic
failures, rate limits) is described once, in client.py, beside the loop that does it.
"""

from ..providers import wire_of
from ..providers.wire import Wire
from .client import (
           DEFAULT_MAX_TOKENS_CAP,
           FALLBACK,
           STRUCTURED,
           SYSTEMIC_LIMIT,
           LLMClient,
           count_usage,
           prepared,
)
from .failures import classify
from .providers import PROVIDERS, check_base_url, make_client, parse_model

__all__ = ["DEFAULT_MAX_TOKENS_CAP", "FALLBACK", "PROVIDERS", "STRUCTURED", "SYSTEMIC_LIMIT", "LLMClient", "Wire",
           "check_base_url", "classify", "count_usage", "make_client", "parse_model", "prepared", "wire_of"]
