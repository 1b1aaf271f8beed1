"""Several labellers: who gave each label, the overlap two of them labelled, and the human ceiling.

    ann = read_annotations(["alice.jsonl", "bob.jsonl"])     # id -> {labeller: label}
    ceilings = human_ceiling(ann, results)                  # kappa between people, beside the judge's
    overlap_file("alice.jsonl", 20, "for_bob.jsonl")         # an overlap set for a second labeller (overlap.py)

A label row names its labeller in `labelled_by` (`judgeflow label --as NAME`, `judgeflow review --as
NAME`); a row without one belongs to the file's labeller, named after the file (its stem). One file
may hold several labellers' rows for the same id (one row per id and labeller). Two people who
label the same items give the ceiling a judge can be expected to reach: their Cohen's kappa on the
overlap, with its interval, printed beside the judge's kappa with each of them on the same items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import InvalidItemError
from ..items import parse_label
from ..results import Judgment
from .labels import LABEL_FIELDS, HumanLabels, Label, first_field, label_rows

LABELLER_FIELD = "labelled_by"
"""The field of a label row that names who gave the label."""
#: what a fresh copy for another labeller leaves out: the first person's label, its stamp, skip, name, note
PERSONAL_FIELDS = (*LABEL_FIELDS, "labelled_at", "label_skipped", LABELLER_FIELD, "review_note", "note")


class Annotations(BaseModel):
    """Labels by labeller: labeller -> id -> 0/1, in the order the labellers were first seen."""

    paths: list[str] = Field(default_factory=list)
    by_labeller: dict[str, dict[str, Label]] = Field(default_factory=dict)

    @property
    def labellers(self) -> list[str]:
        return list(self.by_labeller)

    def primary(self) -> HumanLabels:
        """The first labeller's labels: what the judge is calibrated against."""
        name = self.labellers[0]
        return HumanLabels(path=f"{self.paths[0]} ({name})" if len(self.by_labeller) > 1 else self.paths[0],
                           labels=dict(self.by_labeller[name]))


def labeller_of(rec: Mapping[str, Any], path: str | Path) -> str:
    """Who gave this row's label: its `labelled_by`, else the file's stem."""
    name = rec.get(LABELLER_FIELD)
    return str(name).strip() if isinstance(name, str) and name.strip() else Path(path).stem


def _read_one(path: str | Path, out: Annotations) -> None:
    p = str(path)
    seen: dict[tuple[str, str], int] = {}
    for line, rec, item_id in label_rows(path):
        who = labeller_of(rec, path)
        if (item_id, who) in seen:
            raise InvalidItemError(f"id {item_id!r} is labelled twice by {who!r} (first on line {seen[item_id, who]}); "
                                   f"keep one label per id and labeller ({LABELLER_FIELD!r} names the labeller)",
                                   path=p, line=line, field="id", item_id=item_id)
        seen[item_id, who] = line
        field, raw = first_field(rec, LABEL_FIELDS)

        def bad(msg: str, f: str, _line: int = line, _id: str = item_id) -> InvalidItemError:
            return InvalidItemError(f"item '{_id}': {msg} (also accepted: yes/no)",
                                    path=p, line=_line, field=field or f, item_id=_id)

        value = parse_label(raw, bad)
        if value is not None:
            out.by_labeller.setdefault(who, {})[item_id] = value
    out.paths.append(p)


def read_annotations(paths: str | Path | Sequence[str | Path]) -> Annotations:
    """Read one or more labels files into labels by labeller.

    Raises:
        InvalidItemError: a row without an id, a bad label, an id labelled twice by one labeller,
            or no label at all.
    """
    out = Annotations()
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        _read_one(path, out)
    if not out.by_labeller:
        raise InvalidItemError("no labelled row in the labels file(s); label some with `judgeflow label`",
                               path=", ".join(out.paths))
    return out


