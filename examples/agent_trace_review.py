"""Agent trace review: judge what an agent said against what its tools returned.

What it shows:
1. One agent trace (OpenAI chat format: an assistant tool call, the tool's result, the reply).
   The reply says "25 C and sunny" where get_weather returned "18 C, light rain": label 1, and
   the failing claim names the message its evidence came from (`tool get_weather, call_1`); the
   evidence quote is checked in code against that message.
2. The same trace written in the Anthropic format (tool_use / tool_result blocks) is the same item.
3. `turns="all"`: every assistant turn judged against what came before it (ids `ID#t2`, ...).
   Turn 4 ("there is no rain") contradicts the tool by negation: the offline lexical judge misses
   that (it reads words and numbers, not meaning); an LLM judge is what catches it.
4. Calibration on the hand-written trace set `examples/traces.jsonl` (18 traces, OpenAI,
   Anthropic and LangChain forms, labelled by hand): Cohen's kappa of this judge against the
   labels. Offline (no key) the judge is the lexical floor; pass --model to calibrate an LLM judge.

    python examples/agent_trace_review.py                              # offline, no key
    python examples/agent_trace_review.py --model openai/gpt-4o-mini   # or set JUDGEFLOW_MODEL
    judgeflow run examples/traces.jsonl -o results.jsonl               # the CLI reads the same rows
    judgeflow run examples/traces.jsonl -o results.jsonl --turns all   # every assistant turn
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from judgeflow import ConfigError, Item, Judge, calibrate, read_items
from judgeflow.backends import default_model
from judgeflow.items import items_from_record

TRACES = Path(__file__).resolve().parent / "traces.jsonl"
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}
OPENAI = [
    {"role": "system", "content": "You are a helpful assistant with tools."},
    {"role": "user", "content": "What's the weather in Paris right now?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 18 C, light rain, wind 12 km/h."},
    {"role": "assistant", "content": "It is 25 C and sunny in Paris today."},
    {"role": "user", "content": "Should I take an umbrella then?"},
    {"role": "assistant", "content": "No need: there is no rain in Paris today."},
]
ANTHROPIC = [
    {"role": "user", "content": "What's the weather in Paris right now?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                  "content": "Paris: 18 C, light rain, wind 12 km/h."}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 25 C and sunny in Paris today."}]},
    {"role": "user", "content": "Should I take an umbrella then?"},
    {"role": "assistant", "content": [{"type": "text", "text": "No need: there is no rain in Paris today."}]},
]


def show(con: Console, judge: Judge, item: Item) -> None:
    result = judge.judge(item)
    con.print(f"[bold]{item.id}[/bold]: label [bold]{result.label}[/bold] ({result.criterion}: {result.routed_by})")
    con.print(f"  judged: {item.answer!r}")
    for c in result.claims:
        colour = "red" if c.error else "green"
        found = {True: "quote found in that message", False: "quote NOT in that message", None: "no quote"}[c.evidence_found]
        con.print(f"  [{colour}]{c.id} {c.verdict}[/{colour}] {c.text}")
        con.print(f"     evidence from [bold]{c.cited or '-'}[/bold]: {c.evidence!r} ({found})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=default_model(), help="provider/model (default: $JUDGEFLOW_MODEL or baseline/lexical)")
    args = parser.parse_args()
    judge, con = Judge(args.model), Console()
    con.print(f"judge: [bold]{judge.model}[/bold] (1 = the reply contradicts or goes beyond the trace, 0 = grounded)\n")

    con.print("[bold]1. the last reply of an OpenAI-format trace[/bold]")
    openai_item = Item.from_record({"id": "weather", "messages": OPENAI[:5]})
    show(con, judge, openai_item)

    anthropic_item = Item.from_record({"id": "weather", "system": OPENAI[0]["content"], "messages": ANTHROPIC[:4]})
    same = anthropic_item.model_dump(exclude={"extra"}) == openai_item.model_dump(exclude={"extra"})
    con.print(f"\n[bold]2. the same trace in the Anthropic format[/bold]: the same item: {same}")

    con.print("\n[bold]3. every assistant turn (turns=\"all\")[/bold]")
    for item in items_from_record({"id": "weather", "messages": OPENAI}, turns="all"):
        show(con, judge, item)

    rows = [r for r in read_items(TRACES) if isinstance(r, Item)]
    report = calibrate(judge.judge_many(rows))
    kappa = "undefined" if report.kappa is None else f"{report.kappa:.2f}"
    con.print(f"\n[bold]4. calibration on {TRACES.name}[/bold] ({report.n} hand-labelled traces): "
              f"Cohen's kappa {kappa}, accuracy {report.accuracy:.2f}, "
              f"{report.false_alarms} false alarm(s), {report.misses} miss(es)")


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
