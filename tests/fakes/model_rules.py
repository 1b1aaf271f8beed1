"""Per-model-family conformance rules for the schema fake (schema_provider.py, `model_rules=ModelRules()`,
`--model-rules`): requests are refused as each provider documents for the model named, with its error
texts, and replies spend hidden reasoning tokens out of the completion budget as each family does. It
goes further than ../shared/tools/fake_llm.py --model-rules (OpenAI's two parameter rules only).

OpenAI reasoning models (o1, o3, o4-mini; gpt-5, gpt-5-mini, gpt-5-nano; gpt-5.1 and later):
  https://platform.openai.com/docs/guides/reasoning
  - `max_tokens` refused (400, param max_tokens, code unsupported_parameter): "Unsupported parameter:
    'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
  - a temperature other than 1 refused (400, code unsupported_value): "Unsupported value: 'temperature'
    does not support 0 with this model. Only the default (1) value is supported." gpt-5.1 and later
    accept it at reasoning_effort none, their default (https://platform.openai.com/docs/guides/latest-model).
  - reasoning_effort outside the family's values refused: "Unsupported value: 'minimal' is not supported
    with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'." (the text in
    openai/openai-agents-python#2089); values per family as
    https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort lists them.
  - hidden reasoning tokens (REASONING per effort, x `scale`, + the prompt's tokens / 8) come out of
    max_completion_tokens and are billed in completion_tokens (completion_tokens_details.reasoning_tokens);
    a budget they eat gives an empty reply with finish_reason "length".
  - the Responses-only models (o1-pro, o3-pro, gpt-5-pro, codex) are refused on /chat/completions (404).
  - /v1/responses (https://platform.openai.com/docs/api-reference/responses/create): the token limit is
    max_output_tokens (max_tokens / max_completion_tokens: 400 "Unknown parameter"), the effort is
    reasoning.effort (values per family; gpt-5-pro "defaults to (and only supports) high",
    learn.microsoft.com/.../reasoningeffort), no temperature for reasoning models; reasoning tokens come out
    of max_output_tokens (usage.output_tokens_details.reasoning_tokens), a budget they eat gives status
    "incomplete", incomplete_details.reason "max_output_tokens" and a reasoning item alone.
  Other OpenAI-wire models (gpt-4o-mini) refuse `reasoning_effort`.
Anthropic (https://platform.claude.com/docs/en/build-with-claude/extended-thinking; adaptive:
https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html):
  - thinking.budget_tokens below 1024, or not below max_tokens: 400; a temperature other than 1 with
    thinking: 400; a forced tool_choice with thinking: 400 "Thinking may not be enabled when tool_choice
    forces tool use." (the text in mastra-ai/mastra#7507); Opus 4.7 refuses thinking.type "enabled".
  - thinking tokens (a thinking block first) are billed in output_tokens and reported apart as
    usage.output_tokens_details.thinking_tokens (the anthropic SDK's `OutputTokensDetails`; `thinking_split=False`
    leaves it out, as a gateway or an older API version does); a max_tokens they eat gives a reply of the
    thinking block alone, stop_reason "max_tokens".
Gemini generateContent (https://ai.google.dev/gemini-api/docs/thinking):
  - Gemini 2.5 takes generationConfig.thinkingConfig.thinkingBudget: 2.5 Pro 128-32768 (thinking cannot be
    turned off: budget 0 refused, "Budget 0 is invalid. This model only works in thinking mode." as in
    vercel/ai#8027), 2.5 Flash 0-24576, 2.5 Flash-Lite 0 or 512-24576; -1 is dynamic. thinkingLevel on a
    model before Gemini 3 is refused; Gemini 3 takes thinkingLevel (3 Pro: low, high; 3 Flash: minimal,
    low, medium, high); both at once are refused (400 INVALID_ARGUMENT).
  - thoughts are generated within maxOutputTokens and reported as usageMetadata.thoughtsTokenCount (billed
    as output); a budget they eat gives finishReason MAX_TOKENS and a candidate with no parts.
Local reasoning models (Qwen3, DeepSeek-R1 distills, QwQ) on an OpenAI-compatible server: the reply's
content starts with a `<think>...</think>` block (JSON-looking text inside, which must never be read
as the answer), and `reasoning_content` carries it too (vLLM's field); its tokens count in
completion_tokens, which the server does not split.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: hidden reasoning tokens per effort (OpenAI) or thinking tokens per effort (Anthropic), before `scale`
REASONING = {"none": 0, "minimal": 48, "low": 320, "medium": 1400, "high": 5200, "xhigh": 12000}

_OPENAI_FAMILIES: tuple[tuple[re.Pattern[str], tuple[str, ...], str, bool], ...] = (
    # (model pattern, accepted efforts, default effort, temperature accepted at effort none)
    (re.compile(r"^o1-mini"), (), "medium", False),
    (re.compile(r"^o\d"), ("low", "medium", "high"), "medium", False),
    (re.compile(r"^gpt-5\.1(?!\d)"), ("none", "low", "medium", "high"), "none", True),
    (re.compile(r"^gpt-5\.\d"), ("none", "low", "medium", "high", "xhigh"), "none", True),
    (re.compile(r"^gpt-5(?!-chat)"), ("minimal", "low", "medium", "high"), "medium", False),
)
#: efforts of the Responses-only families (the others take their chat family's, _OPENAI_FAMILIES)
_RESPONSES_EFFORTS = ((re.compile(r"^gpt-5(\.\d+)?-pro"), ("high",), "high"),
                      (re.compile(r"^(o\d+-pro|gpt-5(\.\d+)?-codex|codex-)"), ("low", "medium", "high"), "medium"))
_RESPONSES_ONLY = re.compile(r"^(o\d+-pro|gpt-5(\.\d+)?-pro|gpt-5(\.\d+)?-codex|codex-)")
_LOCAL_THINKING = re.compile(r"(qwen3|qwq|deepseek-r1)", re.I)
_ADAPTIVE_ONLY = re.compile(r"^claude-opus-4-7")
_THINK = ('The user wants JSON. Draft: {"claims": [{"text": "Paris is the capital of Germany"}]} '
          "- no, read the schema again and answer with it only.")


#: Gemini 2.5 thinking budgets: (model pattern, smallest budget other than 0, largest, 0 turns thinking off)
_GEMINI_BUDGETS = ((re.compile(r"^gemini-2\.5-pro"), 128, 32768, False),
                   (re.compile(r"^gemini-2\.5-flash-lite"), 512, 24576, True),
                   (re.compile(r"^gemini-2\.5-flash"), 1, 24576, True))
#: Gemini 3 thinking levels: (model pattern, levels accepted)
_GEMINI_LEVELS = ((re.compile(r"^gemini-3(\.\d+)?-pro"), ("low", "high")),
                  (re.compile(r"^gemini-[3-9]"), ("minimal", "low", "medium", "high")))


class RuleError(Exception):
    """A request refused as the provider refuses it: (status, error body)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(json.dumps(body))
        self.status, self.body = status, body


