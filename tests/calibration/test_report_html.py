"""The HTML reports: self-contained, pictures as inline SVG, untrusted text escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_RIGHT, MOSCOW_WRONG

from judgeflow.calibration.agreement import Confusion, calibrate
from judgeflow.calibration.comparison import compare
from judgeflow.calibration.report_html import (
    calibration_html,
    comparison_html,
    svg_confusion,
    svg_split,
)
from judgeflow.results import ClaimResult, Judgment

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class Tags(HTMLParser):
    """Collects the tags and attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parse(page: str) -> Tags:
    t = Tags()
    t.feed(page)
    return t


def rows(human: list[int], judge: list[int], *, evil: bool = False) -> list[Judgment]:
    out = []
    for i, (h, j) in enumerate(zip(human, judge)):
        text = EVIL if evil and i == 0 else f"claim {i}"
        claims = [ClaimResult(id="c1", text=text, verdict="contradicted" if j else "supported", error=bool(j),
                              evidence=EVIL if evil else "", reason=EVIL if evil else "r")]
        out.append(Judgment(id=(f'q{i}"><u>' if evil and i == 0 else f"q{i}"), label=j, human_label=h,
                            criterion="reference_faithfulness", reason=EVIL if evil else "why",
                            claims=claims, extra={"dataset": EVIL if evil and i % 2 else "plain"}))
    return out


HUMAN = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1]
JUDGE = [1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1]


def test_untrusted_text_is_escaped_everywhere() -> None:
    page = calibration_html(calibrate(rows(HUMAN, JUDGE, evil=True), by="dataset"), title=EVIL)
    tags = parse(page)
    assert not [t for t, _ in tags.tags if t in ("script", "img", "u")]
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)
    assert "&lt;script&gt;" in page and "<script" not in page


def test_self_contained_with_svg_pictures() -> None:
    r = calibrate(rows(HUMAN, JUDGE), by="dataset")
    page = calibration_html(r)
    tags = parse(page)
    names = [t for t, _ in tags.tags]
    assert names.count("svg") >= 4  # confusion, split, kappa per group, split per group
    assert not [a for t, a in tags.tags if t in ("script", "link", "iframe") or "src" in a]
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", page)  # nothing fetched from the network
    assert f"Disagreements ({len(r.disagreements)})" in page
    assert all(d.id in page for d in r.disagreements)
    assert "By dataset" in page and "<th>dataset</th>" in page


def test_confusion_svg_shows_each_count_and_the_split_its_shares() -> None:
    c = Confusion(tn=11, fp=29, fn=3, tp=57)
    svg = svg_confusion(c)
    texts = re.findall(r">([^<>]+)</text>", svg)
    for count in ("11", "29", "3", "57"):
        assert count in texts
    assert "false alarms · 29%" in texts and "misses · 3%" in texts
    split = svg_split(29, 3)
    assert "29 (91%)" in split and "32 disagreement(s)" in split
    assert "none" in svg_split(0, 0)
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="22" width="([\d.]+)"', split)]
    assert widths[0] / sum(widths) == pytest.approx(29 / 32, abs=1e-3)


def test_comparison_page() -> None:
    a = rows(HUMAN, JUDGE, evil=True)
    b = [j.model_copy(update={"criterion": "factual_correctness", "label": h}) for j, h in zip(a, HUMAN)]
    page = comparison_html(compare(a, b))
    tags = parse(page)
    assert not [t for t, _ in tags.tags if t in ("script", "img", "u")]
    assert "McNemar exact p" in page and "factual_correctness is right" in page
    assert [t for t, _ in tags.tags].count("svg") >= 5


# -- the disagreements show the texts (issue #11, point 4) ------------------------------------

def _moscow_files(tmp_path, answer: str, source: str):
    import json as _json

    items = tmp_path / "items.jsonl"
    items.write_text(_json.dumps({"id": "m1", "question": MOSCOW_QUESTION, "answer": answer,
                                  "source": source, "label": 0}) + "\n", encoding="utf-8")
    claim = ClaimResult(id="c1", text=MOSCOW_WRONG, verdict="contradicted", error=True,
                        evidence="founded  in 1147", reason="the source says 1147")
    results = tmp_path / "results.jsonl"
    results.write_text(Judgment(id="m1", label=1, human_label=0, criterion="source_faithfulness",
                                reason="c1 fails", claims=[claim]).model_dump_json() + "\n", encoding="utf-8")
    return items, results


