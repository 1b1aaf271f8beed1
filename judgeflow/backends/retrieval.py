"""Evidence for the knowledge step: documents the user gives, cut into passages and ranked for the
claims the reference does not settle (`workflow.know`; see judgeflow/knowledge.py).

    Evidence.of("docs.jsonl")          # JSONL of {"text", optional "id", "title"}, one document a line
    Evidence.of("docs/")               # a folder: every .txt / .md file a document (.jsonl files read as above)
    Evidence.of(["text", {"text": ...}])
    Evidence.of(retriever)             # a LangChain retriever (its ainvoke/invoke), one query per claim
    Evidence.of(fn)                    # fn(query) -> documents (str, {"text": ...} or objects with page_content)

Judgeflow opens no network connection of its own: a retriever the user passes may. What is read is
untrusted and bounded: documents (MAX_DOCUMENTS), characters per document (MAX_DOCUMENT_CHARS), a
file's size (MAX_FILE_BYTES), documents per query (MAX_PER_QUERY) and a retriever call's time
(RETRIEVER_TIMEOUT). Passages are ranked with the same BM25 as long sources (`passages.py`) and at
most `max_chars` of them go into the one evidence check an item gets.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..files import read_rows
from .passages import BM25, Passage, split_documents

MAX_DOCUMENTS = 10_000
MAX_DOCUMENT_CHARS = 200_000
MAX_FILE_BYTES = 50_000_000
MAX_PER_QUERY = 20
RETRIEVER_TIMEOUT = 60.0
#: evidence sent per item (characters of passages) and passage size
DEFAULT_EVIDENCE_CHARS = 3_000
EVIDENCE_PASSAGE_CHARS = 600


def _text_of(doc: Any, where: str) -> str:
    """A document's text: a str, {"text": ...} or an object with `page_content` (LangChain)."""
    if isinstance(doc, str):
        text = doc
    elif isinstance(doc, dict):
        text = doc.get("text")
        if not isinstance(text, str):
            raise ConfigError(f"{where}: field 'text' is missing or not a string; give each document as "
                              '{"text": "...", "id": "...", "title": "..."} (id and title optional)')
        if isinstance(doc.get("title"), str) and doc["title"].strip():
            text = f"{doc['title'].strip()}\n\n{text}"
    elif isinstance(getattr(doc, "page_content", None), str):
        text = doc.page_content
    else:
        raise ConfigError(f"{where}: a document is {type(doc).__name__}; give a str, a dict with 'text', "
                          "or a LangChain Document")
    return text[:MAX_DOCUMENT_CHARS]


