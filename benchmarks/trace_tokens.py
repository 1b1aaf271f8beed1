"""Tokens per trace item beside a single-turn item made of the same conversation.

    python benchmarks/trace_tokens.py            # ~10 s; needs only the repository

Against the in-repo fake provider (tests/fakes/provider.py: the real openai SDK and Instructor over
loopback; tokens = the fake's count, chars / 4 of what is sent). Every trace of
examples/traces.jsonl is judged twice:

- as a trace item (routed to trace_grounding): the evidence is every message before the reply,
  each headed by its label, tool results with the call's arguments, earlier turns;
- as a single-turn faithfulness item of the same conversation: question = the last user turn,
  answer = the reply, source = the tool results' bare text (no labels, no arguments, no turns).

It prints prompt and completion tokens per item for both, graph and single, and the ratio (plus
the trace's evidence judged with source_faithfulness's prompts: what the labelled evidence alone
adds, apart from the trace criterion's longer instructions and vocabulary); then
the same for one long trace (30 tool calls) sent whole and cut to passages (max_source_chars).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes import FakeProvider  # noqa: E402 (tests/ put on the path above)

from judgeflow import Item, Judge, read_items  # noqa: E402


def single_turn(item: Item) -> Item:
    """The same conversation as a plain faithfulness item: the tool results' text as the source."""
    tools = [m.text for m in item.messages or [] if m.role == "tool"]
    return Item(id=item.id, question=item.question, answer=item.answer, source=tools or None, mode="faithfulness")


def per_item(url: str, items: list[Item], strategy: str, **judge_kwargs: Any) -> tuple[float, float, int]:
    judge = Judge("openai/fake-judge", base_url=url, api_key="bench", strategy=strategy, keep_trace=False,  # type: ignore[arg-type]
                  **judge_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = judge.judge_many(items)
    assert all(r.label is not None for r in rows), [r.error for r in rows if r.label is None]
    n = len(rows)
    return (sum(r.usage.input_tokens for r in rows) / n, sum(r.usage.output_tokens for r in rows) / n,
            sum(r.usage.calls for r in rows))


def long_trace(calls: int = 30) -> Item:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Compare the weather in all the cities."}]
    for i in range(calls):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "function": {"name": "get_weather", "arguments": json.dumps({"city": f"city{i}"})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}",
                     "content": f"City{i}: {10 + i} C, cloudy. " + "Humidity normal and winds calm. " * 6})
    msgs.append({"role": "assistant", "content": "City7 is 17 C and cloudy. City12 is 22 C."})
    return Item.from_record({"id": "long", "messages": msgs})


def main() -> None:
    traces = [it for it in read_items(ROOT / "examples" / "traces.jsonl") if isinstance(it, Item)]
    plain = [single_turn(it) for it in traces]
    with FakeProvider() as fake:
        url = fake.base_url + "/v1"
        print(f"tokens per item on examples/traces.jsonl ({len(traces)} traces), the in-repo fake (chars / 4):")
        print(f"   {'item':44} {'calls':>5} {'prompt tok/item':>15} {'completion':>10}")
        for strategy in ("graph", "single"):
            t_in, t_out, t_calls = per_item(url, traces, strategy)
            p_in, p_out, p_calls = per_item(url, plain, strategy)
            print(f"   {'single-turn (same conversation), ' + strategy:44} {p_calls:>5} {p_in:>15.0f} {p_out:>10.0f}")
            f_in, f_out, f_calls = per_item(url, traces, strategy, criterion="source_faithfulness")
            print(f"   {'trace evidence, source_faithfulness, ' + strategy:44} {f_calls:>5} {f_in:>15.0f} {f_out:>10.0f}"
                  f"   ratio {f_in / p_in:.2f}  (the labelled evidence alone)")
            print(f"   {'trace item, ' + strategy:44} {t_calls:>5} {t_in:>15.0f} {t_out:>10.0f}"
                  f"   ratio {t_in / p_in:.2f}")
        long = long_trace()
        chars = sum(len(d) for d in long.source or [])
        print(f"\none long trace (30 tool calls, {chars:,} chars of evidence), graph:")
        for label, kwargs in (("sent whole", {}), ("max_source_chars=2000", {"max_source_chars": 2000})):
            t_in, t_out, t_calls = per_item(url, [long], "graph", **kwargs)
            print(f"   {label:44} {t_calls:>5} {t_in:>15.0f} {t_out:>10.0f}")


if __name__ == "__main__":
    main()
