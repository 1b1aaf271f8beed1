"""The terminal labeller, driven by a scripted input function."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.labeller import label_file, truncate
from judgeflow.calibration.labels import read_labels
from judgeflow.errors import InvalidItemError
from judgeflow.results import Judgment

SECRET = "JUDGE-REASON-XYZ"


def make_sample(path: Path, n: int = 4) -> Path:
    rows = [{"id": f"q{i}", "question": f"Question {i}?", "reference": f"Reference {i}", "answer": f"Answer {i}",
             "judge": {"label": i % 2, "criterion": "reference_faithfulness", "reason": f"{SECRET}-{i}",
                       "claim": None}}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def scripted(keys: list[str], console_buf: io.StringIO, seen: list[str]) -> Callable[[str], str]:
    """An input function: records what was on screen when each key was asked for."""
    it = iter(keys)

    def ask(prompt: str) -> str:
        seen.append(console_buf.getvalue())
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None
    return ask


def session(path: Path, keys: list[str], **kw: object) -> tuple[object, list[str], str]:
    buf, seen = io.StringIO(), []
    console = Console(file=buf, width=100, color_system=None)
    summary = label_file(path, input_fn=scripted(keys, buf, seen), console=console, **kw)  # type: ignore[arg-type]
    return summary, seen, buf.getvalue()


def labels_on_disk(path: Path) -> list[object]:
    return [json.loads(x).get("label") for x in path.read_text().splitlines()]


def test_labels_are_saved_after_each_key(tmp_path: Path) -> None:
    path = make_sample(tmp_path / "s.jsonl")
    on_disk: list[list[object]] = []
    buf = io.StringIO()
    keys = iter(["1", "0", "q"])

    def ask(prompt: str) -> str:
        on_disk.append(labels_on_disk(path))
        return next(keys)

    label_file(path, input_fn=ask, console=Console(file=buf, width=100))
    assert on_disk == [[None] * 4, [1, None, None, None], [1, 0, None, None]]
    assert labels_on_disk(path) == [1, 0, None, None]
    assert not list(tmp_path.glob(".s.jsonl.*.tmp"))  # no temporary file left behind (the lock file stays)


def test_resume_skip_back_and_quit(tmp_path: Path) -> None:
    path = make_sample(tmp_path / "s.jsonl")
    s, _, _ = session(path, ["1", "s", "q"])
    assert (s.labelled, s.skipped, s.remaining) == (1, 1, 2)
    s, seen, out = session(path, ["0", "b", "1", "q"])  # resumes at q2 (q0 labelled, q1 skipped)
    assert "item 3 of 4 · q2" in seen[0] and "item 1 of 4" not in seen[0]
    assert "item 4 of 4 · q3" in seen[1][len(seen[0]):]      # after labelling q2, on to q3
    back = seen[2][len(seen[1]):]                                # then b: q2 again, with its label
    assert "item 3 of 4 · q2" in back and "your label: 0" in back and SECRET not in back
    assert labels_on_disk(path) == [1, None, 1, None]  # back to q2 and changed 0 -> 1
    assert "run `judgeflow label" in out
    s, _, _ = session(path, ["0"])  # q3, then everything is done
    assert (s.labelled, s.skipped, s.remaining) == (3, 1, 0)
    s, seen, out = session(path, [])
    assert "all 4 items are labelled or skipped" in out and not seen


def test_judge_verdict_is_hidden_until_labelled(tmp_path: Path) -> None:
    path = make_sample(tmp_path / "s.jsonl", n=2)
    s, seen, out = session(path, ["0", "0"])
    assert SECRET not in seen[0]                      # item q0 shown, verdict not
    assert f"{SECRET}-0" in seen[1] and "you agree" in seen[1]  # revealed after labelling q0 (judge said 0)
    assert f"{SECRET}-1" not in seen[1]               # q1's verdict still hidden while asking about it
    assert "false alarm" in out                        # judge said 1 for q1, the person 0
    assert (s.agree, s.false_alarms, s.misses) == (1, 1, 0)


def test_unknown_key_asks_again(tmp_path: Path) -> None:
    path = make_sample(tmp_path / "s.jsonl", n=1)
    s, seen, out = session(path, ["x", "yes", "1"])
    assert out.count("unknown key") == 2 and s.ones == 1


def test_long_texts_are_truncated_and_sources_shown(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    long = " ".join(f"word{i}" for i in range(2000))
    path.write_text(json.dumps({"id": "x", "source": ["doc one " + long, "doc two"], "answer": "A"}) + "\n")
    _, seen, _ = session(path, ["q"], max_chars=400)
    assert "source 1 of 2" in seen[0] and "doc two" in seen[0] and "characters not shown" in seen[0]
    assert truncate("a b c d e", 100) == "a b c d e"
    assert truncate(long, 50).endswith("characters not shown]")


def test_the_labelled_file_is_a_labels_file_for_calibrate(tmp_path: Path) -> None:
    path = make_sample(tmp_path / "s.jsonl")
    session(path, ["1", "0", "1", "s"])
    labels = read_labels(path)
    assert labels.labels == {"q0": 1, "q1": 0, "q2": 1} and labels.unlabelled == ["q3"]
    results = [Judgment(id=f"q{i}", label=i % 2) for i in range(4)]
    r = calibrate(results, labels)
    assert r.n == 3 and r.false_alarms == 1 and r.misses == 2


def test_cli_label_reads_keys_from_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgeflow.cli import main

    path = make_sample(tmp_path / "s.jsonl", n=3)
    keys = iter(["0", "1", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(keys, "q"))
    assert main(["label", str(path)]) == 0
    assert labels_on_disk(path) == [0, 1, None]
    keys = iter(["1"])
    assert main(["label", str(path), "--start", "1"]) == 0  # revisit item 1: relabel it, then on to q2
    assert labels_on_disk(path) == [1, 1, None]


def test_refuses_csv_and_empty(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("id,answer\nq1,A\n")
    with pytest.raises(InvalidItemError, match=r"\.jsonl"):
        label_file(tmp_path / "s.csv", input_fn=lambda p: "q")
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(InvalidItemError, match="no items"):
        label_file(tmp_path / "e.jsonl", input_fn=lambda p: "q")
