"""RAG pipeline: judge a small retrieval pipeline's answers end to end, with per-claim evidence.

What it shows: a keyword retriever returns langchain-core `Document`s, a (scripted) generator
answers from them, and judgeflow checks every claim of every answer against the retrieved
documents (source faithfulness). The documents are longer than the judge's source budget
(`max_source_chars`), so each claim is checked against the passages that matter, and every
verdict names the document and passage it rests on. The judge is also used as a langchain-core
Runnable at the end of an LCEL chain (`rag | judge`).

    python examples/rag_pipeline.py                               # offline judge, no key
    python examples/rag_pipeline.py --model openai/gpt-4o-mini    # or set JUDGEFLOW_MODEL
"""

from __future__ import annotations

import argparse
import re

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from rich.markup import escape

from judgeflow import ConfigError, Judge
from judgeflow.backends import default_model
from judgeflow.backends.passages import parse_citation
from judgeflow.cli.render import console
from judgeflow.integrations.langchain import from_langchain
from judgeflow.integrations.runnable import as_runnable

FILLER = ("Visitors often ask about opening hours, tickets and guided tours, which change with the "
          "season and are announced on the museum's website. ")
DOCS = [
    Document(page_content=(
        "Moscow is the capital and largest city of Russia. " + FILLER * 3 + "\n\n"
        "The chronicles first mention Moscow in 1147, when Prince Yuri Dolgorukiy invited his ally "
        "Prince Sviatoslav Olgovich to a feast there. This year is traditionally taken as the "
        "founding date of the city. " + FILLER * 3), metadata={"title": "History of Moscow"}),
    Document(page_content=(
        "The Moscow Kremlin is a fortified complex on Borovitsky Hill. " + FILLER * 3 + "\n\n"
        "In 1156 Yuri Dolgorukiy had the first wooden walls of the Kremlin built. The white stone "
        "walls followed in 1367 under Dmitry Donskoy, and the red brick walls that stand today were "
        "built between 1485 and 1495 by Italian architects. " + FILLER * 3), metadata={"title": "The Kremlin"}),
    Document(page_content=(
        "Saint Basil's Cathedral on Red Square was built from 1555 to 1561 on the orders of Ivan the "
        "Terrible to commemorate the capture of Kazan. " + FILLER * 3), metadata={"title": "Saint Basil's"}),
]

# A scripted generator: one faithful answer, one with a wrong date, one with an unsupported claim.
ANSWERS = {
    "When was Moscow founded and by whom?":
        "Moscow was first mentioned in the chronicles in 1147. It was founded by Yuri Dolgorukiy.",
    "When were the Kremlin walls built?":
        "The first wooden walls were built in 1156. The red brick walls were built between 1385 and 1395.",
    "Who built Saint Basil's Cathedral?":
        "It was built on the orders of Ivan the Terrible. Its architect was blinded afterwards.",
}


class KeywordRetriever(BaseRetriever):
    """A naive retriever: documents ranked by how many of the question's words they contain."""

    documents: list[Document]
    k: int = 2

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        words = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 3}
        scored = [(sum(w in d.page_content.lower() for w in words), d) for d in self.documents]
        return [d for s, d in sorted(scored, key=lambda x: -x[0])[: self.k] if s > 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=default_model(), help="provider/model (default: $JUDGEFLOW_MODEL or baseline/lexical)")
    parser.add_argument("--max-source-chars", type=int, default=1200,
                        help="source budget per item; longer sources are cut to the relevant passages")
    args = parser.parse_args()

    retriever = KeywordRetriever(documents=DOCS)
    judge = Judge(args.model, max_source_chars=args.max_source_chars)
    con = console()  # never wrapped when the output goes to a file or a pipe
    con.print(f"judge: [bold]{judge.model}[/bold], source budget {args.max_source_chars} chars "
              "(1 = hallucination, 0 = none found)\n")
    for n, (question, answer) in enumerate(ANSWERS.items(), 1):
        docs = retriever.invoke(question)
        item = from_langchain(question, docs, answer, id=f"q{n}")
        result = judge.judge(item)
        titles = ", ".join(f"{i}: {d.metadata['title']}" for i, d in enumerate(docs, 1))
        con.print(f"[bold]{escape(item.id)}[/bold] " + escape(f"{question}\n  retrieved {len(docs)} documents "
                  f"({sum(len(d.page_content) for d in docs)} chars) -> {titles}"))
        con.print(f"  label [bold]{result.label}[/bold] " + escape(f"({result.criterion}): {result.reason}"))
        for c in result.claims:
            doc, passage, quote = parse_citation(c.evidence)
            where = f"document {doc}, passage {passage}" if doc else "no passage"
            colour = "red" if c.error else "green"
            con.print(f"    [{colour}]{c.verdict:<12}[/{colour}] {escape(c.text)}")
            con.print(f"        evidence ({where}): {quote[:110]!r}\n        reason: {c.reason}", markup=False)
        con.print()

    # The same judge as the last step of an LCEL chain: question -> retrieve -> answer -> Judgment.
    rag = RunnableLambda(lambda q: {"input": q, "context": retriever.invoke(q), "answer": ANSWERS[q]})
    chain = rag | as_runnable(judge)
    labels = chain.batch(list(ANSWERS))
    con.print("as a Runnable (rag | judge).batch(questions) -> labels "
              f"{[j.label for j in labels]}", markup=False)


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
