"""The judge as a langchain-core Runnable, to drop into LCEL chains and LangSmith.

    judge = as_runnable(model="openai/gpt-4o-mini")         # or Judge(...) / default offline
    judge.invoke({"input": q, "context": docs, "answer": a})  # -> Judgment
    await judge.abatch(items, config={"max_concurrency": 8})
    rag_chain | judge                                         # judge a chain's output dict

Inputs are Items, item dicts, or chain output dicts (`integrations.langchain.from_dict` keys).
The Runnable's own run shows in the chain's trace; the judge's internal graph runs (prompts, judged
texts, replies) are never traced unless `as_runnable(..., trace_internal=True)` (`integrations.untraced`).
`judge_graph(judge)` is the compiled LangGraph itself, bound to the judge's context: it takes
`{"item": Item}` and returns the raw graph state. Its nodes are async, so use its async API
(`await g.ainvoke(...)`, `g.abatch(...)`, `g.astream(...)`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import get_config_list

from .._judge import Judge
from ..errors import InvalidItemError
from ..items import Item
from ..judging import ItemLike, run_sync
from ..results import Judgment
from ..workflow import build_graph
from .langchain import from_dict
from .untraced import judge_quietly


def to_item(value: Any) -> Item | InvalidItemError:
    """An Item from an Item or a dict of item / chain fields; bad input -> the error (not raised)."""
    if isinstance(value, InvalidItemError):
        return value
    if isinstance(value, Item):
        return value
    if isinstance(value, Mapping):
        try:
            return from_dict(value)
        except InvalidItemError as e:
            return e
    return InvalidItemError(f"cannot judge a {type(value).__name__}; pass an Item or a dict with "
                            "question/answer and context/reference/spec")


class JudgeRunnable(Runnable[Any, Judgment]):
    """A Judge behind the Runnable interface: invoke/ainvoke/batch/abatch return Judgments.

    Bad input becomes an `invalid` Judgment (label None), as in `Judge.judge`.
    """

    def __init__(self, judge: Judge, *, trace_internal: bool = False) -> None:
        self.judge = judge
        self.name = "judgeflow"
        self.trace_internal = trace_internal

    def _one(self, value: Any) -> Judgment:
        return run_sync(self._aone(value))

    async def _aone(self, value: Any) -> Judgment:
        return await judge_quietly(self.judge, to_item(value), trace_internal=self.trace_internal)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Judgment:
        return self._call_with_config(self._one, input, config)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Judgment:
        return await self._acall_with_config(self._aone, input, config)

    def batch(
        self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None,
        *, return_exceptions: bool = False, **kwargs: Any,
    ) -> list[Judgment]:
        """All inputs on one event loop (the judge's bounded concurrency), in input order."""
        return run_sync(self.abatch(inputs, config, return_exceptions=return_exceptions))

    async def abatch(
        self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None,
        *, return_exceptions: bool = False, **kwargs: Any,
    ) -> list[Judgment]:
        configs = get_config_list(config, len(inputs))
        limit = configs[0].get("max_concurrency") if configs else None
        sem = asyncio.Semaphore(limit or self.judge.concurrency)

        async def one(value: Any, cfg: RunnableConfig) -> Any:
            async with sem:
                return await self.ainvoke(value, cfg)

        return list(await asyncio.gather(*(one(v, c) for v, c in zip(inputs, configs, strict=True)),
                                         return_exceptions=return_exceptions))


def as_runnable(judge: Judge | None = None, *, model: str | None = None, trace_internal: bool = False,
                **judge_kwargs: Any) -> JudgeRunnable:
    """The judge as a Runnable: pass a ready `Judge`, or `Judge(model, **judge_kwargs)` is built.
    `trace_internal=True` lets tracers see the judge's own graph runs (off by default: judged texts stay local)."""
    return JudgeRunnable(judge if judge is not None else Judge(model, **judge_kwargs), trace_internal=trace_internal)


def judge_graph(judge: Judge) -> Runnable[Any, Any]:
    """The compiled judge graph bound to `judge`'s backend and settings.

    Use the async API: `await judge_graph(j).ainvoke({"item": item})` -> the graph state dict.
    """
    return build_graph().bind(context=judge.context())


__all__ = ["ItemLike", "JudgeRunnable", "as_runnable", "judge_graph", "to_item"]
