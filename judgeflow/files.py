"""The one text row reader (JSONL, CSV, JSON); the formats' writers and result readers are in `judgeflow.io`.

    for line, row in read_rows("items.jsonl"):     # .jsonl, .csv, .json (an array), or "-" (stdin)
        ...                                         # row: a dict, or the InvalidItemError for that line

Reading never raises for one bad row: a line that is not UTF-8, not JSON, nested too deep, or a
CSV row with an unclosed quote or extra cells becomes that line's InvalidItemError, and reading
goes on. Only a file that cannot be read at all raises (missing, a directory, binary, or text in
an encoding other than UTF-8/UTF-16/UTF-32), with one message naming the file and the fix.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import InvalidItemError

STDIO = "-"
Row = tuple[int, "dict[str, Any] | Any | InvalidItemError"]
_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
_TO_UTF8 = "save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8 IN > OUT`)"


def read_bytes(path: str | Path) -> bytes:
    """The whole input, from a file or (for "-") from stdin, with one clear error if it cannot be read."""
    if str(path) == STDIO:
        return sys.stdin.buffer.read()
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise InvalidItemError("no such file; give a .jsonl, .csv or .json file of items (or - for stdin)",
                               path=str(p)) from None
    except IsADirectoryError:
        raise InvalidItemError("is a directory; give a .jsonl, .csv or .json file of items", path=str(p)) from None
    except OSError as e:
        raise InvalidItemError(f"cannot be read ({e.strerror}); give a readable file of items", path=str(p)) from None


def decode(data: bytes, path: str) -> str:
    """Text from bytes: UTF-8 (undecodable bytes kept as surrogate escapes, so each bad line is
    reported on its own), or UTF-16/UTF-32 when the file starts with their byte-order mark.

    Raises:
        InvalidItemError: a binary file, or text that is not UTF-8 on most of its lines.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as e:
                raise InvalidItemError(f"starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()} "
                                       f"(at byte {e.start}); {_TO_UTF8}", path=path) from None
    if _binary(data[:65536]):
        raise InvalidItemError(
            "is a binary file (it holds NUL bytes), not JSONL, CSV or JSON text; give a text file of items "
            "(UTF-16 text without a byte-order mark: save it as UTF-8)", path=path)
    text = data.decode("utf-8", errors="surrogateescape")
    if _undecodable(text) is not None:
        lines = text.split("\n")
        bad = [n for n, line in enumerate(lines, 1) if _undecodable(line) is not None]
        readable_non_ascii = any(not line.isascii() and _undecodable(line) is None for line in lines)
        if len(bad) > 1 and not readable_non_ascii:  # a whole file in another encoding, not one bad line
            byte = _undecodable(lines[bad[0] - 1])
            raise InvalidItemError(
                f"is not UTF-8 text (byte {byte} on line {bad[0]}, and {len(bad) - 1} more lines); {_TO_UTF8}",
                path=path, line=None)
    return text


def _binary(sample: bytes) -> bool:
    """NUL bytes in a sample that is not UTF-8, or many of them: not a text file (a stray NUL in a
    UTF-8 text is that line's problem, reported as an invalid row)."""
    nuls = sample.count(b"\0")
    if not nuls:
        return False
    if len(sample) >= 1024 and nuls * 16 > len(sample):  # UTF-8, but mostly NULs (UTF-16 without a mark, ...)
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(sample) - 3  # not just a character cut at the end of the sample
    return False


_ESCAPED = re.compile("[\udc80-\udcff]")


def _undecodable(text: str) -> str | None:
    """The first byte that was not UTF-8 (kept as a surrogate escape), as 0xNN, or None."""
    found = None if text.isascii() else _ESCAPED.search(text)
    return None if found is None else f"0x{ord(found.group()) - 0xDC00:02X}"


def _not_utf8(line: str, path: str, n: int) -> InvalidItemError | None:
    byte = _undecodable(line)
    if byte is None:
        return None
    col = next(i for i, ch in enumerate(line, 1) if "\udc80" <= ch <= "\udcff")
    return InvalidItemError(f"not UTF-8 text (byte {byte} at column {col}); {_TO_UTF8}", path=path, line=n,
                            item_id=readable_id(line))


