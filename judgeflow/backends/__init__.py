"""Backends: what the graph's decompose / check / single nodes call.

`llm_judge.LLMJudge` asks a model through the Instructor seam in `llm`; `lexical` and `rouge`
judge offline; `passages` cuts long sources. `make_backend` picks one from a "provider/model" string.
"""

from .llm_judge import (
    DEFAULT_MODEL_ENV,
    OFFLINE_MODEL,
    Backend,
    LLMJudge,
    default_model,
    make_backend,
    prompt_fields,
    single_from_steps,
)

__all__ = [
    "DEFAULT_MODEL_ENV",
    "OFFLINE_MODEL",
    "Backend",
    "LLMJudge",
    "default_model",
    "make_backend",
    "prompt_fields",
    "single_from_steps",
]
