"""Hand-written text helpers against maintained libraries, on small labelled sets kept here.

    python benchmarks/handwritten.py        # needs: pip install pysbd langdetect (nltk comes with rouge-score)

1. Sentence splitting (`judgeflow.text.sentences`, which the offline judges' claims come from)
   against pysbd and NLTK's Punkt (untrained: NLTK's trained models are a separate download):
   the share of texts split exactly right.
2. Language detection (`judgeflow.languages.detect_language`) against langdetect, on short
   answers (what judgeflow sees): the share detected right, and the time per call.
"""

from __future__ import annotations

import time

from judgeflow.languages import detect_language
from judgeflow.text import sentences

#: (text, its sentences)
SPLITS = [
    ("Paris is the capital of France. It has 2.1 million people.", 2),
    ("No. The war ended in 1945.", 2),
    ("Dr. Smith founded the clinic in 1990. It closed later.", 2),
    ("The U.S. economy grew 2.5% in 2023. Inflation fell.", 2),
    ("He scored No. 1 on the chart. It stayed there for nine weeks.", 2),
    ("Mt. Everest is 8,849 m high.", 1),
    ("It costs $3.50 per unit, e.g. a small box. Delivery is free.", 2),
    ("The answer is yes. Shakespeare wrote Hamlet around 1600.", 2),
    ("Москва основана в 1147 году. Её основал Юрий Долгорукий.", 2),
    ("Berlin ist die Hauptstadt. Sie hat 3,7 Mio. Einwohner.", 2),
    ("The song spent nine weeks at No. 1 on the Billboard Hot 100.", 1),
    ("Vol. 2 was published in 1999. It sold well.", 2),
    ("She said \"It is late.\" Then she left.", 2),
    ("J. K. Rowling wrote Harry Potter. The first book came out in 1997.", 2),
    ("The meeting is at 5 p.m. on Monday.", 1),
    ("The capital of Australia is Canberra.", 1),
    ("No, the Great Wall is not visible from space. Astronauts confirmed it.", 2),
]

#: (short answer, ISO 639-1)
LANGS = [
    ("The Eiffel Tower is in Paris.", "en"), ("He was born in 1879 in Ulm.", "en"), ("No, it is not.", "en"),
    ("Shakespeare wrote Hamlet.", "en"), ("The answer is nine weeks.", "en"),
    ("Der Eiffelturm steht in Paris.", "de"), ("Er wurde 1879 in Ulm geboren.", "de"), ("Nein, das ist nicht so.", "de"),
    ("La tour Eiffel est à Paris.", "fr"), ("Il est né en 1879 à Ulm.", "fr"), ("Non, ce n'est pas vrai.", "fr"),
    ("La torre Eiffel está en París.", "es"), ("Nació en 1879 en Ulm.", "es"), ("No, no es cierto.", "es"),
    ("La torre Eiffel è a Parigi.", "it"), ("È nato nel 1879 a Ulm.", "it"), ("No, non è vero.", "it"),
    ("A Torre Eiffel fica em Paris.", "pt"), ("Ele nasceu em 1879 em Ulm.", "pt"), ("Não, não é verdade.", "pt"),
    ("Эйфелева башня находится в Париже.", "ru"), ("Он родился в 1879 году в Ульме.", "ru"), ("Нет, это не так.", "ru"),
    ("Ейфелева вежа знаходиться в Парижі.", "uk"), ("Він народився у 1879 році в Ульмі.", "uk"),
    ("Ні, це не так.", "uk"), ("エッフェル塔はパリにあります。", "ja"), ("埃菲尔铁塔在巴黎。", "zh"),
]


def split_score(split) -> float:
    return sum(len(split(t)) == n for t, n in SPLITS) / len(SPLITS)


def main() -> None:
    import pysbd
    from langdetect import DetectorFactory, detect
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    seg, punkt = pysbd.Segmenter(language="en", clean=False), PunktSentenceTokenizer()
    print(f"sentence splits exactly right, of {len(SPLITS)} texts:")
    for name, fn in (("judgeflow.text.sentences", sentences), ("pysbd", seg.segment), ("nltk punkt (untrained)",
                                                                                      punkt.tokenize)):
        wrong = [t for t, n in SPLITS if len(fn(t)) != n]
        print(f"  {name:26s} {split_score(fn):.0%}   wrong: {wrong}")
    DetectorFactory.seed = 0
    print(f"language detected right, of {len(LANGS)} short answers (time per call):")
    for name, fn in (("judgeflow detect_language", detect_language), ("langdetect", detect)):
        t0 = time.perf_counter()
        got = [fn(t) for t, _ in LANGS]
        per = (time.perf_counter() - t0) / len(LANGS) * 1e3
        wrong = [(t, g) for (t, want), g in zip(LANGS, got) if not str(g).startswith(want)]
        print(f"  {name:26s} {1 - len(wrong) / len(LANGS):.0%}  ({per:.2f} ms)   wrong: {wrong}")


if __name__ == "__main__":
    main()
