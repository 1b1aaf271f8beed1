"""Other languages: the source document's quiz-bot example, in Russian, with results per language.

What it shows: a quiz bot answers «Кто основал Москву по летописной версии?» at length. The
correct answer (Юрий Долгорукий, 1147, with the correct extra detail about the Kremlin walls in
1156) must pass; the same answer with the wrong year (1247) and the right name must be caught;
so must the wrong name. Claims stay in Russian, verdicts stay in the fixed vocabulary
(supported, contradicted, false_fact, ...), and the results are reported per language next to
the same quiz in English.

The offline judge has no world knowledge: it can only catch the wrong year if the quiz card
states the year, so offline each card carries its fact sheet («справка») with the reference.
An LLM judge gets the short reference from the source document («Юрий Долгорукий») and checks
the year from its own knowledge, as the factual-correctness criterion says.

    python examples/russian_quiz.py                               # offline, no key
    python examples/russian_quiz.py --model openai/gpt-4o-mini    # or set JUDGEFLOW_MODEL
"""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from judgeflow import ConfigError, Judge
from judgeflow.backends import default_model
from judgeflow.cli.render import console
from judgeflow.items import Item
from judgeflow.languages import by_language, with_language

CARDS = {
    "ru": {
        "question": "Кто основал Москву по летописной версии?",
        "reference": "Юрий Долгорукий",
        "notes": "Москву основал князь Юрий Долгорукий: по летописи, первое упоминание Москвы относится "
                 "к 1147 году. В 1156 году князь велел построить деревянные стены Кремля.",
        "answers": {
            "correct": (0, "По летописной версии, Москву основал князь Юрий Долгорукий в 1147 году. Первое "
                           "упоминание города относится именно к этой дате, а в 1156 году князь велел "
                           "построить деревянные стены Кремля."),
            "wrong_year": (1, "По летописной версии, Москву основал князь Юрий Долгорукий в 1247 году. Первое "
                              "упоминание города относится именно к этой дате."),
            "wrong_name": (1, "По летописной версии, Москву основал князь Иван Калита в 1147 году."),
        },
    },
    "en": {
        "question": "Who founded Moscow according to the chronicles?",
        "reference": "Yuri Dolgorukiy",
        "notes": "Prince Yuri Dolgorukiy founded Moscow: the chronicles first mention Moscow in 1147. "
                 "In 1156 the prince ordered wooden walls to be built around the Kremlin.",
        "answers": {
            "correct": (0, "According to the chronicles, Prince Yuri Dolgorukiy founded Moscow in 1147. "
                           "In 1156 the prince ordered wooden walls to be built around the Kremlin."),
            "wrong_year": (1, "According to the chronicles, Prince Yuri Dolgorukiy founded Moscow in 1247."),
        },
    },
}


def items(offline: bool) -> list[Item]:
    out = []
    for lang, card in CARDS.items():
        reference = f"{card['reference']}. {card['notes']}" if offline else card["reference"]
        for name, (label, answer) in card["answers"].items():  # type: ignore[attr-defined]
            out.append(with_language(Item(id=f"{lang}-{name}", question=str(card["question"]),
                                          reference=reference, answer=answer, label=label)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=default_model(), help="provider/model (default: $JUDGEFLOW_MODEL or baseline/lexical)")
    args = parser.parse_args()

    judge = Judge(args.model, mode="factual")
    offline = judge.model.startswith("baseline/")
    results = judge.judge_many(items(offline))
    con = console()  # never wrapped when the output goes to a file or a pipe
    con.print(f"judge: [bold]{judge.model}[/bold], criterion factual_correctness, reference: "
              f"{'short reference + the card fact sheet (offline)' if offline else 'the short reference only'}\n")
    for r in results:
        ok = "[green]as expected[/green]" if r.label == r.human_label else "[red]NOT as expected[/red]"
        con.print(f"[bold]{escape(r.id)}[/bold] ({r.extra['language']}): label {r.label}, expected {r.human_label}: {ok}")
        for c in r.claims:
            colour = "red" if c.error else "dim"
            con.print(f"    [{colour}]{c.verdict:<13} {escape(c.text)}[/{colour}]  " + escape(f"({c.reason})"))
    table = Table("language", "items", "label 1", "label 0", "unscored", "agree with expected")
    for lang, row in by_language(results).items():
        table.add_row(lang, str(row["items"]), str(row["label_1"]), str(row["label_0"]), str(row["unscored"]),
                      f"{row['agree']}/{row['labelled']}")
    con.print()
    con.print(table)
    missed = [r.id for r in results if r.label != r.human_label]
    if missed and offline:
        con.print(f"\nthe offline floor got {escape(str(missed))} wrong: in factual mode it does not count a name the "
                  "reference lacks as an error (correct extra names are common) and has no world knowledge "
                  "to tell Ivan Kalita from Yuri Dolgorukiy. An LLM judge (--model) checks names too.")


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
