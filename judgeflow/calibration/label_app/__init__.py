"""`judgeflow review`: a local browser app to label items and inspect the judge's verdicts.

    judgeflow run items.jsonl -o results.jsonl
    judgeflow review results.jsonl --items items.jsonl     # prints http://127.0.0.1:PORT/?token=...

`session.ReviewSession` holds the data (no web framework); `server.create_app` wraps it in a
Starlette app (the optional extra `judgeflow[review]`); the page in `static/` is plain
HTML/JS/CSS served from the package. The labels file is the one `judgeflow label` reads and
writes, so the two tools resume each other's work.
"""
