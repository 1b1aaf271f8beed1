"""The QA bot under test (a stand-in for your LLM app), and the CI step that runs it.

    python examples/qa_bot_ci/bot.py examples/qa_bot_ci/questions.jsonl -o answers.jsonl

writes one item per question (id, question, reference, answer): what `judgeflow run` judges. The
workflow beside it (qa-bot-gate.yml) then gates the judged answers against baseline.jsonl, the
judged answers of the bot on the main branch. `test_qa_bot.py` asks the same bot per item.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: question -> the bot's answer (one answer is wrong on purpose: Moscow's first mention was 1147)
ANSWERS = {
    'Who founded Moscow?': 'Moscow was founded by Yuri Dolgorukiy in 1147.',
    'When were the first Kremlin walls built?': 'The first wooden walls of the Kremlin were built in 1156.',
    'When was Moscow first mentioned?': 'Moscow was first mentioned in 1247.',
    'In which year did humans first land on the Moon?': 'Humans first landed on the Moon in 1969.',
    'When did the Berlin Wall fall?': 'The Berlin Wall fell in 1989.',
    'How high is Mount Everest?': 'Mount Everest is 8849 metres high.',
    'At what temperature does water boil at sea level, in Celsius?': 'Water boils at 100 degrees Celsius at sea level.',
    'What is the speed of light in vacuum, in km/s?': 'Light travels at 299792 km/s in vacuum.',
    'In which year did the Second World War end?': 'The Second World War ended in 1945.',
    'When did the French Revolution begin?': 'The French Revolution began in 1789.',
    'In which year did the Titanic sink?': 'The Titanic sank in 1912.',
    'In which year did Columbus first reach the Americas?': 'Columbus first reached the Americas in 1492.',
    'When was the Magna Carta sealed?': 'The Magna Carta was sealed in 1215.',
    'Around which year did Gutenberg build his printing press?': 'Gutenberg built his printing press around 1440.',
    'In which year was the US Declaration of Independence signed?': 'It was signed in 1776.',
    'How many planets are in the Solar System?': 'There are 8 planets in the Solar System.',
    'How many chromosomes do humans have?': 'Humans have 46 chromosomes.',
    'How many bones does an adult human have?': 'An adult human has 206 bones.',
    'How long is a marathon, in kilometres?': 'A marathon is 42.195 km long.',
    'When was the Battle of Hastings?': 'The Battle of Hastings was fought in 1066.',
    'When was Sputnik 1 launched?': 'Sputnik 1 was launched in 1957.',
    'In which year did Yuri Gagarin fly to space?': 'Yuri Gagarin flew to space in 1961.',
    'In which year did euro notes and coins enter circulation?': 'Euro notes and coins entered circulation in 2002.',
    'In which year was the United Nations founded?': 'The United Nations was founded in 1945.',
    'When did the Wright brothers first fly?': 'The Wright brothers first flew in 1903.',
    'When did Fleming discover penicillin?': 'Fleming discovered penicillin in 1928.',
    'When was the structure of DNA described?': 'The structure of DNA was described in 1953.',
    'When did Tim Berners-Lee propose the World Wide Web?': 'Tim Berners-Lee proposed the World Wide Web in 1989.',
    'When was the Eiffel Tower completed?': 'The Eiffel Tower was completed in 1889.',
    'When did the Panama Canal open?': 'The Panama Canal opened in 1914.',
    'When did the Suez Canal open?': 'The Suez Canal opened in 1869.',
    'When did Constantinople fall to the Ottomans?': 'Constantinople fell to the Ottomans in 1453.',
    'In which year was Alexander Pushkin born?': 'Alexander Pushkin was born in 1799.',
    'When was War and Peace first published in full?': 'War and Peace was first published in full in 1869.',
    'When did Mendeleev publish his periodic table?': 'Mendeleev published his periodic table in 1869.',
    'In which year was Saint Petersburg founded?': 'Saint Petersburg was founded in 1703.',
    'How deep is Lake Baikal at its deepest point, in metres?': 'Lake Baikal is 1642 metres deep at its deepest point.',
    'How long is the Volga, in kilometres?': 'The Volga is 3531 km long.',
    'In which year was the Hermitage Museum founded?': 'The Hermitage Museum was founded in 1764.',
    'In which year was the Bolshoi Theatre founded?': 'The Bolshoi Theatre was founded in 1776.',
}


def quiz_bot(question: str) -> str:
    """The bot: answers a question (replace with a call to your app)."""
    return ANSWERS[question]


def main() -> None:
    parser = argparse.ArgumentParser(description="answer every question with the bot")
    parser.add_argument("questions", type=Path, help="questions .jsonl (id, question, reference)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="items .jsonl for `judgeflow run`")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    with args.output.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({**row, "answer": quiz_bot(row["question"])}, ensure_ascii=False) + "\n")
    print(f"answered {len(rows)} questions -> {args.output}")


if __name__ == "__main__":
    main()