def _openai_error(message: str, param: str | None, code: str | None, status: int = 400) -> RuleError:
    return RuleError(status, {"error": {"message": message, "type": "invalid_request_error", "param": param,
                                        "code": code}})


def _anthropic_error(message: str) -> RuleError:
    return RuleError(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})


def _listed(values: tuple[str, ...]) -> str:
    quoted = [f"'{v}'" for v in values]
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}" if len(quoted) > 1 else quoted[0]


class ModelRules:
    """The rules, and what the replies spend. `scale` multiplies the reasoning per effort (a hungrier
    model); `log` holds (model, effort, reasoning tokens spent, budget, emptied) per reply."""

    def __init__(self, *, scale: float = 1.0, deployments: dict[str, str] | None = None,
                 thinking_split: bool = True) -> None:
        self.scale = scale
        self.thinking_split = thinking_split
        """Anthropic replies report their thinking tokens apart (output_tokens_details.thinking_tokens)."""
        self.deployments = deployments or {}
        """Azure deployment name -> the model it serves (Azure applies the model's rules to its deployments)."""
        self.log: list[tuple[str, str | None, int, int | None, bool]] = []

    # -- OpenAI wire -------------------------------------------------------------------------------
    def openai_family(self, model: str) -> tuple[tuple[str, ...], str, bool] | None:
        return next(((e, d, t) for p, e, d, t in _OPENAI_FAMILIES if p.match(model)), None)

    def model(self, body: dict[str, Any]) -> str:
        name = str(body.get("model", ""))
        return self.deployments.get(name, name)

    def check_openai(self, body: dict[str, Any]) -> None:
        model = self.model(body)
        if _RESPONSES_ONLY.match(model):
            raise _openai_error("This model is only supported in v1/responses and not in v1/chat/completions.",
                                "model", None, status=404)
        family = self.openai_family(model)
        effort = body.get("reasoning_effort")
        if family is None:
            if effort is not None and not _LOCAL_THINKING.search(model):
                raise _openai_error("Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                                    "reasoning_effort", "unsupported_parameter")
            return
        efforts, default, temp_at_none = family
        if "max_tokens" in body:
            raise _openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. "
                                "Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        if effort is not None and effort not in efforts:
            raise _openai_error(f"Unsupported value: '{effort}' is not supported with the '{model}' model. "
                                f"Supported values are: {_listed(efforts) if efforts else 'none'}.",
                                "reasoning_effort", "unsupported_value")
        for name in ("temperature", "top_p"):
            value = body.get(name)
            if value is not None and value != 1 and not (temp_at_none and (effort or default) == "none"):
                raise _openai_error(f"Unsupported value: '{name}' does not support {value:g} with this model. "
                                    "Only the default (1) value is supported.", name, "unsupported_value")

    def shape_openai(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        """The reply with the family's hidden reasoning spent from the completion budget."""
        model = self.model(body)
        family = self.openai_family(model)
        usage, choice = reply["usage"], reply["choices"][0]
        if family is None:
            if _LOCAL_THINKING.search(model):
                return self._local_thinking(body, reply)
            return reply
        effort = body.get("reasoning_effort") or family[1]
        spent = int(REASONING.get(effort, 0) * self.scale) + (usage["prompt_tokens"] // 8 if effort != "none" else 0)
        budget = body.get("max_completion_tokens")
        answer = usage["completion_tokens"]
        emptied = budget is not None and spent >= budget
        if emptied:
            spent, answer = budget, 0
            choice["message"] = {"role": "assistant", "content": "", "refusal": None}
            choice["finish_reason"] = "length"
        elif budget is not None and spent + answer > budget:  # the answer cut off
            answer = budget - spent
            choice["finish_reason"] = "length"
        usage["completion_tokens"] = spent + answer
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        usage["completion_tokens_details"] = {"reasoning_tokens": spent, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
        self.log.append((model, effort, spent, budget, emptied))
        return reply

    def _local_thinking(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        message = reply["choices"][0]["message"]
        think = f"<think>\n{_THINK}\n</think>\n\n"
        message["content"] = think + (message.get("content") or "")
        message["reasoning_content"] = _THINK
        reply["usage"]["completion_tokens"] += len(think) // 4
        reply["usage"]["total_tokens"] = reply["usage"]["prompt_tokens"] + reply["usage"]["completion_tokens"]
        self.log.append((str(body.get("model")), None, len(think) // 4, body.get("max_tokens"), False))
        return reply

    # -- Anthropic wire ----------------------------------------------------------------------------
    def check_anthropic(self, body: dict[str, Any]) -> None:
        thinking = body.get("thinking") or {}
        kind = thinking.get("type")
        if kind not in ("enabled", "adaptive"):
            return
        model = str(body.get("model", ""))
        if kind == "enabled" and _ADAPTIVE_ONLY.match(model):
            raise _anthropic_error(f"thinking.type: 'enabled' is not supported for {model}; use "
                                   "thinking.type: 'adaptive' with output_config.effort")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                raise _anthropic_error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
            if budget >= int(body.get("max_tokens") or 0):
                raise _anthropic_error("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult "
                                       "our documentation at https://docs.claude.com/en/docs/build-with-claude/"
                                       "extended-thinking#max-tokens-and-context-window-size")
        if body.get("temperature") not in (None, 1):
            raise _anthropic_error("`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                                   "documentation at https://docs.claude.com/en/docs/build-with-claude/"
                                   "extended-thinking#feature-compatibility")
        if (body.get("tool_choice") or {}).get("type") in ("tool", "any"):
            raise _anthropic_error("Thinking may not be enabled when tool_choice forces tool use.")

    def shape_anthropic(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        thinking = body.get("thinking") or {}
        if thinking.get("type") not in ("enabled", "adaptive"):
            return reply
        effort = ((body.get("output_config") or {}).get("effort") or "high") if thinking["type"] == "adaptive" \
            else "medium"
        spent = int(REASONING.get(effort, 0) * self.scale)
        if thinking["type"] == "enabled":
            spent = min(spent, int(thinking["budget_tokens"]))
        usage, limit = reply["usage"], int(body.get("max_tokens") or 0)
        block = {"type": "thinking", "thinking": _THINK, "signature": "c2lnbmF0dXJl"}
        emptied = spent >= limit
        if emptied:
            spent = limit
            reply["content"], reply["stop_reason"] = [block], "max_tokens"
            usage["output_tokens"] = limit
        else:
            reply["content"] = [block, *reply["content"]]
            usage["output_tokens"] += spent
        if self.thinking_split:
            usage["output_tokens_details"] = {"thinking_tokens": spent}
        self.log.append((str(body.get("model")), effort, spent, limit, emptied))
        return reply

    # -- Gemini generateContent -------------------------------------------------------------------------
    def check_gemini(self, model: str, body: dict[str, Any]) -> None:
        budget, level = _thinking(body)
        if budget is not None and level is not None:
            raise _gemini_error("You can only set one of thinking budget and thinking level.")
        ranges = next((r for r in _GEMINI_BUDGETS if r[0].match(model)), None)
        if level is not None and ranges is not None:
            raise _gemini_error("Thinking level is not supported for this model.")
        if level is not None:
            levels = next((lv for p, lv in _GEMINI_LEVELS if p.match(model)), ())
            if str(level).lower() not in levels:
                raise _gemini_error(f"Thinking level {level} is not supported for {model}; supported levels are "
                                    f"{', '.join(levels)}.")
        if budget is None or ranges is None or budget == -1:
            return
        _, low, high, can_disable = ranges
        if budget == 0 and not can_disable:
            raise _gemini_error("Budget 0 is invalid. This model only works in thinking mode.")
        if budget != 0 and not low <= budget <= high:
            raise _gemini_error(f"The thinking budget {budget} is invalid. Please choose a value between {low} "
                                f"and {high}.")

    def shape_gemini(self, model: str, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        """The reply with the thoughts spent from maxOutputTokens (2.5: up to the budget; dynamic: medium)."""
        config = body.get("generationConfig") or {}
        budget, level = _thinking(body)
        level = str(level or "").lower()
        usage, candidate = reply["usageMetadata"], reply["candidates"][0]
        effort = level or ("high" if next((r for r in _GEMINI_BUDGETS if r[0].match(model)), None) is None
                           else "medium")
        spent = int(REASONING.get(effort, 0) * self.scale) + usage["promptTokenCount"] // 8
        if budget == 0:
            spent = 0
        elif isinstance(budget, int) and budget > 0:
            spent = min(spent, budget)
        limit = config.get("maxOutputTokens")
        emptied = limit is not None and spent >= limit
        if emptied:
            spent = limit
            candidate["content"], candidate["finishReason"] = {"role": "model"}, "MAX_TOKENS"
            usage["candidatesTokenCount"] = 0
        if spent:
            usage["thoughtsTokenCount"] = spent
        usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"] + spent
        self.log.append((model, level or (str(budget) if budget is not None else None), spent, limit, emptied))
        return reply

    # -- OpenAI Responses API ---------------------------------------------------------------------------
    def responses_family(self, model: str) -> tuple[tuple[str, ...], str] | None:
        own = next(((e, d) for p, e, d in _RESPONSES_EFFORTS if p.match(model)), None)
        chat = self.openai_family(model)
        return own or ((chat[0], chat[1]) if chat else None)

    def check_responses(self, body: dict[str, Any]) -> None:
        model = self.model(body)
        for name in ("max_tokens", "max_completion_tokens"):
            if name in body:
                raise _openai_error(f"Unknown parameter: '{name}'.", name, "unknown_parameter")
        family = self.responses_family(model)
        effort = (body.get("reasoning") or {}).get("effort")
        if family is None:
            if effort is not None:
                raise _openai_error("Unsupported parameter: 'reasoning.effort' is not supported with this model.",
                                    "reasoning.effort", "unsupported_parameter")
            return
        if effort is not None and effort not in family[0]:
            raise _openai_error(f"Unsupported value: '{effort}' is not supported with the '{model}' model. "
                                f"Supported values are: {_listed(family[0])}.", "reasoning.effort", "unsupported_value")
        if body.get("temperature") not in (None, 1):
            raise _openai_error("Unsupported parameter: 'temperature' is not supported with this model.",
                                "temperature", "unsupported_parameter")

    def shape_responses(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        model = self.model(body)
        family = self.responses_family(model)
        if family is None:
            return reply
        usage = reply["usage"]
        effort = (body.get("reasoning") or {}).get("effort") or family[1]
        spent = int(REASONING.get(effort, 0) * self.scale) + usage["input_tokens"] // 8
        budget, answer = body.get("max_output_tokens"), usage["output_tokens"]
        emptied = budget is not None and spent >= budget
        reasoning = {"type": "reasoning", "id": "rs_fake", "summary": []}
        if emptied:
            spent, answer = budget, 0
            reply["output"] = [reasoning]
            reply["status"], reply["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
        else:
            reply["output"] = [reasoning, *reply["output"]]
        usage["output_tokens"] = spent + answer
        usage["output_tokens_details"] = {"reasoning_tokens": spent}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        self.log.append((model, effort, spent, budget, emptied))
        return reply


def _thinking(body: dict[str, Any]) -> tuple[Any, Any]:
    """(thinkingBudget, thinkingLevel) of a request; the API reads JSON fields in lowerCamel or snake case
    (protobuf JSON), so both are read here."""
    config = body.get("generationConfig") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    return (thinking.get("thinkingBudget", thinking.get("thinking_budget")),
            thinking.get("thinkingLevel", thinking.get("thinking_level")))


def _gemini_error(message: str) -> RuleError:
    return RuleError(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})