def test_disagreements_show_question_evidence_and_answer_escaped(tmp_path) -> None:
    evil_answer = f'<script>alert("x")</script> {MOSCOW_WRONG}'
    source = "Chronicles: Moscow was Founded in\n1147 by Yuri Dolgorukiy. " + "Filler about the city. " * 60
    items, results = _moscow_files(tmp_path, evil_answer, source)
    bare = calibration_html(calibrate(results))  # the results file alone lacks the texts: said so
    assert "not in the results file" in bare and MOSCOW_QUESTION not in bare
    page = calibration_html(calibrate(results, labels=items))  # the labelled file has them
    tags = parse(page)
    assert not [t for t, _ in tags.tags if t == "script"] and "&lt;script&gt;alert(&quot;x&quot;)" in page
    assert MOSCOW_QUESTION in page
    # the long source is folded, and the evidence quote is marked where it occurs (case and spacing aside)
    assert re.search(r"<details><summary>source: [\d,]+ characters, 1 evidence quote\(s\) marked", page)
    assert '<mark class="decides">Founded in\n1147</mark>' in page
    # a hostile evidence quote is escaped too, and marks nothing
    r = calibrate(results, labels=items)
    r.disagreements[0].claims[0].evidence = EVIL
    r.disagreements[0].source = [EVIL + " tail"]
    page = calibration_html(r)
    assert "<script" not in page and '<mark class="decides">&lt;script&gt;' in page


def test_calibrate_cli_reads_texts_from_the_items_file(tmp_path) -> None:
    from judgeflow.cli import main

    items, results = _moscow_files(tmp_path, MOSCOW_WRONG, MOSCOW_RIGHT)
    out = tmp_path / "report.html"
    assert main(["calibrate", str(results), "--items", str(items), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Moscow was founded in 1247." in page and "<mark class=\"decides\">founded in 1147</mark>" in page
    assert "(click to open)" not in page  # a short source is shown open


def test_every_error_claim_is_marked_and_unfound_evidence_flagged() -> None:
    source = "The tower is 330 metres tall. It was finished in 1889 for the World's Fair."
    claims = [
        ClaimResult(id="c1", text="It is 300 m tall.", verdict="contradicted", error=True, basis="source",
                    evidence="330 metres tall"),
        ClaimResult(id="c2", text="It opened in 1890.", verdict="contradicted", error=True, basis="source",
                    evidence="finished in 1889"),
        ClaimResult(id="c3", text="It is in Paris.", verdict="supported", basis="source",
                    evidence="The tower stands in Paris", evidence_found=False),
        ClaimResult(id="c4", text="It is iron.", verdict="supported", basis="source", evidence="made of wrought iron"),
    ]
    wrong = Judgment(id="t1", label=1, human_label=0, criterion="source_faithfulness", claims=claims,
                     extra={"question": "How tall?", "answer": "300 m, opened 1890.", "source": [source]})
    right = Judgment(id="t2", label=0, human_label=0, criterion="source_faithfulness", claims=[])
    page = calibration_html(calibrate([wrong, right, *rows([1, 0], [1, 0])]))
    assert '<mark class="decides">330 metres tall</mark>' in page
    assert '<mark class="err">finished in 1889</mark>' in page, "the second error claim's evidence is marked too"
    assert re.search(r'<tr class="err"><td>c2</td>', page)
    assert page.count("quote not found in the evidence") == 1  # c3: the judge's own check
    assert page.count("not found in the shown evidence") == 1  # c4: not in the source shown


def test_the_answer_marks_the_error_claims_spans_escaped(tmp_path) -> None:
    """#38: the wrong words are marked in the answer itself, by offsets found in code; the answer is untrusted."""
    evil_answer = f'<script>alert("x")</script> {MOSCOW_WRONG} <img src=x onerror=alert(1)>'
    items, results = _moscow_files(tmp_path, evil_answer, MOSCOW_RIGHT)
    r = calibrate(results, labels=items)
    page = calibration_html(r)
    tags = parse(page)
    assert not [t for t, _ in tags.tags if t in ("script", "img")]
    assert f'<mark class="decides" title="c1 contradicted: {MOSCOW_WRONG}">{MOSCOW_WRONG}</mark>' in page
    # a claim that is not in the answer is said so, never marked somewhere
    r.disagreements[0].claims[0].text = "Moscow is on the Moon."
    page = calibration_html(r)
    assert "error claim(s) c1 could not be placed in the answer" in page and "<mark class=\"decides\" title" not in page


def test_mark_spans_escapes_titles_and_skips_bad_offsets() -> None:
    from judgeflow.calibration.report_html import mark_spans

    text = "a <b>bold</b> claim"
    out = mark_spans(text, [(2, 13, "err", '"><script>'), (5, 9, "err", ""), (15, 99, "err", "")])
    assert out == 'a <mark class="err" title="&quot;&gt;&lt;script&gt;">&lt;b&gt;bold&lt;/b&gt;</mark> claim'
