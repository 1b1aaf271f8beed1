"""A rule-based fake judge and editor at the HTTP boundary, for `tune` (real SDK, real Instructor).

    fake = ReadingFake(verdicts="criterion")   # verdicts read the criterion text in the prompt
    fake = ReadingFake(verdicts="random")      # verdicts are seeded noise (a judge that knows nothing)
    result = tune(items, strict, backend=fake.backend())

With `verdicts="criterion"`, a claim that holds the reference is supported, a claim about the
capital that does not is contradicted, and any other claim (a correct extra detail) is
contradicted UNLESS the check prompt's "never an error" list mentions details: the fake stops
flagging correct extra details once the criterion says they are not errors. The editor
(`CriterionEdits` requests) proposes the fixed `edits` in order.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

import httpx2

from .provider import claim_lines
from .scripted import FakeLLM
from .wire import openai_body

_REFERENCE = re.compile(r"<reference>\n(.*?)\n</reference>", re.DOTALL)
_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.DOTALL)
_NOT_ERRORS = re.compile(r"Never an error on its own[^\n]*\n((?:- [^\n]*\n?)*)")

#: a useless edit, the edit that fixes the false alarms, and one that cannot be applied
EDITS = [
    {"field": "not_errors", "action": "add", "new": "spelling variants of names", "addresses": [], "why": "noise"},
    {"field": "not_errors", "action": "add", "new": "correct extra details that the reference does not mention",
     "addresses": [], "why": "the false alarms flag true details the reference lacks"},
    {"field": "not_errors", "action": "replace", "old": "no such entry", "new": "x", "addresses": [], "why": "bad"},
]


def capital_items(n_core: int = 14, n_extra: int = 14, n_wrong: int = 12, n_mislabelled: int = 2) -> list[dict[str, Any]]:
    """Short QA items: a correct core (0), a correct core plus a true extra detail (0), a wrong core
    (1); the first `n_mislabelled` core-only items are labelled 1, as a person may (label noise)."""
    rows = []
    for i in range(n_core + n_extra + n_wrong):
        right, wrong = f"Rightville{i}", f"Wrongville{i}"
        q, ref = f"What is the capital of Land{i}?", right
        if i < n_core:
            answer, label = f"The capital of Land{i} is {right}.", int(i < n_mislabelled)
        elif i < n_core + n_extra:
            answer, label = f"The capital of Land{i} is {right}. It has a famous old stone bridge.", 0
        else:
            answer, label = f"The capital of Land{i} is {wrong}.", 1
        rows.append({"id": f"q{i:02d}", "question": q, "reference": ref, "answer": answer, "label": label})
    return rows


class ReadingFake(FakeLLM):
    """Answers every request by rule (see the module docstring); counts requests by tool."""

    def __init__(self, *, verdicts: str = "criterion", edits: list[dict[str, Any]] | None = None, seed: int = 0) -> None:
        super().__init__("openai")
        self.verdicts, self.edits, self.seed = verdicts, EDITS if edits is None else edits, seed
        self.tools: dict[str, int] = {}

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        tool = body["tools"][0]["function"]["name"]
        self.tools[tool] = self.tools.get(tool, 0) + 1
        prompt = "\n".join(m["content"] if isinstance(m["content"], str) else "" for m in body["messages"])
        return httpx2.Response(200, json=openai_body(self.reply(tool, prompt), body, self.usage))

    def reply(self, tool: str, prompt: str) -> dict[str, Any]:
        if tool == "CriterionEdits":
            return {"edits": self.edits}
        if tool == "Claims":
            answer = _ANSWER.findall(prompt)[-1]
            return {"claims": [{"text": s.strip(), "kind": "other"} for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]}
        if tool == "ClaimChecks":
            return {cid: self._verdict(text, prompt) for cid, text in claim_lines(prompt)}
        raise AssertionError(f"unexpected request {tool}")

    def _verdict(self, claim: str, prompt: str) -> dict[str, str]:
        if self.verdicts == "random":
            rng = random.Random(hashlib.sha256(f"{self.seed}:{prompt}:{claim}".encode()).hexdigest())
            verdict = rng.choice(["supported", "contradicted"])
        else:
            refs = _REFERENCE.findall(prompt)
            ref = refs[-1].strip() if refs else ""
            block = _NOT_ERRORS.search(prompt)
            lenient = block is not None and "detail" in block.group(1)
            if ref and ref in claim:
                verdict = "supported"
            elif "capital" in claim:
                verdict = "contradicted"
            else:
                verdict = "supported" if lenient else "contradicted"
        return {"evidence": "", "reason": "fake rule", "basis": "reference", "verdict": verdict}
