"""The check step's request grows by what each claim adds, not by a copy of the verdict schema per
claim id (#40): the entry is defined once (`$defs`) and each claim id refers to it, so the reply is
still an object keyed by claim id (every id exactly once by construction under a grammar). A reply
that misses an id, names one twice or names one that does not exist is re-asked, and unscored
with the reason when it stays wrong; never silently read.

Through the real openai / anthropic SDK and Instructor over the in-repository schema fake, whose
replies are changed on the way out (`Scripted`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fakes.schema_provider import SchemaProvider

from judgeflow import Judge, load_criterion
from judgeflow.schemas import checks_reply

N = 28
BASES, VERDICTS = ("source", "none"), ("supported", "contradicted", "not_found")
SOURCE = "Albert Brooks, born Albert Lawrence Einstein on July 22, 1947, is an American actor and comedian."
ANSWER = " ".join(f"Sentence {i} says Albert Brooks is an American actor born in 1947." for i in range(1, N + 1))


def item() -> dict[str, str]:
    return {"id": "brooks", "source": SOURCE, "answer": ANSWER}


class Scripted(SchemaProvider):
    """The schema fake, whose decompose replies list N claims and whose check replies pass through
    `change` (the reply's parsed JSON, the number of the check request) -> the JSON text to send."""

    def __init__(self, change: Callable[[dict[str, Any], int], str] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.change = change
        self.checks = 0

    def answer(self, wire: str, body: dict[str, Any], batch: str | None = None, custom_id: str | None = None,
               raw: bytes | None = None) -> tuple[int, dict[str, Any], str | None]:
        status, body, fault = super().answer(wire, body, batch, custom_id, raw)
        if status != 200 or fault is not None or not isinstance(body, dict):
            return status, body, fault
        get, put = _payload(body)
        data = json.loads(get())
        if isinstance(data, dict) and "claims" in data:  # the decompose reply
            data["claims"] = [{"text": f"Sentence {i} says Albert Brooks is an American actor born in 1947.", "kind": "other",
                               "quote": ""} for i in range(1, N + 1)]  # each carries the answer's details (check_dropped)
            put(json.dumps(data))
        elif isinstance(data, dict) and "c1" in data:  # a check reply
            self.checks += 1
            put(self.change(data, self.checks) if self.change else json.dumps(data))
        return status, body, fault


def _payload(body: dict[str, Any]) -> tuple[Callable[[], str], Callable[[str], None]]:
    """(read, write) of a reply body's JSON payload: a tool call's arguments, the message content, or
    an Anthropic tool_use input."""
    if "choices" in body:
        message = body["choices"][0]["message"]
        if message.get("tool_calls"):
            fn = message["tool_calls"][0]["function"]
            return (lambda: fn["arguments"]), (lambda text: fn.__setitem__("arguments", text))
        return (lambda: message["content"]), (lambda text: message.__setitem__("content", text))
    block = body["content"][0]
    return (lambda: json.dumps(block["input"])), (lambda text: block.__setitem__("input", json.loads(text)))


def once(change: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any], int], str]:
    """`change` on the first check reply only; the re-asked one goes out as the fake wrote it."""
    return lambda data, n: change(data) if n == 1 else json.dumps(data)


def missing(data: dict[str, Any]) -> str:
    data.pop("c5")
    return json.dumps(data)


def duplicate(data: dict[str, Any]) -> str:  # c3 answered twice, the second time differently
    text = json.dumps(data)
    again = json.dumps({**data["c3"], "verdict": "contradicted" if data["c3"]["verdict"] == "supported" else "supported"})
    return text[:-1] + f', "c3": {again}}}'


def unknown(data: dict[str, Any]) -> str:
    return json.dumps({**data, "c99": data["c1"]})


#: (model, --structured, base URL suffix): OpenAI tools (strict and not), json_schema, a
#: llama.cpp-style json_object with the schema, and Anthropic tools
WIRES = [("openai/x", "tools", "/v1"), ("openai/x", "tools_strict", "/v1"), ("openai/x", "json_schema", "/v1"),
         ("openai/x", "json", "/v1"), ("anthropic/x", "tools", "")]


