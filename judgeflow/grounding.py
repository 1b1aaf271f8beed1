"""Provider grounding metadata read as evidence: what a search-grounded model says its answer rests on.

A search-grounded reply carries its sources beside its text, not in a tool message; judged without
them its every claim is unsupported. The trace reader (`traces.raw_messages`) turns them into one
evidence message before the reply, labelled like a tool result (`[tool web_search, grounding]`):

- Gemini `groundingMetadata` (REST, camelCase) or `grounding_metadata` (the Python SDK): each
  `groundingChunks` entry (`web` or `retrievedContext`: title, URI, text when given), with the
  answer segments its `groundingSupports` say rest on it, and the `webSearchQueries`;
- OpenAI web search: `annotations` of type `url_citation` on a Chat Completions message or on
  a Responses `output_text` part (title, URL, the answer span it is cited for);
- Anthropic `citations` on a text block (`cited_text` with its URL or document title).

Which segments a provider says are grounded is its claim, not proof: the judge still checks each
claim against what the sources say; where a provider gives no source text (web chunks), that is
all the evidence there is, and it is labelled as provider metadata. Bounded: at most MAX_SOURCES
sources and MAX_CHARS characters each (the metadata is untrusted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_SOURCES, MAX_CHARS = 100, 20_000
#: the tool name the evidence message is labelled with
TOOL = "web_search"


def _get(d: Any, *keys: str) -> Any:
    """The first of `keys` a mapping has (camelCase and snake_case spellings)."""
    if not isinstance(d, Mapping):
        return None
    return next((d[k] for k in keys if d.get(k) is not None), None)


def _source(title: Any, url: Any, text: Any = None) -> list[str]:
    lines = [f"source: {str(title)[:500]}" if title else "", f"url: {str(url)[:2000]}" if url else "",
             str(text)[:MAX_CHARS] if text else ""]
    return [x for x in lines if x]


def gemini(meta: Any, answer: str) -> list[str]:
    """The lines of Gemini grounding metadata: queries, then each chunk with the segments resting on it."""
    if not isinstance(meta, Mapping):
        return []
    chunks = _get(meta, "groundingChunks", "grounding_chunks") or []
    supports = _get(meta, "groundingSupports", "grounding_supports") or []
    queries = _get(meta, "webSearchQueries", "web_search_queries") or []
    out = [f"searched: {'; '.join(str(q)[:300] for q in queries[:20])}"] if isinstance(queries, list) and queries else []
    for n, chunk in enumerate(chunks[:MAX_SOURCES] if isinstance(chunks, list) else []):
        body = _get(chunk, "web", "retrievedContext", "retrieved_context") or {}
        segments = [str(_get(_get(s, "segment"), "text") or "")[:MAX_CHARS] for s in supports[:1000]
                    if isinstance(s, Mapping) and n in (_get(s, "groundingChunkIndices", "grounding_chunk_indices") or [])]
        out += [f"chunk {n + 1}:", *_source(_get(body, "title"), _get(body, "uri"), _get(body, "text"))]
        out += [f"the provider says the reply rests on it for: {s}" for s in segments if s]
    return out


def url_citations(annotations: Any, text: str) -> list[str]:
    """The lines of OpenAI `url_citation` annotations (Chat Completions nests them, Responses does not)."""
    out: list[str] = []
    for a in annotations[:MAX_SOURCES] if isinstance(annotations, list) else []:
        if not isinstance(a, Mapping) or a.get("type") != "url_citation":
            continue
        c = a.get("url_citation") if isinstance(a.get("url_citation"), Mapping) else a
        out += _source(c.get("title"), c.get("url"))
        start, end = c.get("start_index"), c.get("end_index")
        if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
            out.append(f"cited for: {text[start:end][:MAX_CHARS]}")
    return out


def anthropic_citations(citations: Any) -> list[str]:
    """The lines of Anthropic text-block `citations` (web search results and document locations)."""
    out: list[str] = []
    for c in citations[:MAX_SOURCES] if isinstance(citations, list) else []:
        if isinstance(c, Mapping):
            out += _source(c.get("title") or c.get("document_title"), c.get("url"), c.get("cited_text"))
    return out


def evidence(msg: Mapping[str, Any], text: str) -> str | None:
    """An assistant message's grounding metadata as one evidence text, or None when it has none."""
    lines = gemini(_get(msg, "groundingMetadata", "grounding_metadata"), text)
    lines += url_citations(msg.get("annotations"), text)
    content = msg.get("content")
    for part in content if isinstance(content, Sequence) and not isinstance(content, str) else []:
        if isinstance(part, Mapping):
            lines += url_citations(part.get("annotations"), str(part.get("text") or ""))
            lines += anthropic_citations(part.get("citations"))
    return "provider grounding metadata:\n" + "\n".join(lines) if lines else None
