"""Judging inside LangChain / LangSmith without sending judgeflow's own graph runs anywhere.

    judgment = await judge_quietly(judge, item)                       # no tracer sees the judge's graph
    judgment = await judge_quietly(judge, item, trace_internal=True)  # as any LangGraph run: traced if tracing is on

judgeflow's judge is a LangGraph graph, and langchain-core traces every graph run it sees: with
`LANGSMITH_TRACING=true`, inside a LangSmith `evaluate` (even with `upload_results=False`), or under a
chain whose callbacks hold a LangChainTracer, the judge's internal runs (its prompts, the judged texts,
the model's replies) were posted to `LANGSMITH_ENDPOINT`. Judged texts are often private, so the
integrations (the LangSmith evaluator, the Runnable, the trace callback) judge with tracing off for
the judge's own graph: LangSmith's tracing context disabled, and no callbacks or tracers inherited from
the caller's run. What the user's own code traces is left alone (the evaluator's feedback, the
Runnable's own run in the chain's trace). `trace_internal=True` restores the default behaviour, for
debugging the judge.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..judging import Judging
from ..results import Judgment


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """No LangSmith tracing and no inherited LangChain callbacks for the code inside (context variables:
    the current task only, and tasks it starts)."""
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers.context import tracing_v2_callback_var

    config_token = var_child_runnable_config.set(None)  # no parent run's callbacks (a chain's tracer) inherited
    tracer_token = tracing_v2_callback_var.set(None)  # no `tracing_v2_enabled()` block's tracer
    try:
        try:
            from langsmith.run_helpers import tracing_context
        except ImportError:  # langchain-core without langsmith: nothing traces to LangSmith
            yield
            return
        with tracing_context(enabled=False, parent=False):  # over LANGSMITH_TRACING and any run tree
            yield
    finally:
        tracing_v2_callback_var.reset(tracer_token)
        var_child_runnable_config.reset(config_token)


async def judge_quietly(judging: Judging, item: Any, *, trace_internal: bool = False) -> Judgment:
    """`judging.ajudge(item)`, its graph runs traced only if `trace_internal` (see the module docstring)."""
    if trace_internal:
        return await judging.ajudge(item)
    with untraced():
        return await judging.ajudge(item)