#: `"id": "q1"` or `"id": 12` (or single-quoted) in a line that is not valid JSON
_ID_IN_LINE = re.compile(r"""(?:"id"|'id')\s*:\s*(?:"((?:[^"\\\n]|\\.){1,200})"|'([^'\n]{1,200})'|(-?\d{1,30})\b)""")
#: a comma right before a closing brace or bracket
_TRAILING_COMMA = re.compile(r",\s*[}\]]")
#: a single-quoted key or string value where JSON needs double quotes
_SINGLE_QUOTES = re.compile(r"""(?:[{,]\s*'[^'\n]*'\s*:)|(?::\s*'[^'\n]*'\s*[,}])""")


def readable_id(line: str) -> str | None:
    """The row's id when it can be read from a line that cannot be parsed (so its result still joins
    to its label), else None. Only a top-level-looking `"id": ...` is taken: the first one."""
    found = _ID_IN_LINE.search(line[:100_000])
    if found is None:
        return None
    text = next(g for g in found.groups() if g is not None)
    if found.group(1) is not None:
        try:
            text = json.loads(f'"{text}"')
        except ValueError:
            return None
    return str(text) if not _undecodable(str(text)) else None


def _likely_cause(line: str) -> str:
    """The common ways a hand-made JSON line breaks, as a hint ("" when none is seen)."""
    if line.startswith("\ufeff"):
        return "; the line starts with a byte-order mark (BOM): files joined with `cat` keep each one's; remove it"
    if _TRAILING_COMMA.search(line):
        return "; it looks like a trailing comma (a comma before `}` or `]`): remove it"
    if _SINGLE_QUOTES.search(line) or line.lstrip().startswith("{'"):
        return "; it looks like single quotes: JSON needs double quotes around keys and strings (a Python dict is not JSON)"
    if re.search(r":\s*(?:None|True|False)\b", line):
        return "; it looks like Python's None/True/False: JSON writes null/true/false"
    return ""


def read_rows(path: str | Path, *, data: bytes | None = None, name: str | None = None,
              delimiter: str | None = None) -> Iterator[Row]:
    """Yield (line number, row or InvalidItemError) for each non-blank row of a JSONL, CSV or JSON file.

    `path` "-" reads stdin (its format sniffed: `[` a JSON array, `{` JSONL, else CSV). A `.json`
    file holds one array of objects (or {"items": [...]}); its "line" is the 1-based position in
    the array. `data`: the file's bytes, when the caller has read them already. `name`: the name
    that messages give and that picks the format, when `path` is a copy (stdin spooled to a file: "-").
    `delimiter`: a CSV file's (`--delimiter`); by default `,`, or `;`, a tab or `|` sniffed from its header.

    A UTF-8 JSONL file is streamed line by line (memory does not grow with the file); CSV, JSON
    arrays and UTF-16/32 files are read whole.

    Raises:
        InvalidItemError: the file cannot be read at all (see `read_bytes` and `decode`).
    """
    name = str(path) if name is None else name
    if data is None and str(path) != STDIO and _streamable(Path(path), name):
        yield from _jsonl_rows(_utf8_lines(Path(path)), name)
        return
    text = decode(read_bytes(path) if data is None else data, name)
    kind = _kind(name, text)
    if kind == "json":
        yield from _json_array(text, name)
    elif kind == "csv":
        yield from _csv_rows(text, name, delimiter)
    else:
        yield from _jsonl_rows(text, name)


def _kind(name: str, text: str) -> str:
    if name == STDIO:
        first = text.lstrip()[:1]
        return {"[": "json", "{": "jsonl"}.get(first, "csv" if first else "jsonl")
    return {".json": "json", ".csv": "csv"}.get(Path(name).suffix.lower(), "jsonl")