def run(fake: Scripted, model: str = "openai/x", structured: str = "tools", suffix: str = "/v1") -> Any:
    judge = Judge(model, base_url=fake.base_url + suffix, api_key="sk-fake", mode="faithfulness",
                  structured=structured, concurrency=1)
    return judge.judge_many([item()])[0]


def test_check_schema_grows_by_a_reference_per_claim_not_a_copy_of_the_entry() -> None:
    def chars(n: int) -> int:
        return len(json.dumps(checks_reply(BASES, VERDICTS, tuple(f"c{i}" for i in range(1, n + 1))).model_json_schema()))

    per_claim = (chars(28) - chars(2)) / 26
    assert per_claim <= 50, per_claim  # about 12 tokens a claim id (was ~340 characters: the entry copied)
    schema = checks_reply(BASES, VERDICTS, ("c1", "c2", "c3")).model_json_schema()
    assert schema["required"] == ["c1", "c2", "c3"] and schema["additionalProperties"] is False
    (name, entry), = schema["$defs"].items()
    assert all(p == {"$ref": f"#/$defs/{name}"} for p in schema["properties"].values())
    assert entry["additionalProperties"] is False and entry["required"] == ["evidence", "reason", "basis", "verdict"]
    assert entry["properties"]["verdict"]["enum"] == list(VERDICTS)
    one = checks_reply(BASES, VERDICTS, ("c1",)).model_json_schema()
    assert "$defs" not in one and one["properties"]["c1"]["properties"]["verdict"]["enum"] == list(VERDICTS)


@pytest.mark.parametrize(("model", "structured", "suffix"), WIRES)
def test_28_claims_are_judged_in_one_check_on_every_wire(model: str, structured: str, suffix: str) -> None:
    with Scripted(seed=2) as fake:
        row = run(fake, model, structured, suffix)
    assert row.label in (0, 1) and not row.error, row.reason
    asked = load_criterion("source_faithfulness").model_verdicts  # VERDICTS and misattributed_citation
    assert len(row.claims) == N and {c.verdict for c in row.claims} <= set(asked)
    assert fake.checks == 1 and row.usage.calls == 2 and row.usage.reasks == 0
    check = fake.requests[-1]
    assert "$defs" in json.dumps(check)  # the entry once, referred to by each claim id


@pytest.mark.parametrize("change", [missing, duplicate, unknown])
@pytest.mark.parametrize("structured", ["tools", "json"])
def test_a_wrong_set_of_ids_is_asked_again(change: Callable[[dict[str, Any]], str], structured: str) -> None:
    with Scripted(once(change), seed=3) as fake:
        row = run(fake, structured=structured)
    assert fake.checks == 2 and row.usage.reasks == 1, row.reason
    assert row.label in (0, 1) and len(row.claims) == N
    said = json.dumps(fake.requests[-1]["messages"][2:])  # the re-ask names what was wrong
    assert {"missing": "c5", "duplicate": "c3", "unknown": "c99"}[change.__name__] in said


def test_anthropic_wire_missing_and_unknown_ids_are_asked_again() -> None:
    for change, name in ((missing, "c5"), (unknown, "c99")):
        with Scripted(once(change), seed=3) as fake:
            row = run(fake, "anthropic/x", "tools", "")
        assert fake.checks == 2 and row.usage.reasks == 1 and row.label in (0, 1), row.reason
        assert name in json.dumps(fake.requests[-1]["messages"][2:])


@pytest.mark.parametrize("change", [missing, duplicate, unknown])
def test_ids_still_wrong_after_the_re_asks_leave_the_item_unscored(change: Callable[[dict[str, Any]], str]) -> None:
    with Scripted(lambda data, n: change(data), seed=4) as fake:
        row = run(fake)
    assert row.label is None and row.error, (row.label, row.reason)
    assert {"missing": "c5", "duplicate": "c3", "unknown": "c99"}[change.__name__] in row.error
    assert fake.checks == 3  # the first reply and the two re-asks