class HumanCeiling(BaseModel):
    """Two labellers on the items both labelled, and the judge with each of them on the same items."""

    a: str
    b: str
    overlap: int
    """Items both labelled."""
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    kappa_ci_note: str | None = None
    agree: int = 0
    """Overlap items they gave the same label."""
    judged: int = 0
    """Overlap items the judge scored (the judge's kappas below are on these)."""
    judge_kappa_a: float | None = None
    judge_kappa_b: float | None = None
    text: str = ""


def _k(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.2f}"


def pair_ceiling(ann: Annotations, a: str, b: str, judged: Mapping[str, int], *, agreement: Callable[..., Any],
                 kappa_text: Callable[[Any], str], seed: int, n_boot: int) -> HumanCeiling:
    """Human-human kappa of labellers `a` and `b` on their overlap, beside the judge's kappa with each.

    `agreement` and `kappa_text` are `calibration.agreement`'s (passed in: that module calls this one)."""
    la, lb = ann.by_labeller[a], ann.by_labeller[b]
    ids = [i for i in la if i in lb]
    human = agreement([la[i] for i in ids], [lb[i] for i in ids], seed=seed, n_boot=n_boot)
    scored = [i for i in ids if i in judged]
    ja = agreement([la[i] for i in scored], [judged[i] for i in scored], seed=seed, n_boot=n_boot)
    jb = agreement([lb[i] for i in scored], [judged[i] for i in scored], seed=seed, n_boot=n_boot)
    out = HumanCeiling(a=a, b=b, overlap=len(ids), kappa=human.kappa, kappa_ci=human.kappa_ci,
                       kappa_ci_note=human.kappa_ci_note, agree=sum(la[i] == lb[i] for i in ids),
                       judged=len(scored), judge_kappa_a=ja.kappa, judge_kappa_b=jb.kappa)
    if not ids:
        out.text = f"{a} and {b} labelled no item in common: label an overlap (`judgeflow sample --overlap`)."
        return out
    out.text = (f"{a} vs {b} kappa {kappa_text(human)} on {len(ids)} items both labelled "
                f"({out.agree} agree); on the {len(scored)} of them the judge scored, judge vs {a} {_k(ja.kappa)}, "
                f"judge vs {b} {_k(jb.kappa)}.")
    if human.kappa is not None and ja.kappa is not None and jb.kappa is not None:
        gap = human.kappa - max(ja.kappa, jb.kappa)
        out.text += (" The judge is at the human ceiling." if gap <= 0 else
                     f" The judge is {gap:.2f} below the people's agreement with each other.")
    return out


def human_ceiling(ann: Annotations, results: Iterable[Judgment], *, agreement: Callable[..., Any],
                  kappa_text: Callable[[Any], str], seed: int = 0, n_boot: int = 2000) -> list[HumanCeiling]:
    """Every pair of labellers: their kappa on the overlap and the judge's on the same items ([] for one).
    `calibrate(results, labels=[file_a, file_b])` calls this with `calibration.agreement`'s functions."""
    judged = {j.id: j.label for j in results if j.label is not None}
    return [pair_ceiling(ann, a, b, judged, agreement=agreement, kappa_text=kappa_text, seed=seed, n_boot=n_boot)
            for a, b in combinations(ann.labellers, 2)]


def labels_for_calibration(labels: str | Path | Sequence[str | Path]) -> tuple[HumanLabels, Annotations | None]:
    """The labels to calibrate the judge against, and every labeller's labels when there are several.

    One file with one labeller reads as before (`read_labels`: its unlabelled ids kept); several
    labellers (files, or `labelled_by` values in one file): the first labeller's labels, plus all."""
    from .labels import read_labels

    paths = [labels] if isinstance(labels, (str, Path)) else list(labels)
    ann = read_annotations(paths)
    if len(ann.labellers) == 1 and len(paths) == 1:
        return read_labels(paths[0]), None
    return ann.primary(), ann
