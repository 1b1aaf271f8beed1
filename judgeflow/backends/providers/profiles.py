"""Model profiles: what each provider's model families accept, as data (in the way of pydantic-ai's
`profiles/` and LiteLLM's per-family configs), each rule beside the documentation it comes from.

    profile_of("openai/gpt-5-mini")                   # Profile(family="gpt-5", token_param="max_completion_tokens", ...)
    profile_of("azure/my-deploy", "openai/gpt-5.1")   # a name judgeflow cannot know, given a profile (--profile)
    profile_of("openai/gpt-4o-mini").reasons          # False: its requests are exactly as before

A profile says: the token limit's parameter name, whether a non-default temperature is accepted (and
at which efforts), the reasoning knob and its documented values, judgeflow's default effort, the
reasoning allowance added to each step's reply budget per effort (reasoning shares the completion
budget), and whether the model is reached only through an API judgeflow does not speak (refused
before any call). A model not matched here keeps today's requests: no profile, no change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import ConfigError

#: where each rule comes from
OPENAI_REASONING = "https://platform.openai.com/docs/guides/reasoning"
OPENAI_EFFORTS = (
    "https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort"
)
OPENAI_GPT51 = "https://platform.openai.com/docs/guides/latest-model"  # temperature only with effort none (gpt-5.1+)
ANTHROPIC_THINKING = "https://platform.claude.com/docs/en/build-with-claude/extended-thinking"
ANTHROPIC_ADAPTIVE = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html"
)
GEMINI_THINKING = "https://ai.google.dev/gemini-api/docs/thinking"

#: --reasoning-effort values judgeflow understands (each family accepts a subset; see EFFORTS)
EFFORT_NAMES = ("none", "minimal", "low", "medium", "high", "xhigh")
#: reasoning tokens allowed per effort on top of a step's reply budget (the completion budget holds both;
#: a reply emptied by reasoning is asked once more with twice the allowance). Judging replies are short
#: (about 100-400 tokens); these are the ceilings, not what is billed: only tokens used are billed.
ALLOWANCE = {"none": 0, "minimal": 512, "low": 2048, "medium": 4096, "high": 8192, "xhigh": 16384}
#: Anthropic's smallest thinking budget (ANTHROPIC_THINKING: "budget_tokens ... minimum of 1,024")
ANTHROPIC_MIN_THINKING = 1024


@dataclass(frozen=True)
class Profile:
    """What one model family accepts."""

    family: str
    #: it reasons (hidden tokens taken from the completion budget)
    reasons: bool = False
    #: the request's token-limit parameter
    token_param: str = "max_tokens"
    #: a non-default temperature is accepted at these efforts ("*": always)
    temperature_at: tuple[str, ...] = ("*",)
    #: the reasoning knob (None: none sent; the effort only sizes the allowance): "reasoning_effort" (OpenAI),
    #: "thinking" (Anthropic budget_tokens),
    #: "adaptive" (Anthropic thinking.type adaptive + output_config.effort), "thinking_budget" (Gemini 2.5),
    #: "thinking_level" (Gemini 3)
    knob: str | None = None
    #: --reasoning-effort values the family accepts (documented)
    efforts: tuple[str, ...] = ()
    #: judgeflow's default effort for the family (docs/reasoning.md says why)
    default_effort: str | None = None
    #: reachable only through an API judgeflow does not speak: why (refused before any call)
    refused: str | None = None
    #: the API it is served by: "chat" (Chat Completions, Messages, generateContent) or "responses"
    #: (OpenAI's Responses API only: `reasoning.effort`, `max_output_tokens`, function tools)
    api: str = "chat"
    #: the documentation of these rules
    source: str = ""

    def effort(self, asked: str | None) -> str | None:
        """The effort sent (None: the knob is not sent); a value the family does not accept is a ConfigError."""
        if not self.reasons or not self.efforts:
            if asked not in (None, "none") and not self.reasons:
                raise ConfigError(
                    f"--reasoning-effort {asked} is for reasoning models; {self.family} does not reason "
                    "(drop --reasoning-effort, or give the model's family with --profile)"
                )
            return None
        effort = asked or self.default_effort
        if effort is not None and effort not in self.efforts:
            raise ConfigError(
                f"--reasoning-effort {effort} is not accepted by {self.family} models; use one of "
                f"{', '.join(self.efforts)} ({self.source})"
            )
        return effort

    def takes_temperature(self, effort: str | None) -> bool:
        """Whether a non-default temperature may be sent at this effort."""
        return "*" in self.temperature_at or (effort or "") in self.temperature_at

    def allowance(self, effort: str | None) -> int:
        """Reasoning tokens allowed on top of the reply budget at this effort (0: not a reasoning request)."""
        if not self.reasons or effort is None:
            return 0
        if self.knob == "thinking":
            return max(ALLOWANCE.get(effort, 0), ANTHROPIC_MIN_THINKING) if effort != "none" else 0
        return ALLOWANCE.get(effort, 0)


PLAIN = Profile(family="plain")

_OPENAI_O = dict(
    reasons=True,
    token_param="max_completion_tokens",
    temperature_at=(),
    knob="reasoning_effort",
    efforts=("low", "medium", "high"),
    default_effort="low",
    source=OPENAI_REASONING,
)
_GPT5 = dict(_OPENAI_O, efforts=("minimal", "low", "medium", "high"), source=OPENAI_EFFORTS)
_GPT51 = dict(
    _OPENAI_O,
    efforts=("none", "low", "medium", "high"),
    temperature_at=("none",),
    source=OPENAI_GPT51,
)
_GPT52 = dict(_GPT51, efforts=("none", "low", "medium", "high", "xhigh"))
#: Responses-only families: OpenAI's Responses API (/v1/responses) with `reasoning.effort` and
#: `max_output_tokens` (Instructor's RESPONSES_TOOLS mode; https://platform.openai.com/docs/api-reference/responses)
_RESPONSES = dict(
    reasons=True,
    token_param="max_tokens",
    temperature_at=(),
    knob="reasoning",
    api="responses",
    efforts=("low", "medium", "high"),
    default_effort="low",
    source=OPENAI_REASONING,
)

#: (provider wire family, model-name pattern, profile): the first match wins. Patterns match the model
#: part of "provider/model" (an Azure deployment name matches only by --profile).
PROFILES: tuple[tuple[str, re.Pattern[str], Profile], ...] = (
    # OpenAI: Responses-only models (OPENAI_REASONING; o1-pro, o3-pro, gpt-5-pro, the codex models), judged
    # through /v1/responses. gpt-5-pro "defaults to (and only supports) high" (OPENAI_EFFORTS)
    (
        "openai",
        re.compile(r"^gpt-5(\.\d+)?-pro"),
        Profile(
            family="gpt-5-pro",
            **dict(_RESPONSES, efforts=("high",), default_effort="high", source=OPENAI_EFFORTS),
        ),
    ),
    (
        "openai",
        re.compile(r"^(o\d+-pro|gpt-5(\.\d+)?-codex|codex-)"),
        Profile(family="responses-only", **_RESPONSES),
    ),
    # gpt-5-chat-latest is not a reasoning model (OPENAI_EFFORTS: "all but gpt-5-chat-latest")
    (
        "openai",
        re.compile(r"^gpt-5(\.\d+)?-chat"),
        Profile(family="gpt-5-chat", token_param="max_completion_tokens"),
    ),
    # o1-mini and o1-preview take no system message, tools or structured outputs (OPENAI_REASONING, the
    # beta limitations), which every judging request needs; o1, o3, o3-mini, o4-mini take reasoning_effort
    (
        "openai",
        re.compile(r"^o1-(mini|preview)"),
        Profile(
            family="o1-mini",
            reasons=True,
            source=OPENAI_REASONING,
            refused="takes no system message, tools or structured outputs, which judging needs; judge with "
            "openai/o4-mini or openai/o3-mini",
        ),
    ),
    ("openai", re.compile(r"^o\d"), Profile(family="o-series", **_OPENAI_O)),
    # gpt-5.1: none/low/medium/high, default none; temperature only at none (OPENAI_GPT51, OPENAI_EFFORTS)
    ("openai", re.compile(r"^gpt-5\.1(?!\d)"), Profile(family="gpt-5.1", **_GPT51)),
    # gpt-5.2 and later add xhigh (OPENAI_EFFORTS: "xhigh is supported for all models after gpt-5.1-codex-max")
    ("openai", re.compile(r"^gpt-5\.\d"), Profile(family="gpt-5.2+", **_GPT52)),
    # gpt-5, gpt-5-mini, gpt-5-nano: minimal/low/medium/high, default medium; temperature only 1
    ("openai", re.compile(r"^gpt-5"), Profile(family="gpt-5", **_GPT5)),
    # local reasoning models (vLLM, Ollama, llama.cpp): thinking in the content (<think>...</think>) or in
    # reasoning_content, out of max_tokens; no knob (the effort only sizes the allowance)
    (
        "openai",
        re.compile(r".*(qwen3|qwq|deepseek-r1|gpt-oss)"),
        Profile(
            family="local-thinking",
            reasons=True,
            efforts=("low", "medium", "high"),
            default_effort="low",
            source="https://qwen.readthedocs.io/en/latest/deployment/vllm.html",
        ),
    ),
    # Anthropic: adaptive thinking only on Opus 4.7 (ANTHROPIC_ADAPTIVE: "only support adaptive thinking ...
    # budget_tokens ... will return a 400 error"); adaptive or budgeted on Opus/Sonnet 4.6
    (
        "anthropic",
        re.compile(r"^claude-(opus-4-[7-9]|opus-[5-9]|sonnet-[5-9]|mythos|fable)"),
        Profile(
            family="claude-adaptive",
            reasons=True,
            knob="adaptive",
            temperature_at=("none",),
            efforts=("none", "low", "medium", "high"),
            default_effort="none",
            source=ANTHROPIC_ADAPTIVE,
        ),
    ),
    # budget_tokens >= 1024 and < max_tokens; no forced tool_choice; temperature unset with thinking
    (
        "anthropic",
        re.compile(r"^claude-(3-7|sonnet-4|opus-4|haiku-4-5)"),
        Profile(
            family="claude-thinking",
            reasons=True,
            knob="thinking",
            temperature_at=("none",),
            efforts=("none", "low", "medium", "high"),
            default_effort="none",
            source=ANTHROPIC_THINKING,
        ),
    ),
    # Gemini (GEMINI_THINKING): thoughts are generated within maxOutputTokens (the budget holds the allowance
    # plus the reply) and billed as output (usage_metadata.thoughts_token_count). Gemini 2.5 takes
    # thinking_config.thinking_budget = the allowance: 2.5 Pro 128-32768, thinking cannot be turned off
    # (budget 0 refused, so no "none"); 2.5 Flash 0-24576 and Flash-Lite 0 or 512-24576 (0: off)
    (
        "google",
        re.compile(r"^gemini-2\.5-pro"),
        Profile(
            family="gemini-2.5-pro",
            reasons=True,
            knob="thinking_budget",
            efforts=("low", "medium", "high"),
            default_effort="low",
            source=GEMINI_THINKING,
        ),
    ),
    (
        "google",
        re.compile(r"^gemini-2\.5-flash"),
        Profile(
            family="gemini-2.5-flash",
            reasons=True,
            knob="thinking_budget",
            efforts=("none", "low", "medium", "high"),
            default_effort="low",
            source=GEMINI_THINKING,
        ),
    ),
    # Gemini 3 takes thinking_config.thinking_level (thinking_budget and thinking_level together: a 400):
    # 3 Pro low or high (default high); 3 Flash minimal, low, medium, high (GEMINI_THINKING, "thinking levels")
    (
        "google",
        re.compile(r"^gemini-3(\.\d+)?-pro"),
        Profile(
            family="gemini-3-pro",
            reasons=True,
            knob="thinking_level",
            efforts=("low", "high"),
            default_effort="low",
            source=GEMINI_THINKING,
        ),
    ),
    (
        "google",
        re.compile(r"^gemini-[3-9]"),
        Profile(
            family="gemini-3",
            reasons=True,
            knob="thinking_level",
            efforts=("minimal", "low", "medium", "high"),
            default_effort="low",
            source=GEMINI_THINKING,
        ),
    ),
)


#: providers whose model names are another provider's (an Azure deployment is often named after its model)
WIRE_OF = {"azure": "openai", "ollama": "openai"}


def profile_of(model: str, given: str | None = None) -> Profile:
    """The profile of "provider/model"; `given` ("openai/gpt-5.1") names the family of a model whose name
    judgeflow cannot know (an Azure deployment, a model behind an OpenAI-compatible server)."""
    ref = given or model
    provider, _, name = ref.partition("/")
    if given is not None and not name:
        raise ConfigError(
            f"--profile {given!r} must be provider/model, e.g. --profile openai/gpt-5.1"
        )
    family = WIRE_OF.get(provider.lower(), provider.lower())
    name = name.lower()
    for wire, pattern, profile in PROFILES:
        if wire == family and pattern.match(name):
            return profile
    if given is not None and not any(wire == family for wire, _, _ in PROFILES):
        raise ConfigError(
            f"--profile {given!r}: no profiles for {provider}/ models; use an openai/, anthropic/ or "
            "google/ model name"
        )
    return PLAIN
