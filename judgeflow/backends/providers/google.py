"""google/<model>: Gemini through the google-genai SDK and Instructor's `from_genai` (pip install
'judgeflow[google]'); a --base-url goes to the SDK client (`HttpOptions(base_url=...)`), so a gateway or a
test's fake speaks for the Gemini API.

Thinking (https://ai.google.dev/gemini-api/docs/thinking): Gemini 2.5 takes
`thinking_config.thinking_budget` (tokens), Gemini 3 `thinking_config.thinking_level`; the thoughts are
generated within `max_output_tokens`, which is why the client's budget holds the allowance plus the reply
(profiles.GEMINI_*), and billed as output: `usage_metadata.thoughts_token_count`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .base import FromProvider, missing_key
from .wire import Wire

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .profiles import Profile


class Google(FromProvider):
    name = "google"
    prices_id = 'google'
    key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY",)
    from_provider = ("google.genai", "google")
    error_modules = ()
    takes_base_url = True

    def make_wire(self) -> Wire:
        return GoogleWire()

    def instructor_client(self, model: str, base_url: str | None, api_key: str | None, structured: str,
                          timeout: float | None) -> Any:
        """Instructor over a google-genai async client; `base_url` (a gateway, a test's fake) and the
        timeout go to the SDK client's HttpOptions, never to the create call."""
        import instructor
        from google import genai
        from google.genai import types

        key = api_key or next((os.environ[e] for e in self.key_env if os.environ.get(e)), None)
        if not key:
            if base_url is None:
                raise missing_key(model, self.key_env[0])
            key = "not-needed"
        options = types.HttpOptions(base_url=base_url, timeout=int(timeout * 1000) if timeout else None)
        client = genai.Client(api_key=key, http_options=options)
        # the genai handlers: TOOLS (a forced function call) and JSON (response_schema, Gemini's structured output)
        mode = instructor.Mode.TOOLS if structured in ("auto", "tools") else instructor.Mode.JSON
        return instructor.from_genai(client, mode=mode, use_async=True)


class GoogleWire(Wire):
    """The Gemini generateContent wire as Instructor's genai handlers build it: OpenAI-style arguments
    (`max_tokens`, `temperature`) mapped into `GenerateContentConfig`, and `thinking_config` taken from
    the create call."""

    name = "google"

    def reasoning(self, kwargs: dict[str, Any], profile: Profile, effort: str) -> None:
        """Gemini 2.5: `thinking_budget` = the allowance (0 turns thinking off where the model allows it);
        Gemini 3: `thinking_level` = the effort. Never both (a 400: GEMINI_THINKING)."""
        from google.genai import (
            types,  # typed, so the SDK writes the API's field names (thinkingConfig.thinkingBudget)
        )

        if profile.knob == "thinking_budget":
            kwargs["thinking_config"] = types.ThinkingConfig(thinking_budget=profile.allowance(effort))
        elif profile.knob == "thinking_level":
            kwargs["thinking_config"] = types.ThinkingConfig(thinking_level=effort.upper())

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}  # the genai SDK takes no extra_body


PROVIDER = Google()
