"""The in-repository schema-following fake (tests/fakes/schema_provider.py): its values follow the
schema, and `judgeflow run` through the real openai SDK + Instructor and the real anthropic SDK
scores every row against it. The same runs against ../shared/tools/fake_llm.py are an extra check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import SchemaProvider
from fakes.schema_provider import fake_instance, schema_in_text
from pydantic import BaseModel, Field

from judgeflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
QA = ROOT / "examples" / "qa_items.jsonl"

SCHEMA = {
    "type": "object",
    "$defs": {"Check": {"type": "object", "required": ["verdict", "score"],
                        "properties": {"verdict": {"enum": ["supported", "contradicted", "unverifiable"]},
                                       "score": {"type": "integer", "minimum": 1, "maximum": 5},
                                       "note": {"anyOf": [{"type": "string", "maxLength": 12}, {"type": "null"}]}}}},
    "required": ["checks", "ok"],
    "properties": {"checks": {"type": "array", "minItems": 2, "maxItems": 4, "items": {"$ref": "#/$defs/Check"}},
                   "ok": {"type": "boolean"}, "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                   "kind": {"const": "fixed"}},
}


def test_values_follow_the_schema_and_the_seed() -> None:
    values = [fake_instance(SCHEMA, seed) for seed in range(40)]
    for v in values:
        assert set(v) == {"checks", "ok", "ratio", "kind"} and v["kind"] == "fixed"
        assert 2 <= len(v["checks"]) <= 4 and isinstance(v["ok"], bool) and 0 <= v["ratio"] <= 1
        for c in v["checks"]:
            assert c["verdict"] in ("supported", "contradicted", "unverifiable") and 1 <= c["score"] <= 5
            assert c["note"] is None or len(c["note"]) <= 12
    assert fake_instance(SCHEMA, 7) == fake_instance(SCHEMA, 7)
    assert len({c["verdict"] for v in values for c in v["checks"]}) == 3  # a seeded choice, not the first


def test_pydantic_schemas_validate_and_json_mode_schema_is_found() -> None:
    class Item(BaseModel):
        name: str = Field(min_length=3)
        tags: list[str] = Field(min_length=1, max_length=2)
        child: Item | None = None

    for seed in range(20):
        Item.model_validate(fake_instance(Item.model_json_schema(), seed))  # $ref, recursion, anyOf
    text = f"Answer as JSON matching {json.dumps(SCHEMA)} and nothing else."
    assert schema_in_text(text) == SCHEMA and schema_in_text("no {schema} here") is None


def judge(tmp_path: Path, model: str, base_url: str, name: str, *extra: str) -> list[dict]:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(QA.read_text(encoding="utf-8").splitlines(keepends=True)[:4]), encoding="utf-8")
    out = tmp_path / f"{name}.jsonl"
    code = main(["run", str(items), "-o", str(out), "--model", model, "--base-url", base_url,
                 "--store", str(tmp_path / f"{name}.sqlite"), "--no-progress", *extra])
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert code in (0, 1), rows
    return rows


#: (model, --structured, what each request asked for: tool_choice, or the response_format type)
SHAPES = [("openai/x", "tools", "tool_choice"), ("openai/x", "json_schema", "json_schema"),
          ("openai/x", "json", "json_object"), ("anthropic/x", "tools", "tool_choice")]


def asked(request: dict) -> str | None:
    return "tool_choice" if request.get("tools") else (request.get("response_format") or {}).get("type")


@pytest.mark.parametrize(("model", "structured", "shape"), SHAPES)
def test_cli_scores_every_row_against_the_schema_fake(tmp_path: Path, model: str, structured: str, shape: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    with SchemaProvider(seed=1) as fake:
        url = fake.base_url + ("/v1" if model.startswith("openai") else "")
        rows = judge(tmp_path, model, url, "a", "--structured", structured)
        calls = len(fake.requests)
        again = judge(tmp_path, model, url, "b", "--structured", structured)
    assert len(rows) == 4 and all(r["label"] in (0, 1) and not r["error"] for r in rows), rows
    assert all(r["usage"]["input_tokens"] > 0 for r in rows)
    assert calls >= 4 and {asked(r) for r in fake.requests} == {shape}
    assert len(fake.requests) == 2 * calls  # the second run asked again (its own store): no cache
    assert [r["label"] for r in again] == [r["label"] for r in rows]  # same seed, same verdicts
