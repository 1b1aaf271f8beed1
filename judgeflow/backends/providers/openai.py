"""openai/<model>: OpenAI's API, or any OpenAI-compatible server with --base-url (vLLM, llama.cpp, LM Studio)."""

from __future__ import annotations

from .base import Provider


class OpenAI(Provider):
    name = "openai"
    batch = "judgeflow.runs.batch.openai:OpenAIBatches"


PROVIDER = OpenAI()
