"""Judge an agent's trace as it finishes: a LangChain callback handler.

    from judgeflow.integrations.trace_callback import TraceJudgeCallback
    judged = TraceJudgeCallback(model="openai/gpt-4o-mini")      # or judge=Judge(...)
    agent.invoke({"messages": [("user", "Book the 9:40 flight")]}, config={"callbacks": [judged]})
    judged.judgments[-1].label                                    # 1: the reply contradicts its tools

When the outermost run of an invocation ends (a LangGraph agent, an AgentExecutor, any chain whose
output holds `messages`), its conversation is judged like any trace row (`judgeflow.traces`): the
last reply against the tool results and turns before it. `on_judgment` is called with each
Judgment (log it, send it to LangSmith feedback, raise an alert). A run whose output is not a
conversation is left alone. The judge's own graph runs are never traced (they would land in the
agent's LangSmith trace, judged texts and all) unless `trace_internal=True`. The same handler
works in sync and async invocations: one async body, run on judgeflow's background loop from sync
code. The Runnable form is `agent | as_runnable(...)`
(`integrations.runnable`): the agent's output dict is judged the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler

from .._judge import Judge
from ..results import Judgment
from ..traces import is_trace
from .runnable import to_item
from .untraced import judge_quietly


class TraceJudgeCallback(AsyncCallbackHandler):
    """Judge each finished agent run's conversation; the Judgments collect in `judgments`."""

    run_inline = True

    def __init__(self, judge: Judge | None = None, *, model: str | None = None,
                 on_judgment: Callable[[Judgment], Any] | None = None, trace_internal: bool = False,
                 **judge_kwargs: Any) -> None:
        self.judge = judge if judge is not None else Judge(model, **judge_kwargs)
        self.trace_internal = trace_internal
        self.on_judgment = on_judgment
        self.judgments: list[Judgment] = []

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                           **kwargs: Any) -> None:
        if parent_run_id is not None or not isinstance(outputs, Mapping) or not is_trace(outputs):
            return
        judgment = await judge_quietly(self.judge, to_item({"id": str(run_id), **outputs}),
                                       trace_internal=self.trace_internal)
        self.judgments.append(judgment)
        if self.on_judgment is not None:
            done = self.on_judgment(judgment)
            if asyncio.iscoroutine(done):
                await done
