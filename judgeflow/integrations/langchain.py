"""Items from what LangChain RAG pipelines produce: Documents, chain output dicts, DataFrames.

    item = from_langchain(question, retriever.invoke(question), answer, id="q1")
    item = from_dict(chain.invoke({"input": q}))        # {"input", "context", "answer"}
    items = from_dataframe(df)                          # one row per item (pandas optional)

Accepted keys (first present wins): question `question|input|query`, answer
`answer|output|result`, source `context|source_documents|documents` (strings, dicts with
`page_content`, or langchain-core `Document`s), plus everything `Item.from_record` accepts.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..items import ColumnMap, Item, check_column_map, normalize_source, resolve_fields
from ..traces import is_trace


def _auto_id(*parts: Any) -> str:
    data = json.dumps([str(p) for p in parts], ensure_ascii=False)
    return "lc-" + hashlib.sha256(data.encode()).hexdigest()[:12]


def _text(value: Any) -> Any:
    """An AIMessage / chat message -> its text; anything else unchanged."""
    content = getattr(value, "content", None)
    if isinstance(content, str) and not isinstance(value, (str, Mapping)):
        return content
    return value


def from_langchain(
    question: str | None,
    documents: Iterable[Any] | str | None,
    answer: Any,
    *,
    id: str | None = None,
    reference: str | None = None,
    spec: str | None = None,
    **extra: Any,
) -> Item:
    """An Item from a question, the retrieved Documents and the generated answer.

    Args:
        question: the user's question (or None).
        documents: retrieved langchain-core `Document`s, dicts with `page_content`, or strings.
        answer: the generated answer (a string or an AIMessage).
        id: an item id; by default a hash of the question and answer.
        reference: a gold answer, if you have one.
        spec: requirements the answer was written against, if any.
        **extra: other fields carried through to the Judgment (e.g. `metadata`).

    Raises:
        InvalidItemError: a document of an unsupported type, or no answer.
    """
    answer = _text(answer)
    docs = documents if documents is None or isinstance(documents, str) else list(documents)
    source = normalize_source(docs) if docs else None
    record: dict[str, Any] = {
        "id": id or _auto_id(question, answer), "question": question, "answer": answer,
        "source": source, "reference": reference, "spec": spec, **extra,
    }
    return Item.from_record({k: v for k, v in record.items() if v is not None})


def from_dict(record: Mapping[str, Any], *, id: str | None = None, column_map: ColumnMap | None = None) -> Item:
    """An Item from a chain's input/output dict (`{"input", "context", "answer"}`,
    RetrievalQA's `{"query", "result", "source_documents"}`, or any item record). `column_map`:
    item field -> the key holding it, for your own names (`{"reference": "gold_text"}`).

    Raises:
        InvalidItemError: no answer, or unusable documents.
    """
    if not isinstance(record, Mapping):
        raise InvalidItemError(f"expected a dict of chain inputs/outputs, got {type(record).__name__}")
    column_map = check_column_map(column_map)
    rec = {k: _text(v) for k, v in record.items() if not _missing(v)}
    values, aliases, _ = resolve_fields(rec, column_map)  # the item alias table: input/query, output/result, context/...
    if "source" in values and not isinstance(values["source"], str):
        rec[aliases.get("source", "source")] = normalize_source(list(values["source"]))  # Documents -> text
    if id is not None:
        rec["id"] = id
    elif "id" not in values and is_trace(rec):  # an agent's {"messages": [...]}: named by its conversation
        rec["id"] = _auto_id(*(getattr(m, "content", m) for m in rec.get("messages") or [rec.get("run_type")]))
    elif "id" not in values:
        rec["id"] = _auto_id(values.get("question"), values.get("answer"))
    return Item.from_record(rec, column_map={f: c for f, c in column_map.items() if f != "id" or id is None})


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def from_dataframe(df: Any, *, id_column: str | None = None, column_map: ColumnMap | None = None) -> list[Item]:
    """One Item per row of a pandas DataFrame (columns as in `from_dict`; NaN cells are absent).
    `column_map`: item field -> the column holding it (`{"reference": "gold_text"}`); a misspelt
    field is refused with the nearest one.

    Raises:
        ConfigError: pandas is not installed, or `df` is not a DataFrame.
        InvalidItemError: a row is unusable (the message names the row).
    """
    try:
        import pandas as pd
    except ImportError:
        raise ConfigError("from_dataframe needs pandas: pip install pandas") from None
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"from_dataframe expects a pandas DataFrame, got {type(df).__name__}")
    column_map = check_column_map(column_map)
    id_column = id_column or column_map.get("id")
    if id_column is not None and id_column not in df.columns:
        raise ConfigError(f"id_column {id_column!r} is not a column; columns: {list(df.columns)}")
    items = []
    for n, (index, row) in enumerate(df.iterrows()):
        rec = {str(k): v for k, v in row.items()}
        row_id = rec.pop(id_column) if id_column else rec.get("id", index)
        rec.pop("id", None)
        try:
            items.append(from_dict(rec, id=str(row_id), column_map=column_map))
        except InvalidItemError as e:
            raise InvalidItemError(f"DataFrame row {n} (index {index!r}): {e.bare_message}",
                                   field=e.field, item_id=str(row_id)) from None
    return items
