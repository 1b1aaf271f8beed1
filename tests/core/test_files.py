"""Property tests (Hypothesis): random bytes, random JSON lines and random CSV through `judgeflow run`.

For any input: no traceback; the exit code is 0 (every row written) or 2 (one `error:` line: the
file as a whole cannot be read, two rows share an id, or every row (two or more) is unusable for
the same reason; nothing written), as the CLI guide says; and
with exit 0 every non-blank input line is accounted for by exactly one judged, unscored or
invalid row (a CSV line inside a multi-line quoted cell belongs to the row that cell is in).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgeflow.cli import main

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def run(data: bytes, name: str) -> tuple[int, str, list[dict]]:
    """Run the offline judge on `data` saved as `name`: (exit code, stderr, output rows)."""
    with tempfile.TemporaryDirectory() as d:
        inp, out = Path(d) / name, Path(d) / "out.jsonl"
        inp.write_bytes(data)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):  # the CLI's consoles write to sys.stderr as it is at print time
            code = main(["run", str(inp), "-o", str(out), "--model", "baseline/lexical", "--store",
                         str(Path(d) / "s.sqlite"), "--no-progress"])
        text = out.read_text(encoding="utf-8").replace(json.dumps(str(inp))[1:-1], "INPUT") if out.exists() else ""
        rows = [json.loads(line) for line in text.split("\n") if line]  # JSONL: lines end at \n only
        text = err.getvalue().replace(str(inp), "INPUT")
    return code, text, rows


def check_common(code: int, err: str, rows: list[dict]) -> None:
    assert "Traceback" not in err
    assert code in (0, 1, 2), (code, err)
    judged, unscored = (sum(r["status"] == s for r in rows) for s in ("judged", "unscored"))
    if code != 2:  # a run that judged nothing, or mostly failed, is not a success
        assert code == (1 if not judged or unscored / len(rows) > 0.1 else 0), (code, err)
    if code == 2:
        assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1, err
        assert rows == []
    for r in rows:
        assert r["status"] in ("judged", "unscored", "invalid")
        assert (r["label"] in (0, 1)) == (r["status"] == "judged")
        if r["status"] == "invalid":
            assert r["error"].startswith("INPUT:"), r["error"]  # names the file (and line)


def non_blank_lines(data: bytes) -> int:
    return sum(1 for line in data.decode("utf-8", "surrogateescape").split("\n") if line.strip())


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    code, err, rows = run(data, "items.jsonl")
    check_common(code, err, rows)
    if code == 0 and not data.startswith(_BOMS):
        assert len(rows) == non_blank_lines(data)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_field = st.sampled_from(["id", "answer", "reference", "source", "spec", "question", "label", "mode", "context",
                          "response", "criterion", "extra"])
_record = st.dictionaries(_field, _json | st.text(max_size=30), max_size=6)
_line = st.one_of(
    _record.map(json.dumps),
    _record.map(lambda r: json.dumps(r, ensure_ascii=False)),
    _json.map(json.dumps),
    st.text(max_size=30),  # not JSON at all
    st.just(""), st.just("   "),
)


@SETTINGS
@given(st.lists(_line, max_size=12))
def test_random_json_lines(lines: list[str]) -> None:
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    code, err, rows = run(data, "items.jsonl")
    check_common(code, err, rows)
    if code == 2:
        assert ("ids must be unique" in err or "not UTF-8" in err or "binary file" in err
                or "unusable for the same reason" in err), err
    else:
        assert len(rows) == non_blank_lines(data)


_cell = st.text(alphabet=st.sampled_from(list('ab ,"\';x1é\t')), max_size=12)
_csv_header = st.lists(st.sampled_from(["answer", "reference", "source", "question", "label", "note"]),
                       min_size=1, max_size=4, unique=True)


@SETTINGS
@given(_csv_header, st.lists(st.lists(_cell, max_size=5), max_size=10))
def test_random_csv(header: list[str], body: list[list[str]]) -> None:
    # column 1 is an id that names the line it was written on, so every row can be traced to its line
    lines = ["id," + ",".join(header)] + [f"L{n}," + ",".join(cells) for n, cells in enumerate(body, 2)]
    data = ("\n".join(lines) + "\n").encode()
    code, err, rows = run(data, "items.csv")
    check_common(code, err, rows)
    if code == 2:
        # a quoted cell can make two rows carry one id
        assert "ids must be unique" in err or "unusable for the same reason" in err, err
        return
    by_line: dict[int, dict] = {}
    for r in rows:
        m = re.fullmatch(r"L(\d+)", r["id"])
        line = int(m.group(1)) if m else r.get("line")
        assert isinstance(line, int), r
        assert line not in by_line, (line, rows)
        by_line[line] = r
    starts = sorted(by_line)
    for n in range(2, len(lines) + 1):
        if n in by_line:
            continue
        # not a row of its own: it must lie inside a multi-line record that began on an earlier line
        earlier = [k for k in starts if k < n]
        assert earlier, (n, lines, rows)
        assert '"' in lines[earlier[-1] - 1], (n, lines, rows)
