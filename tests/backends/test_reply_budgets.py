"""Reply budgets learned from use (backends/reply_budgets.py), at the HTTP boundary: the real openai
SDK and Instructor over a MockTransport with a provider-like token limit. Under a token limit a
step's max_tokens follows what its replies used, so the limit is charged close to what is spent; a
reply cut off at a learned budget is asked again at the sized one and judged; with no token limit,
or a fixed --max-tokens, the sized budget is sent as before."""

from __future__ import annotations

import asyncio
import json
import math

import httpx2
from fakes import MOSCOW_RIGHT, LimitedLLM, ProviderLimit, moscow

from judgeflow import Judge, Judgment, judge_stream


def rows(n: int, sentences: int = 1, start: int = 0) -> list[dict]:
    item = moscow(answer=MOSCOW_RIGHT, reference="1147")
    text = " ".join(f"Moscow was founded in the year eleven forty seven, fact {s}." for s in range(sentences))
    return [{**item, "id": f"i{k}", "answer": f"{text} Item {k}."} for k in range(start, start + n)]


class Cutting(LimitedLLM):
    """A provider that ends a reply longer than its max_tokens with finish_reason "length"."""

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handler(request)
        if response.status_code != 200:
            return response
        reply = json.loads(response.content)
        budget = json.loads(request.content).get("max_tokens") or math.inf
        if reply["usage"]["completion_tokens"] > budget:
            reply["choices"][0]["finish_reason"] = "length"
            self.cut.append(budget)
        return httpx2.Response(200, headers=response.headers, json=reply)

    cut: list[int]


def run(llm: LimitedLLM, items: list[dict], concurrency: int = 4, **client: object) -> tuple[list[Judgment], Judge]:
    judge = Judge(backend=llm.backend(provider_retries=0, **client))

    async def go() -> list[Judgment]:
        try:
            return [j async for _, j in judge_stream(judge, items, concurrency=concurrency)]
        finally:
            await judge.aclose()

    return asyncio.run(go()), judge


def charged_and_used(llm: LimitedLLM) -> tuple[int, int, list[int]]:
    sent = [r for r in llm.requests]
    charged = sum(ProviderLimit.tokens("openai", json.dumps(r).encode()) for r in sent)
    used = sum(math.ceil(len(json.dumps(r)) / 4) + len(json.dumps(_reply(r))) // 4 for r in sent)
    return charged, used, [r["max_tokens"] for r in sent]


def _reply(body: dict) -> object:
    from fakes.provider import answer_for

    prompt = "\n".join(m["content"] if isinstance(m["content"], str) else "" for m in body["messages"])
    return answer_for(body["tools"][0]["function"]["name"], prompt)


def test_under_a_token_limit_the_charge_follows_what_replies_use() -> None:
    llm = LimitedLLM("openai", limit=ProviderLimit(tpm=10_000_000, window=60.0))
    results, _ = run(llm, rows(24))
    assert all(j.status == "judged" for j in results), [j.error for j in results if j.error]
    charged, used, budgets = charged_and_used(llm)
    assert sum(budgets[-8:]) < 0.6 * sum(budgets[:8])  # learned: later requests ask less than the sized budgets
    assert charged <= 1.1 * used, (charged, used)  # the sized budgets alone: 1.2x here


def test_a_reply_cut_off_at_a_learned_budget_is_asked_again_at_the_sized_one() -> None:
    llm = Cutting("openai", limit=ProviderLimit(tpm=10_000_000, window=60.0))
    llm.cut = []
    # one-claim replies teach a small budget; four-claim replies come far above it
    results, judge = run(llm, rows(8) + rows(4, sentences=4, start=100), concurrency=1)
    assert all(j.status == "judged" and j.label is not None for j in results), [j.error for j in results if j.error]
    assert llm.cut  # cut off at a learned budget ...
    budgets = judge.backend.client.budgets  # type: ignore[attr-defined]
    assert budgets.cuts >= 1  # ... and asked again at the sized one: judged
    assert max(r["max_tokens"] for r in llm.requests[-4:]) > min(llm.cut)  # the margin grew after the cut


def test_no_token_limit_or_a_fixed_max_tokens_sends_the_sized_budget() -> None:
    free = LimitedLLM("openai")  # no limit, no headers
    run(free, rows(16))
    per_step: dict[str, set[int]] = {}
    for r in free.requests:
        per_step.setdefault(r["tools"][0]["function"]["name"], set()).add(r["max_tokens"])
    assert all(len(budgets) == 1 for budgets in per_step.values()), per_step  # each step: its sized budget
    fixed = LimitedLLM("openai", limit=ProviderLimit(tpm=10_000_000, window=60.0))
    run(fixed, rows(16), max_tokens=700)
    assert {r["max_tokens"] for r in fixed.requests} == {700}


def test_a_check_budget_is_a_share_of_each_request_s_sized_budget() -> None:
    from judgeflow.backends.reply_budgets import FLOOR, MARGIN, ReplyBudgets

    budgets = ReplyBudgets()
    for used in (250, 300, 280):  # check replies of 10-claim requests sized 1,000
        budgets.record("check", 1000, used)
    assert budgets.budget("check", 2000) == math.ceil(MARGIN * 2000 * 0.3)  # 20 claims: twice the reply
    assert budgets.budget("check", 1000) == math.ceil(MARGIN * 300)
    assert budgets.budget("check", 100) == FLOOR and budgets.budget("decompose", 900) == 900  # not learned yet
    for used in (250, 300, 280):  # a decompose reply does not follow its sized budget: the most used
        budgets.record("decompose", 1000, used)
    assert budgets.budget("decompose", 2000) == budgets.budget("decompose", 500) == math.ceil(MARGIN * 300)
