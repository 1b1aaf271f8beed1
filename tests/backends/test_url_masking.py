"""Every URL printed masks its credentials: user info, key-like path segments and query values (issue 46, F24)."""

from __future__ import annotations

import json
import socket

import pytest

from judgeflow.cli import main
from judgeflow.redact import mask_url, mask_urls

KEY = "k7Hq2x9Lm4Tz8Wc1Vb6Nd3Rf"  # a key in the path, of no provider's shape


@pytest.mark.parametrize("url, secret", [
    ("http://user:pw-secret-1@proxy:8080/v1", "pw-secret-1"),
    (f"http://127.0.0.1:9/{KEY}/v1", KEY),
    ("https://gw.example/v1?api-key=abcd1234efgh&model=x", "abcd1234efgh"),
    ("https://gw.example/v1?token=tok123456&x=1", "tok123456"),
    ("https://gw.example/openai/sk-proj-abcdefgh12345/v1", "sk-proj-abcdefgh12345"),
])
def test_mask_url_masks_every_credential_shape(url, secret):
    assert secret not in mask_url(url) and "***" in mask_url(url)
    assert secret not in mask_urls(f"error talking to {url}: refused")


def test_plain_urls_are_left_as_they_are():
    for url in ("http://127.0.0.1:6006", "https://api.openai.com/v1/chat/completions", "http://h/v1.2/models?limit=10"):
        assert mask_url(url) == url


def test_a_key_in_the_base_url_path_never_reaches_stderr(tmp_path, capsys, monkeypatch):
    """The 'cannot connect' line and the resume command beside it both mask the key in the path."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    items = tmp_path / "i.jsonl"
    rows = [{"id": f"i{n}", "source": "Paris is in France.", "answer": f"Paris is in France {n}."} for n in range(4)]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-url-masking")
    code = main(["run", str(items), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/gpt-4o-mini", "--no-progress",
                 "--base-url", f"http://127.0.0.1:{port}/{KEY}/v1", "--store", str(tmp_path / "s.sqlite"),
                 "--retries", "0", "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 3 and "cannot connect" in err
    assert KEY not in err
    assert KEY not in (tmp_path / "o.jsonl").read_text() if (tmp_path / "o.jsonl").exists() else True


def test_a_watched_phoenix_url_with_a_key_is_kept_masked_in_the_run_store(tmp_path, capsys):
    import sqlite3

    secret_url = f"http://127.0.0.1:9/{KEY}"
    main(["watch", secret_url, "--once", "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert KEY not in err
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert KEY not in " ".join(str(v) for row in db.execute("SELECT * FROM runs") for v in row)
