"""A spend cap counts a request that was sent as spent until the provider says otherwise: one that
timed out is charged at its reservation (issue 46, F18)."""

from __future__ import annotations

import json
import time

from fakes.hostile import HostileServer

from judgeflow.cli import main


def _late(seconds: float):
    def respond(conn, headers, raw):
        time.sleep(seconds)
        body = b'{"error": {"message": "too late"}}'
        conn.sendall(f"HTTP/1.1 500 X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode() + body)

    return respond


def test_budget_5_with_timeout_1_sends_at_most_5_to_a_server_answering_after_3_s(tmp_path, capsys, monkeypatch):
    items = tmp_path / "i.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "source": "Paris is in France.",
                                         "answer": f"Paris is in France {n}."}) + "\n" for n in range(12)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-budget-timeouts")
    with HostileServer(_late(3.0)) as server:
        main(["run", str(items), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/gpt-4o-mini", "--no-progress",
              "--base-url", server.url + "/v1", "--store", str(tmp_path / "s.sqlite"), "--no-cache",
              "--budget", "5", "--timeout", "1", "--concurrency", "4"])
        sent = len(server.requests)
    err = capsys.readouterr().err
    assert 1 <= sent <= 5, (sent, err)
    assert "spent 0 of 5" not in err
