"""Where traces come from: a LangSmith run tree (nested or flat), a LangChain callback that judges an
agent's run as it finishes, and an agent piped into the judge Runnable."""

from __future__ import annotations

import asyncio

from fakes.traces import ARGS, weather_agent
from langchain_core.runnables import RunnableLambda

from judgeflow import Item
from judgeflow.integrations.langsmith import from_langsmith_runs
from judgeflow.integrations.runnable import as_runnable
from judgeflow.integrations.trace_callback import TraceJudgeCallback


def test_a_langsmith_run_tree_reads_as_the_same_conversation() -> None:
    root = {"id": "r1", "name": "agent", "run_type": "chain", "inputs": {"question": "Book the 09:40 flight to Lisbon."},
            "outputs": {"output": "Yes, flight TP1351 at 09:40 is booked."}, "child_runs": [
                {"id": "l1", "name": "ChatOpenAI", "run_type": "llm", "outputs": {"generations": [[{"message": {
                    "lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
                    "kwargs": {"content": "Booking it now.",
                               "tool_calls": [{"name": "book_flight", "args": ARGS, "id": "call_1"}]}}}]]}},
                {"id": "t1", "name": "book_flight", "run_type": "tool", "error": "Error: payment declined.",
                 "inputs": {**ARGS, "tool_call_id": "call_1"}, "outputs": None}]}
    item = Item.from_record(root | {"label": 1})
    assert item.id == "r1" and item.label == 1 and item.answer == "Yes, flight TP1351 at 09:40 is booked."
    assert item.source == [
        "[user turn 1]\nBook the 09:40 flight to Lisbon.", "[assistant turn 2]\nBooking it now.",
        ('[tool book_flight, call_1]\ncalled book_flight with {"date": "2025-06-03", "flight": "TP1351"}\n'
        "status: error\nreturned:\nError: payment declined.")]
    flat = [{**root, "child_runs": None, "parent_run_id": None},
            *({**c, "parent_run_id": "r1", "start_time": f"2025-01-01T00:00:0{i}"} for i, c in enumerate(root["child_runs"]))]

    assert [i.source for i in from_langsmith_runs(flat)] == [item.source]


def test_the_callback_judges_an_agent_run_as_it_finishes_sync_and_async() -> None:
    seen: list = []
    judged = TraceJudgeCallback(model="baseline/lexical", on_judgment=seen.append)
    agent = RunnableLambda(weather_agent) | RunnableLambda(lambda out: out)  # nested runs: only the outermost is judged
    agent.invoke({"q": "Weather in Paris?"}, config={"callbacks": [judged]})
    asyncio.run(agent.ainvoke({"q": "Weather in Paris?"}, config={"callbacks": [judged]}))
    assert [(j.label, j.criterion) for j in judged.judgments] == [(1, "trace_grounding")] * 2 and seen == judged.judgments
    assert judged.judgments[0].claims[0].cited == "tool get_weather, call_1"
    RunnableLambda(lambda x: {"answer": "no conversation"}).invoke({}, config={"callbacks": [judged]})
    assert len(judged.judgments) == 2  # a run whose output is not a conversation is left alone


def test_an_agent_piped_into_the_judge_runnable_is_judged_on_its_trace() -> None:
    result = (RunnableLambda(weather_agent) | as_runnable(model="baseline/lexical")).invoke({"q": "Weather in Paris?"})
    assert result.label == 1 and result.criterion == "trace_grounding" and result.id.startswith("lc-")
