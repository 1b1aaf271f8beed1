"""`Provider`: everything judgeflow knows of one provider, as hooks (in the way of inspect_ai's
`_providers/` and pydantic-ai's `providers/`): its wire, key variables, limit headers, request
cost, error family and batch adapter. The ask loop, the limiter, the paced transport, the batch
runner and the CLI ask these hooks and never compare provider names (tests/test_architecture.py).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ...errors import ConfigError
from .wire import ResponsesWire, Wire


class SdkArgs(NamedTuple):
    """How to make its SDK client: `module.cls(**kwargs)` (made in the event loop that uses it, backends/connections.py)."""

    module: str
    cls: str
    kwargs: dict[str, Any]


class Provider:
    """A provider speaking the OpenAI wire through its own SDK client: the defaults every hook falls back to."""

    #: the model prefix ("openai" in "openai/gpt-4o-mini")
    name = "openai"
    #: the wire family: whose request format, rate-limit headers and token counting it uses
    family = "openai"
    #: the family as people say it (errors, the CLI)
    family_title = "OpenAI"
    #: environment variables holding its key (masked by value in everything recorded)
    key_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    #: the Python SDK package and the root class of its exceptions (a refused request raises one of these)
    sdk_module: str | None = "openai"
    error_base: str | None = "OpenAIError"
    #: "module:Class" of its batch API adapter, if it has one (runs/batch/)
    batch: str | None = None
    #: reached through Instructor's `from_provider`: (SDK module, pip extra)
    from_provider: tuple[str, str] | None = None
    #: its calls cost nothing (a local server)
    free = False
    #: it runs on this machine unless a base URL says otherwise (ollama): its requests get the local deadline
    local = False
    #: its id in the genai-prices database (None: not priced there)
    prices_id: str | None = "openai"
    #: --structured modes it refuses, with why
    refuses: dict[str, str] = {}

    _wire: Wire | None = None

    def wire(self) -> Wire:
        """The hooks of its wire in the ask loop (`wire.Wire`), made once."""
        if self._wire is None:
            self._wire = self.make_wire()
        return self._wire

    def wire_for(self, api: str) -> Wire:
        """Its wire for a model served by `api` (profiles.Profile.api): OpenAI's Responses API, or its own."""
        if api == "responses":
            return ResponsesWire()
        return self.wire()

    def make_wire(self) -> Wire:
        """Its wire's hooks: the OpenAI wire's defaults; a provider whose wire differs returns its own."""
        return Wire()

    def tpm_bucket(self) -> str:
        """The limiter bucket `--tpm` fills: all tokens on the OpenAI wire."""
        return "tokens"

    def costs(self, tokens: float, out: float) -> tuple[float, float, float, float]:
        """(requests, tokens, input tokens, output tokens) one request costs, as the provider counts them."""
        return (1.0, tokens + out, 0.0, 0.0)

    def temperature(self, temperature: float | None, base_url: str | None) -> float | None:
        """The temperature it is sent (None: not sent)."""
        return temperature

    def owns_error(self, e: BaseException) -> bool:
        """An exception of its SDK that is a provider error (for SDKs judgeflow does not import itself)."""
        return False

    def sdk_client(self, model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                   **kwargs: Any) -> tuple[SdkArgs, str | None]:
        """(how to make its SDK client, effective base URL) for this provider (a local server without a key
        gets a placeholder)."""
        key = api_key or os.environ.get(self.key_env[0])
        if not key:
            if base_url is None:
                raise missing_key(model, self.key_env[0])
            key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
        return SdkArgs("openai", "AsyncOpenAI", dict(api_key=key, base_url=base_url, **kwargs)), base_url


def missing_key(model: str, env: str) -> ConfigError:
    return ConfigError(f"model {model!r} needs an API key: set the {env} environment variable, "
                       "or use --model baseline/lexical to judge offline")


class FromProvider(Provider):
    """A provider reached through Instructor's `from_provider` (its SDK is an optional extra)."""

    sdk_module = None
    error_base = None
    #: its `instructor_client` gives --base-url to its SDK client (from_provider cannot)
    takes_base_url = False
    refuses = {"tools_strict": "is for OpenAI-wire models; {name}/ supports auto, tools, json_schema and json"}

    def owns_error(self, e: BaseException) -> bool:
        from instructor.core.exceptions import InstructorError
        from pydantic import ValidationError

        root = (self.from_provider or ("",))[0].split(".")[0]
        own = type(e).__module__.split(".")[0]
        return own in (root, *self.error_modules) and not isinstance(e, (ValidationError, InstructorError))

    #: module roots of its SDK's errors besides the SDK's own (boto3 raises botocore's)
    error_modules: tuple[str, ...] = ()

    def instructor_client(self, model: str, base_url: str | None, api_key: str | None, structured: str,
                          timeout: float | None) -> Any:
        """Its Instructor client built from its own SDK client (which takes `base_url`), or None: reached
        through `instructor.from_provider`, which takes no base URL."""
        return None
