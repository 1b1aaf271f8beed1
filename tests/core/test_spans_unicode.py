"""Spans end on grapheme boundaries, and NFC/NFD and case folding do not leave claims unplaced (issue 46, F30)."""

from __future__ import annotations

import unicodedata

import pytest

from judgeflow.spans import locate


@pytest.mark.parametrize("answer, passage, whole", [
    ("The cafe\u0301 opened in 1990.", "The cafe", "The cafe\u0301"),             # a combining acute after the match
    ("Flag: \U0001F3F3\uFE0F\u200D\U0001F308 flies.", "Flag: \U0001F3F3", "Flag: \U0001F3F3\uFE0F\u200D\U0001F308"),
    ("Love \u2764\uFE0F always", "Love \u2764", "Love \u2764\uFE0F"),           # a variation selector
    ("Family \U0001F468\u200D\U0001F469\u200D\U0001F467 here", "Family \U0001F468",
     "Family \U0001F468\u200D\U0001F469\u200D\U0001F467"),                     # a ZWJ sequence
])
def test_a_span_never_cuts_a_grapheme(answer, passage, whole):
    start, end = locate(passage, answer)
    assert answer[start:end] == whole


@pytest.mark.parametrize("answer, passage", [
    (unicodedata.normalize("NFD", "Le café de Zoé ouvre à Noël."), "café de Zoé"),   # an NFD answer, an NFC quote
    ("Le café de Zoé ouvre à Noël.", unicodedata.normalize("NFD", "café de Zoé")),   # and the other way round
    ("İstanbul is the largest city of Türkiye.", "istanbul is the largest city"),   # İ folds to i + a dot above
    ("The city is ISTANBUL.", "İstanbul"),
])
def test_nfc_nfd_and_case_folding_place_the_claim(answer, passage):
    span = locate(passage, answer)
    assert span is not None
    got = unicodedata.normalize("NFC", answer[span[0]:span[1]]).casefold().replace("i\u0307", "i")
    assert got == unicodedata.normalize("NFC", passage).casefold().replace("i\u0307", "i")
