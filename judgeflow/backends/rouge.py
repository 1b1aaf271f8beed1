"""`baseline/rouge-l`: the study's ROUGE-L baseline as a judge, to put beside an LLM judge.

The whole answer is one claim. It passes if the ROUGE-L F-measure between the answer and the
reference (or the best-matching source document) reaches `threshold`, and otherwise gets the
criterion's error verdict. Scores come from Google's `rouge-score` package (Porter stemming);
its tokenizer is given Unicode letters, since the default one drops every non-ASCII character.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from typing import Literal

from ..citations import without_markers
from ..criteria import Criterion
from ..errors import ConfigError, LLMError
from ..items import Item
from ..results import TraceEntry, Usage
from ..schemas import Claim, ClaimCheck
from .base import Offline, single_from_steps

Measure = Literal["fmeasure", "precision", "recall"]
DEFAULT_THRESHOLD = 0.3
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


class UnicodeTokenizer:
    """rouge-score's default tokenisation (lowercase, alphanumeric runs, Porter stem for words
    longer than 3 letters), keeping non-ASCII letters instead of dropping them."""

    def __init__(self, *, stem: bool = True) -> None:
        from nltk.stem import porter  # rouge-score's own stemmer; imported late (slow)

        self._stemmer = porter.PorterStemmer() if stem else None

    def tokenize(self, text: str) -> list[str]:
        tokens = _TOKEN.findall(text.lower())
        if self._stemmer is None:
            return tokens
        return [self._stemmer.stem(t) if len(t) > 3 and t.isascii() else t for t in tokens]


def verdict_pair(criterion: Criterion) -> tuple[str, str]:
    """(pass verdict, error verdict) in the criterion's own vocabulary (its `[roles]`): a claim the
    evidence does not cover is its `missing` verdict where that is an error, else its `conflict` one."""
    roles = criterion.verdict_roles()
    failing = roles["missing"] if roles["missing"] in criterion.error_verdicts else roles["conflict"]
    return roles["pass"], failing


class RougeJudge(Offline):
    """ROUGE-L between the answer and its reference or source, against a threshold."""

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD, measure: Measure = "fmeasure",
                 stem: bool = True) -> None:
        """
        Args:
            threshold: the score at or above which the answer passes (0..1).
            measure: the ROUGE-L number compared: F-measure (the study's), precision (share of
                the answer found in the evidence) or recall.
            stem: Porter-stem English words, as rouge-score's `use_stemmer=True`.
        """
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"baseline/rouge-l threshold must be between 0 and 1, got {threshold}")
        if measure not in ("fmeasure", "precision", "recall"):
            raise ConfigError(f"baseline/rouge-l measure must be fmeasure, precision or recall, got {measure!r}")
        from rouge_score import rouge_scorer

        self.model = "baseline/rouge-l"
        self.threshold, self.measure, self.stem = threshold, measure, stem
        self._scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=UnicodeTokenizer(stem=stem))

    @property
    def fingerprint(self) -> str:
        return (f"{self.model}|rouge-score {version('rouge-score')}|t={self.threshold}|m={self.measure}"
                f"|stem={self.stem}")

    def score(self, answer: str, evidence: str) -> float:
        """ROUGE-L (the chosen measure) of `answer` against `evidence`."""
        return float(getattr(self._scorer.score(evidence, answer)["rougeL"], self.measure))

    def _evidence(self, item: Item, criterion: Criterion) -> tuple[str, list[str]]:
        for f in criterion.evidence_fields:
            if f == "source" and item.source:
                return f, list(item.source)
            text = getattr(item, f) if f != "source" else None
            if text:
                return f, [text]
        wanted = " or ".join(criterion.evidence_fields) or "reference or source"
        raise LLMError(f"baseline/rouge-l has nothing to compare the answer with: item '{item.id}' has no {wanted}")

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        said = item.answer.strip()
        text = without_markers(said).strip()  # the answer's own citation markers are not its content
        return [Claim(id="c1", text=text, kind="other", quote=said if said != text else "")] if text else []

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]:
        basis, docs = self._evidence(item, criterion)
        passing, failing = verdict_pair(criterion)
        checks = []
        for claim in claims:
            scores = [self.score(claim.text, d) for d in docs]
            best = max(range(len(docs)), key=scores.__getitem__)
            ok = scores[best] >= self.threshold
            where = f" (document {best + 1})" if len(docs) > 1 else ""
            checks.append(ClaimCheck(
                claim_id=claim.id, verdict=passing if ok else failing,
                basis=basis if basis in criterion.bases else "none", evidence=docs[best][:300],
                reason=f"ROUGE-L {self.measure} {scores[best]:.2f} against the {basis}{where} "
                       f"{'>=' if ok else '<'} threshold {self.threshold}",
            ))
        return checks

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]:
        return await single_from_steps(self, item, criterion, usage, trace)
