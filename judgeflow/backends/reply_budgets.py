"""Reply budgets learned from use: the `max_tokens` a step's requests ask for under a token limit.

A step's request is sized for its largest plausible reply (`single` asks 1,215 tokens and its
replies use about 94). Token limits count that budget (OpenAI charges `max_tokens` when it admits a
request; Anthropic's output-token limit counts it until the reply ends), so a token-limited tier
admitted about half the items it could. When the endpoint has a token limit, each step's budget is
learned from the output tokens its replies really used, as the provider reports them:

    budget = min(sized, max(FLOOR, MARGIN x the most any of the step's last WINDOW replies used))

and for a step whose reply is one entry per id sent (SCALED: the check step's verdict per claim id,
sized per id), as a share of each request's sized budget, so that 40 claims get twice the budget of
20: MARGIN x sized x the largest used / sized of the step's last WINDOW replies. Both after
MIN_REPLIES replies (a share of the sized budget for every step was tried: a decompose or single
reply does not follow its sized budget, and the charge came out higher); before that, and with no
token limit, the sized budget is sent. A reply is never lost to it: one cut off at a learned budget
is asked again at the sized budget (the cut is counted in `cuts` and doubles that step's margin),
and the sized budget keeps its own one doubling. A fixed `--max-tokens` is never changed. The
limiter charges what is sent, as the provider does; `Limiter.give_back` then returns what the reply
did not use where the provider returns it too (Anthropic's output tokens), so the buckets count
close to what was spent.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

#: steps whose reply has one entry per id sent (and whose sized budget is per id): learned as a share
SCALED = frozenset({"check", "coverage"})
#: replies of a step seen before its budget is learned
MIN_REPLIES = 3
#: the replies remembered per step (the budget follows the largest share of them)
WINDOW = 64
#: the budget is this times the largest reply remembered (SCALED: the largest share of its sized budget) ...
MARGIN = 1.25
#: ... and never less than this
FLOOR = 64


@dataclass
class StepBudget:
    used: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    """Each remembered reply's output tokens (SCALED steps: over the budget its request was sized)."""
    margin: float = MARGIN
    cuts: int = 0


@dataclass
class ReplyBudgets:
    """The learned budgets of one client's steps (see the module docstring)."""

    steps: dict[str, StepBudget] = field(default_factory=dict)

    def budget(self, step: str, sized: int) -> int:
        """The max_tokens to send for `step`, whose request was sized `sized`."""
        s = self.steps.get(step)
        if s is None or len(s.used) < MIN_REPLIES:
            return sized
        most = max(s.used) * (sized if step in SCALED else 1)
        return min(sized, max(FLOOR, math.ceil(s.margin * most)))

    def record(self, step: str, sized: int, output_tokens: int) -> None:
        """A reply of `step`, whose request was sized `sized`, used `output_tokens` (the provider's usage)."""
        if output_tokens > 0 and sized > 0:
            used = output_tokens / sized if step in SCALED else output_tokens
            self.steps.setdefault(step, StepBudget()).used.append(used)

    def cut(self, step: str) -> None:
        """A reply of `step` was cut off at its learned budget: widen that step's margin."""
        s = self.steps.setdefault(step, StepBudget())
        s.cuts += 1
        s.margin *= 2.0

    @property
    def cuts(self) -> int:
        return sum(s.cuts for s in self.steps.values())
