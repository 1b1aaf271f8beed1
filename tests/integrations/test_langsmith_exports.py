"""LangSmith exports read as they are (#47): an experiment's `ExperimentResults.to_pandas()` (columns
inputs.*, outputs.*, reference.*) made by the real langsmith `evaluate` offline (a local endpoint that
answers anything, upload_results=False), and a dataset's examples (`outputs` is the reference there)."""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

langsmith = pytest.importorskip("langsmith")
pd = pytest.importorskip("pandas")

from langsmith.schemas import Example  # noqa: E402

from judgeflow.cli import main  # noqa: E402
from judgeflow.items import Item  # noqa: E402

QUESTION, CONTEXT = "When was Moscow founded?", "Moscow was founded in 1147 by Yuri Dolgorukiy."
WRONG, RIGHT = "Moscow was founded in 1247.", "Moscow was founded in 1147."


class _Answering(BaseHTTPRequestHandler):
    def _any(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PATCH = _any

    def log_message(self, *args: object) -> None:
        pass


def _examples() -> list:
    return [Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"question": QUESTION, "context": [CONTEXT]},
                    outputs={"answer": "1147"}) for _ in range(2)]


@pytest.fixture(scope="module")
def experiment():
    """The DataFrame a LangSmith user gets from `evaluate(...).to_pandas()`: one wrong answer, one right."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answering)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = langsmith.Client(api_url=f"http://127.0.0.1:{server.server_port}", api_key="lsv2_pt_fake")
        answers = iter([WRONG, RIGHT])
        results = langsmith.evaluate(lambda inputs: {"output": next(answers)}, data=_examples(),
                                     evaluators=[lambda outputs, reference_outputs: {"key": "len", "score": 1}],
                                     upload_results=False, client=client, max_concurrency=0)
        df = results.to_pandas()
    finally:
        server.shutdown()
    assert {"inputs.question", "inputs.context", "outputs.output", "reference.answer", "example_id", "id"} <= set(df)
    return df.assign(id=df["id"].astype(str), example_id=df["example_id"].astype(str))


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_experiment_export_is_judged_with_no_map(experiment, tmp_path, fmt):
    path = tmp_path / f"experiment.{fmt}"
    if fmt == "jsonl":
        experiment.to_json(path, orient="records", lines=True)
    else:
        experiment.to_parquet(path)
    out = tmp_path / "out.jsonl"
    assert main(["run", str(path), "-o", str(out), "--model", "baseline/lexical", "--store",
                 str(tmp_path / "s.sqlite")]) in (0, 1)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_answer = {r["answer"]: r for r in rows}
    assert set(by_answer) == {WRONG, RIGHT} and {r["status"] for r in rows} == {"judged"}
    assert by_answer[WRONG]["label"] == 1 and by_answer[RIGHT]["label"] == 0
    assert {r["question"] for r in rows} == {QUESTION} and by_answer[WRONG]["source"] == [CONTEXT]
    assert by_answer[WRONG]["reference"] == "1147"
    assert {r["id"] for r in rows} == set(experiment["id"])  # the run's id


def test_a_dataset_example_holds_the_reference_in_its_outputs():
    example = json.loads(_examples()[0].model_dump_json())
    item = Item.from_record({**example, "answer": WRONG})
    assert item.reference == "1147" and item.answer == WRONG and item.question == QUESTION
    with pytest.raises(Exception, match="answer"):  # a dataset has no answers: its outputs are not one
        Item.from_record(example)
    plain = Item.from_record({"id": "p1", "inputs": {"question": QUESTION}, "outputs": {"answer": WRONG},
                              "reference_outputs": {"answer": "1147"}})
    assert plain.answer == WRONG and plain.reference == "1147"  # a run's outputs are still its answer