class RepeatedKey(ValueError):
    """A JSON object names one key twice: readers disagree on which value counts, so none is picked."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def message(self, row: str = "this row") -> str:
        return (f"the key {self.key!r} appears twice in {row} (JSON readers disagree on which value counts, so "
                "judgeflow picks none); keep one of them")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: the object, or RepeatedKey naming the first key it repeats."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise RepeatedKey(k)
            seen.add(k)
    return obj


class _Repeats(dict[str, Any]):
    """An object of a .json array that repeated `key` (marked, so that only its row becomes invalid)."""

    key: str


def _marking(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return _unique_keys(pairs)
    except RepeatedKey as e:
        obj = _Repeats(pairs)
        obj.key = e.key
        return obj


def _repeated(value: Any) -> str | None:
    """The first key repeated anywhere in a value read with `_marking`, or None."""
    if isinstance(value, _Repeats):
        return value.key
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((k for v in inner if (k := _repeated(v)) is not None), None)


def _loads(raw: str, hook: Any = _unique_keys) -> Any:
    """json.loads, with the ways it fails other than a syntax error as ValueErrors (a repeated key: RepeatedKey)."""
    try:
        return json.loads(raw, object_pairs_hook=hook)
    except RecursionError:
        raise ValueError("nested too deeply to read (keep a row to a few hundred levels of nesting)") from None


def _json_error(e: ValueError) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at column {e.colno}"
    return str(e).split(";")[0]  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"


def _streamable(path: Path, name: str) -> bool:
    """A JSONL file that is UTF-8 throughout (checked in one streaming pass): it can be read a line
    at a time. Anything else (another encoding's byte-order mark, a binary file, bytes that are not
    UTF-8, which `decode` judges for the file as a whole) goes the whole-file way."""
    try:
        with path.open("rb") as f:
            head = f.read(65536)
            if any(head.startswith(bom) for bom, codec in _BOMS if codec != "utf-8-sig") or _binary(head):
                return False
            if _kind(name, head.decode("utf-8", errors="surrogateescape")) != "jsonl":
                return False
            decoder = codecs.getincrementaldecoder("utf-8")()
            chunk = head
            while chunk:
                decoder.decode(chunk)
                chunk = f.read(1 << 20)
            decoder.decode(b"", final=True)
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _utf8_lines(path: Path) -> Iterator[str]:
    with path.open("rb") as f:
        for n, raw in enumerate(f):
            if n == 0 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            yield raw[:-1].decode("utf-8", errors="surrogateescape") if raw.endswith(b"\n") else \
                raw.decode("utf-8", errors="surrogateescape")  # as text.split("\n"): a "\r" stays


def _jsonl_rows(text: str | Iterable[str], path: str) -> Iterator[Row]:
    for n, raw in enumerate(text.split("\n") if isinstance(text, str) else text, 1):
        if not raw.strip():
            continue
        bad = _not_utf8(raw, path, n)
        if bad is not None:
            yield n, bad
            continue
        try:
            yield n, _loads(raw)
        except RepeatedKey as e:
            yield n, InvalidItemError(e.message(), path=path, line=n, field=e.key)
        except ValueError as e:
            yield n, InvalidItemError(f"not valid JSON ({_json_error(e)}){_likely_cause(raw)}; each line must be "
                                      "one JSON object", path=path, line=n, item_id=readable_id(raw))


def _json_array(text: str, path: str) -> Iterator[Row]:
    where = _undecodable(text)
    if where is not None:
        line = text[: next(i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff")].count("\n") + 1
        raise InvalidItemError(f"not UTF-8 text (byte {where} on line {line}); {_TO_UTF8}", path=path, line=line)
    try:
        data = _loads(text, _marking)
    except json.JSONDecodeError as e:
        raise InvalidItemError(
            f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); a .json file must hold one "
            "array of item objects (or use .jsonl, one object per line)", path=path, line=e.lineno,
        ) from None
    except ValueError as e:
        raise InvalidItemError(f"cannot be read as JSON ({_json_error(e)})", path=path) from None
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if isinstance(data, dict) and isinstance(data.get("resourceSpans"), list):
        data = [data]  # one OTLP JSON trace document (read as traces by `io.openinference`)
    if not isinstance(data, list):
        raise InvalidItemError(
            f"a .json file must hold an array of item objects, got {type(data).__name__} "
            "(or use .jsonl, one object per line)", path=path,
        )
    for n, row in enumerate(data, 1):
        key = _repeated(row)
        yield n, row if key is None else InvalidItemError(RepeatedKey(key).message("this item"), path=path, line=n,
                                                          field=key)


def _check_delimiter(header: list[str], path: str, line: int) -> None:
    """A one-column header holding ';' or a tab is another delimiter's file read as comma-separated.

    Raises:
        InvalidItemError: naming the delimiter it saw and how to fix the file.
    """
    if len(header) != 1:
        return
    for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "pipes")):
        if header[0].count(sep) >= 1:
            cols = [c.strip() for c in header[0].split(sep)]
            raise InvalidItemError(f"the header is one column {header[0]!r}: this file looks separated by {name} "
                                   f"({', '.join(repr(c) for c in cols[:4])}), not commas; pass --delimiter {sep!r}, "
                                   "or save it as comma-separated "
                                   "CSV (a spreadsheet's 'CSV UTF-8 (comma delimited)') or as JSONL",
                                   path=path, line=line)


#: the delimiters a CSV file's header is sniffed for when it has no comma (a spreadsheet in a
#: locale whose decimal mark is the comma saves with semicolons)
SNIFFED = (";", "\t", "|")


def csv_delimiter(header_line: str, given: str | None = None) -> str:
    """The CSV file's delimiter: `given` (--delimiter), else `,`, else the one of SNIFFED that its
    header line (with no comma outside quotes) holds most often."""
    if given:
        return given
    cells = next(csv.reader([header_line]), [])
    if len(cells) != 1:
        return ","
    counts = {sep: header_line.count(sep) for sep in SNIFFED}
    best = max(counts, key=lambda sep: counts[sep])
    return best if counts[best] else ","


def _csv_rows(text: str, path: str, delimiter: str | None = None) -> Iterator[Row]:
    """CSV rows as dicts keyed by the header. A quote left open, a stray quote, or more cells
    than the header has make that row invalid (naming its line); reading resumes on the next line,
    so one broken row never swallows the rows after it. The delimiter: `delimiter`, else sniffed
    from the header (`csv_delimiter`)."""
    lines = list(io.StringIO(text, newline=""))
    sep = csv_delimiter(next((ln for ln in lines if ln.strip()), ""), delimiter)
    header: list[str] | None = None
    i = 0  # index of the next physical line to read
    limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # a long source document is one cell
    try:
        while i < len(lines):
            start, reader = i, csv.reader(iter(lines[i:]), strict=True, delimiter=sep)
            ended = 0  # lines consumed by complete records of this reader
            try:
                for cells in reader:
                    n = start + ended + 1  # the record's first line (1-based)
                    ended = reader.line_num
                    if not any(c.strip() for c in cells):
                        continue
                    raw = "".join(lines[n - 1:start + ended])
                    bad = _not_utf8(raw, path, n)
                    if bad is not None:
                        yield n, bad
                    elif header is None:
                        header = [c.strip() for c in cells]
                        if sep == ",":
                            _check_delimiter(header, path, n)
                        twice = next((c for i, c in enumerate(header) if c and c in header[:i]), None)
                        if twice is not None:
                            raise InvalidItemError(f"the column {twice!r} appears twice in the header (which one "
                                                   "counts would be a guess); rename or drop one", path=path, line=n)
                    elif len(cells) > len(header):
                        yield n, InvalidItemError(
                            f"{len(cells)} cells, but the header has {len(header)} columns; quote a cell that "
                            'holds a comma ("a, b")', path=path, line=n)
                    else:
                        yield n, {k: v for k, v in zip(header, cells)} | {k: None for k in header[len(cells):]}
                i = len(lines)
            except csv.Error as e:
                n = start + ended + 1
                last = start + reader.line_num
                if "unexpected end of data" in str(e):
                    msg = ('a quoted cell opened on this line is never closed, so the lines after it would be read '
                           'as one cell; close the quote (write a literal " as "")')
                elif last > n:
                    msg = (f"a quoted cell opened on this line runs on to line {last} and is not valid CSV there ({e}); "
                           'close the quote on this line (write a literal " as "")')
                else:
                    msg = f'not valid CSV ({e}); quote a cell that holds a quote, and write a literal " as ""'
                yield n, InvalidItemError(msg, path=path, line=n)
                i = n  # read on from the next line: a broken row never swallows the rows after it
    finally:
        csv.field_size_limit(limit)


@contextmanager
def file_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive OS lock on a hidden `.NAME.lock` beside `path` (other processes wait).

    An atomic rename replaces `path`'s inode, so the lock lives on a sidecar file that is never
    renamed. The OS drops the lock when the process dies (kill -9 included). Where fcntl is
    missing (Windows) the block runs unlocked.
    """
    p = Path(path)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(p.with_name(f".{p.name}.lock"), "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (also through hard or symbolic links)."""
    if STDIO in (str(a), str(b)):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
