"""Issue 8: a misspelt backend option is a clear ConfigError with a suggestion, on every backend
(it was silently ignored by baseline/lexical and a raw TypeError on the LLM path)."""

import inspect

import pytest

from judgeflow import ConfigError, Judge
from judgeflow.backends import LLM_OPTIONS, make_backend


@pytest.mark.parametrize("model", ["baseline/lexical", "baseline/rouge-l", "openai/gpt-4o-mini",
                                   "anthropic/claude-sonnet-4-5", "ollama/llama3.1"])
def test_misspelt_option_is_a_config_error_with_a_suggestion(model):
    with pytest.raises(ConfigError, match=r"unknown option 'threshhold'.*did you mean 'threshold'"):
        Judge(model, threshhold=0.9)


def test_misspelt_client_option_names_the_right_one():
    with pytest.raises(ConfigError, match=r"unknown option 'temprature'.*did you mean 'temperature'"):
        make_backend("openai/gpt-4o-mini", temprature=0.2, api_key="x")


def test_known_options_still_work():
    assert make_backend("baseline/lexical", threshold=0.7).threshold == 0.7
    assert Judge("openai/gpt-4o-mini", api_key="x", temperature=0.1, max_claims_per_check=5).backend.max_claims_per_check == 5


def test_make_client_takes_one_config_object():
    """Every client option is a field of ClientConfig, passed whole (no keyword list to keep in step)."""
    from judgeflow.backends.llm import make_client
    from judgeflow.config import ClientConfig

    assert set(inspect.signature(make_client).parameters) == {"model", "config", "options"}
    assert LLM_OPTIONS <= set(ClientConfig.model_fields)
    client = make_client("openai/gpt-4o-mini", ClientConfig(api_key="x", temperature=0.3, max_retries=1))
    assert client.temperature == 0.3 and client.max_retries == 1