def read_documents(path: str | Path) -> list[str]:
    """The documents of a JSONL file or a folder (sorted by name; .txt and .md files, .jsonl files)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in (".txt", ".md", ".jsonl"))
        docs: list[str] = []
        for f in files:
            docs += read_documents(f) if f.suffix.lower() == ".jsonl" else [_read_text(f)]
            if len(docs) > MAX_DOCUMENTS:
                raise ConfigError(f"{p}: more than {MAX_DOCUMENTS:,} documents; give a retriever instead "
                                  "(judgeflow ranks a document set in memory)")
        return docs
    if not p.is_file():
        raise ConfigError(f"{p}: no such file or folder; give --evidence a JSONL file of documents "
                          '({"text": ...} a line) or a folder of .txt/.md files')
    if p.suffix.lower() != ".jsonl":
        return [_read_text(p)]
    if p.stat().st_size > MAX_FILE_BYTES:
        raise ConfigError(f"{p}: larger than {MAX_FILE_BYTES:,} bytes; give a retriever instead")
    docs = []
    for line, row in read_rows(p):
        if isinstance(row, InvalidItemError):
            raise ConfigError(f"{p}:{line}: {row}; each line must be one JSON object with a 'text' field")
        docs.append(_text_of(row, f"{p}:{line}"))
        if len(docs) > MAX_DOCUMENTS:
            raise ConfigError(f"{p}: more than {MAX_DOCUMENTS:,} documents; give a retriever instead")
    return docs


def _read_text(f: Path) -> str:
    if f.stat().st_size > MAX_FILE_BYTES:
        raise ConfigError(f"{f}: larger than {MAX_FILE_BYTES:,} bytes; split it or give a retriever")
    return f.read_text(encoding="utf-8", errors="replace")[:MAX_DOCUMENT_CHARS]


def rank(queries: Sequence[str], passages: Sequence[Passage], bm25: BM25, *, max_chars: int,
         per_query: int = 2) -> list[Passage]:
    """Each query's best passages (those sharing a term with it), round robin, within `max_chars`,
    in reading order; none when no passage shares a term with any query."""
    rankings = []
    for q in queries:
        scores = bm25.scores(q)
        rankings.append([i for i in sorted(range(len(passages)), key=lambda i: -scores[i]) if scores[i] > 0][:per_query])
    chosen: list[int] = []
    used = 0
    for depth in range(per_query):
        for r in rankings:
            if depth < len(r) and r[depth] not in chosen and used + len(passages[r[depth]].text) <= max_chars:
                chosen.append(r[depth])
                used += len(passages[r[depth]].text)
    return [passages[i] for i in sorted(chosen)]


class Evidence:
    """Documents or a retriever, as passages for the claims of one item (`passages`)."""

    def __init__(self, documents: Sequence[str] | None = None, *, retrieve: Callable[[str], Any] | None = None,
                 name: str = "documents", max_chars: int = DEFAULT_EVIDENCE_CHARS,
                 passage_chars: int = EVIDENCE_PASSAGE_CHARS) -> None:
        if (documents is None) == (retrieve is None):
            raise ConfigError("Evidence takes documents or a retriever, one of them")
        self.retrieve = retrieve
        self.name = name
        self.max_chars = max_chars
        self.passage_chars = passage_chars
        self._all: list[Passage] = []
        self._bm25: BM25 | None = None
        digest = hashlib.sha256()
        if documents is not None:
            self._all = split_documents(list(documents), passage_chars=passage_chars)
            self._bm25 = BM25(self._all) if self._all else None
            for d in documents:
                digest.update(d.encode("utf-8", "surrogatepass") + b"\0")
        else:  # a retriever's answers are not known in advance: its name stands for them
            digest.update(name.encode())
        self.fingerprint = f"{name}|{digest.hexdigest()[:16]}|{max_chars}/{passage_chars}"

    @classmethod
    def of(cls, source: Any, **options: Any) -> Evidence:
        """Evidence from a path (JSONL file or folder), a list of documents, a LangChain retriever or
        a function of a query; an Evidence is returned as it is."""
        if isinstance(source, Evidence):
            return source
        if isinstance(source, (str, Path)):
            return cls(read_documents(source), name=f"file:{Path(source).name}", **options)
        if isinstance(source, (list, tuple)):
            return cls([_text_of(d, f"document {i}") for i, d in enumerate(source, 1)][:MAX_DOCUMENTS], **options)
        invoke = getattr(source, "ainvoke", None) or getattr(source, "invoke", None)
        if callable(invoke) and not inspect.isfunction(source):
            return cls(retrieve=invoke, name=f"retriever:{type(source).__name__}", **options)
        if callable(source):
            return cls(retrieve=source, name=f"function:{getattr(source, '__qualname__', 'retriever')}", **options)
        raise ConfigError(f"evidence is {type(source).__name__}; give a path, a list of documents, a LangChain "
                          "retriever or a function of a query")

    async def _ask(self, query: str) -> list[str]:
        assert self.retrieve is not None
        fn = self.retrieve

        async def call() -> Any:
            if inspect.iscoroutinefunction(fn):
                return await fn(query)
            got = await asyncio.to_thread(fn, query)
            return await got if inspect.isawaitable(got) else got

        try:
            docs = await asyncio.wait_for(call(), RETRIEVER_TIMEOUT)
        except TimeoutError:
            raise ConfigError(f"evidence {self.name}: no answer within {RETRIEVER_TIMEOUT:.0f} s") from None
        if isinstance(docs, (str, dict)) or not isinstance(docs, Iterable):
            docs = [docs]
        return [_text_of(d, f"evidence {self.name}") for _, d in zip(range(MAX_PER_QUERY), docs)]

    async def passages(self, queries: Sequence[str]) -> list[Passage]:
        """The passages most relevant to the queries (the claims), at most `max_chars`, in reading order."""
        queries = [q for q in queries if q.strip()]
        if not queries:
            return []
        if self.retrieve is None:
            return rank(queries, self._all, self._bm25, max_chars=self.max_chars) if self._bm25 else []
        found: dict[str, None] = {}
        for q in queries:
            for d in await self._ask(q):
                found.setdefault(d, None)
        docs = list(found)
        passages = split_documents(docs, passage_chars=self.passage_chars) if docs else []
        return rank(queries, passages, BM25(passages), max_chars=self.max_chars) if passages else []

    def describe(self) -> str:
        return json.dumps({"evidence": self.name, "fingerprint": self.fingerprint})
