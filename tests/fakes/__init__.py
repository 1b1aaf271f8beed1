"""The test fakes, in one package (import as `from fakes import FakeLLM, FakeProvider`).

`FakeLLM` (scripted.py) scripts replies behind an httpx MockTransport: the real openai/anthropic
SDKs and Instructor's parsing and re-asking run; only the HTTP replies are scripted.
`FakeProvider` (provider.py) is a rule-based OpenAI/Anthropic server on 127.0.0.1 for CLI and
batch tests, and the benchmarks' provider (`python tests/fakes/provider.py`).
`SchemaProvider` (schema_provider.py) answers any request with a seeded value of its JSON schema: the
in-repo stand-in for ../shared/tools/fake_llm.py, with its batch APIs (schema_batches.py), faults
(faults.py), rate limits (limited.py), latency and a request log.
labelled.py holds a few labelled rows of each kind (factual QA, faithfulness, spec review).
process.py starts `judgeflow` as a child process for the signal tests (`start_cli`), and the shared
schema-following fake (`schema_fake`).
items.py holds the Moscow example most tests judge (`moscow()`, `moscow_claims()`, `moscow_checks()`).
"""

from .items import (
                    MOSCOW_FOUNDER,
                    MOSCOW_QUESTION,
                    MOSCOW_REFERENCE,
                    MOSCOW_RIGHT,
                    MOSCOW_SOURCE,
                    MOSCOW_WHO_QUESTION,
                    MOSCOW_WHO_WRONG,
                    MOSCOW_WRONG,
                    moscow,
                    moscow_by_whom,
                    moscow_checks,
                    moscow_claims,
)
from .limited import LimitedLLM, ProviderLimit
from .process import schema_fake, start_cli, stored_count, wait_for_results
from .provider import FakeProvider
from .schema_provider import SchemaProvider
from .scripted import FakeLLM, RawArgs, Status, anthropic_body, openai_body

__all__ = ["FakeLLM", "FakeProvider", "SchemaProvider",
           "LimitedLLM", "ProviderLimit", "RawArgs", "Status", "anthropic_body", "openai_body",
           "MOSCOW_FOUNDER", "MOSCOW_QUESTION", "MOSCOW_REFERENCE", "MOSCOW_RIGHT", "MOSCOW_SOURCE",
           "MOSCOW_WHO_QUESTION", "MOSCOW_WHO_WRONG", "MOSCOW_WRONG",
           "moscow", "moscow_by_whom", "moscow_checks", "moscow_claims",
           "schema_fake", "start_cli", "stored_count", "wait_for_results"]
