"""The test fakes, in one package (import as `from fakes import FakeLLM, FakeProvider`).

`FakeLLM` (scripted.py) scripts replies behind an httpx MockTransport: the real openai/anthropic
SDKs and Instructor's parsing and re-asking run; only the HTTP replies are scripted.
`FakeProvider` (provider.py) is a rule-based OpenAI/Anthropic server on 127.0.0.1 for CLI and
batch tests, and the benchmarks' provider (`python tests/fakes/provider.py`).
"""

from .provider import FakeProvider
from .scripted import FakeLLM, RawArgs, Status, anthropic_body, openai_body

__all__ = ["FakeLLM", "FakeProvider", "RawArgs", "Status", "anthropic_body", "openai_body"]
