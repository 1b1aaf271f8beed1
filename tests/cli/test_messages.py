"""What the command line says: brackets survive (rich markup is escaped), output to files and
pipes is never wrapped, misspelt options and commands get one line naming the nearest one, a
missing -o has a default, and the hints say what is true for the user in front of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import main, nearest


def items(path: Path, n: int = 2) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "answer": f"Paris is the capital, item {i}.",
                                        "reference": "Paris"}) + "\n" for i in range(n)))
    return path


def test_brackets_in_messages_and_file_names_survive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: rich read `[review]` as markup: `items[review].jsonl` was reported as `items.jsonl`."""
    missing = tmp_path / "items[review].jsonl"
    assert main(["run", str(missing), "-o", str(tmp_path / "o.jsonl"), "--no-progress"]) == 2
    assert "items[review].jsonl" in capsys.readouterr().err
    src = items(tmp_path / "in[1].jsonl")
    out = tmp_path / "out[bold].jsonl"
    assert main(["run", str(src), "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert "out[bold].jsonl" in capsys.readouterr().err
    from judgeflow.errors import ConfigError

    def fails(args: object) -> int:
        raise ConfigError("judgeflow review needs its extra: pip install 'judgeflow[review]'")

    import argparse

    ns = argparse.Namespace(func=fails)
    from unittest import mock

    with mock.patch("judgeflow.cli.build_parser") as bp:
        bp.return_value.parse_args.return_value = ns
        assert main(["review", "x"]) == 2
    assert "pip install 'judgeflow[review]'" in capsys.readouterr().err


def test_a_misspelt_option_gets_one_line_with_the_nearest_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:  # argparse exits: `python -m judgeflow` exits 2 the same way
        main(["run", "x.jsonl", "--modle", "openai/gpt-4o-mini"])
    assert exit_.value.code == 2
    out, err = capfd.readouterr()
    assert err.strip().splitlines() == [err.strip()] and not out  # one line, no usage dump
    assert "--modle (did you mean --model?)" in err and "see judgeflow run --help" in err
    assert nearest("--concurency", ["--concurrency", "--criterion"]) == "--concurrency"
    assert nearest("--zzzzzz", ["--model", "--mode"]) is None


def test_a_misspelt_command_gets_the_nearest_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["calibrat", "results.jsonl"]) == 2
    out, err = capfd.readouterr()
    assert not out
    assert err.strip() == "judgeflow: error: unknown command 'calibrat'; did you mean calibrate? see judgeflow --help"


def test_without_o_the_results_go_beside_the_input_and_it_says_so(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    src = items(tmp_path / "items.jsonl")
    assert main(["run", str(src), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert (tmp_path / "items.results.jsonl").exists()
    assert f"writing the results to {tmp_path / 'items.results.jsonl'}" in capsys.readouterr().err


def test_results_to_stdout_keep_the_json_summary_off_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capfd: pytest.CaptureFixture[str]) -> None:
    items(tmp_path / "in.jsonl")
    monkeypatch.chdir(tmp_path)
    code = main(["run", "in.jsonl", "-o", "-", "--json", "--no-progress"])
    out, err = capfd.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["id"] for row in rows] == ["q0", "q1"]  # only results on stdout
    assert json.loads(err.strip().splitlines()[-1])["rows"] == 2


def test_batch_status_to_a_file_or_pipe_is_not_wrapped(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: `batch status` and `batch collect` printed through a plain Console, wrapped at 80
    columns when written to a file or a pipe."""
    from fakes import FakeProvider

    from judgeflow.runs.store import RunStore

    monkeypatch.delenv("COLUMNS", raising=False)
    src = items(tmp_path / "in.jsonl", 3)
    store = str(tmp_path / ("a-long-store-directory-name-" * 3) / "runs.sqlite")
    with FakeProvider() as fake:
        assert main(["run", str(src), "-o", str(tmp_path / "out.jsonl"), "--model", "openai/fake-judge",
                     "--base-url", fake.base_url + "/v1", "--store", store, "--no-progress", "--batch"]) == 0
        with RunStore(store) as s:
            run_id = s.runs()[0].run_id
        capsys.readouterr()
        assert main(["batch", "status", run_id, "--store", store]) == 0
        out = capsys.readouterr().out
    round_line = next(x for x in out.splitlines() if "round 1" in x)
    assert round_line.rstrip().endswith(")") and len(round_line) > 80, out  # the whole line, unbroken


def test_criteria_list_never_breaks_a_name_in_a_100_column_terminal(tmp_path: Path) -> None:
    from rich.console import Console

    from judgeflow.cli import criteria_cmd
    from judgeflow.criteria import list_criteria

    con = Console(width=100, force_terminal=True, record=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(criteria_cmd, "console", lambda **kw: con)
        criteria_cmd.cmd_list(type("A", (), {"json": False})())
    text = con.export_text()
    for name in list_criteria():
        assert name in text, f"{name} broken over lines:\n{text}"


def test_temperature_has_help_and_hints_fit_the_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = capsys.readouterr().out
    temp = help_text[help_text.index("\n  --temperature"):].split("\n  --")[1]
    assert "sampling temperature" in " ".join(temp.split())
    src = items(tmp_path / "in.jsonl")
    assert main(["run", str(src), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/gpt-4o-mini",
                 "--no-progress", "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "api_key=" not in err  # `run` has no --api-key


def test_anthropic_hint_does_not_send_the_user_to_v1() -> None:
    import anthropic
    import httpx

    from judgeflow.backends.llm import classify

    req = httpx.Request("POST", "http://127.0.0.1:9/v1/v1/messages")
    e = anthropic.NotFoundError("not found", response=httpx.Response(404, request=req), body=None)
    kind, hint = classify(e)  # type: ignore[misc]
    assert kind == "HTTP 404" and "usually end in /v1" not in hint and "no /v1" in hint


def test_a_panel_mixing_wires_with_one_base_url_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = items(tmp_path / "in.jsonl")
    assert main(["run", str(src), "-o", str(tmp_path / "o.jsonl"), "--panel", "openai/a,anthropic/b",
                 "--base-url", "http://127.0.0.1:9/v1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "model@url" in err and "openai/a@http://HOST:PORT/v1" in err and "anthropic/b@http://HOST:PORT" in err


def test_the_pytest_plugin_takes_a_base_url(pytestconfig: pytest.Config) -> None:
    """The option is registered by the plugin this pytest loaded through its entry point (as a user's
    pytest loads it; a second pytest process for `--help` only repaid the start-up)."""
    assert pytestconfig.pluginmanager.has_plugin("judgeflow")
    assert pytestconfig.getoption("--judgeflow-base-url") is None  # registered (an unknown option raises), unset
    with pytest.raises(ValueError):
        pytestconfig.getoption("--judgeflow-no-such-option")
    from judgeflow import testing

    testing.configure(model="openai/fake", base_url="http://127.0.0.1:9/v1")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPENAI_API_KEY", "test")
            judge = testing.cached_judge()
        assert judge.judging.inner.backend.client.base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    finally:
        testing.configure()


def test_panel_summaries_say_judged_and_count_cache_hits_per_member() -> None:
    from judgeflow.results import JudgeVote, Judgment
    from judgeflow.runs.panel_summary import summary_lines

    rows = [Judgment(id=f"x{i}", label=1, agreement="1/2" if i else "2/2",
                     judges=[JudgeVote(model="baseline/lexical", role="member", label=1, cached=i < 2),
                             JudgeVote(model="baseline/rouge-l", role="member", label=i % 2, cached=False)])
            for i in range(3)]
    lines = summary_lines(rows, prices=None)
    assert "member baseline/lexical: 0 calls" in lines[0] and lines[0].endswith("; 2 served from cache")
    assert "served from cache" not in lines[1]
    assert "disagree on 2 of 3 judged items" in lines[-1]
