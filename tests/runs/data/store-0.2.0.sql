BEGIN TRANSACTION;
CREATE TABLE cache (key TEXT PRIMARY KEY, judgment TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema','1');
CREATE TABLE results (
    run_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    judgment TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id)
);
INSERT INTO "results" VALUES('20261202-124620-2d2ccf','q1',0,'judged','{"id":"q1","label":1,"status":"judged","criterion":"source_faithfulness","routed_by":"source present","reason":"claim c1 fails (verdict not_found): Paris is the capital of France, founded 1 BC.","claims":[{"id":"c1","text":"Paris is the capital of France, founded 1 BC.","kind":"number","verdict":"not_found","error":true,"basis":"source","evidence":"","evidence_found":null,"reason":"concrete details [''1'', ''bc''] are not in the evidence","span":[0,45],"placed":true}],"error":null,"usage":{"calls":0,"input_tokens":0,"output_tokens":0,"cached_tokens":0,"cache_write_tokens":0,"repairs":0,"reasks":0,"over_bound":0},"model":"baseline/lexical","structured":null,"strategy":"graph","language":"en","human_label":null,"cached":false,"requirements":null,"judges":null,"agreement":null,"confidence":null,"cascade":null,"repeats":null,"spans":[{"start":0,"end":45,"claim":"c1","text":"Paris is the capital of France, founded 1 BC."}],"dropped":null,"extra":{},"trace":[]}');
INSERT INTO "results" VALUES('20261202-124620-2d2ccf','q2',1,'judged','{"id":"q2","label":1,"status":"judged","criterion":"source_faithfulness","routed_by":"source present","reason":"claim c1 fails (verdict not_found): Paris is the capital of France, founded 2 BC.","claims":[{"id":"c1","text":"Paris is the capital of France, founded 2 BC.","kind":"number","verdict":"not_found","error":true,"basis":"source","evidence":"","evidence_found":null,"reason":"concrete details [''2'', ''bc''] are not in the evidence","span":[0,45],"placed":true}],"error":null,"usage":{"calls":0,"input_tokens":0,"output_tokens":0,"cached_tokens":0,"cache_write_tokens":0,"repairs":0,"reasks":0,"over_bound":0},"model":"baseline/lexical","structured":null,"strategy":"graph","language":"en","human_label":null,"cached":false,"requirements":null,"judges":null,"agreement":null,"confidence":null,"cascade":null,"repeats":null,"spans":[{"start":0,"end":45,"claim":"c1","text":"Paris is the capital of France, founded 2 BC."}],"dropped":null,"extra":{},"trace":[]}');
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    status TEXT NOT NULL,
    input_path TEXT,
    input_sha TEXT,
    output_path TEXT,
    total INTEGER,
    settings TEXT NOT NULL,
    command TEXT
);
INSERT INTO "runs" VALUES('20261202-124620-2d2ccf',1.79621558029954767228e+09,'interrupted','{DIR}/in.jsonl','008b378097a64da047fed76ae731ec9cc9b0aa587b31b669ef820602bd78ad38','{DIR}/out.jsonl',4,'{"base_url": null, "batch": false, "check_dropped": true, "column_map": null, "coverage": false, "criterion": null, "criterion_arg": null, "ensemble": null, "format": null, "judging": {"check_dropped": true, "client": {"api_version": null, "base_url": null, "http_transport": "auto", "max_claims_per_check": 40, "max_retries": 2, "max_source_chars": null, "max_tokens": null, "max_tokens_cap": 4096, "max_wait": 600.0, "provider_retries": 4, "rpm": null, "structured": "auto", "temperature": 0.0, "threshold": null, "timeout": null, "tpm": null}, "concurrency": 16, "coverage": false, "criterion": null, "keep_trace": true, "kind": "judge", "mode": null, "model": "baseline/lexical", "strategy": "graph"}, "limit": null, "max_input_chars": 200000, "max_source_chars": null, "max_tokens": null, "mode": "auto", "model": "baseline/lexical", "no_cache": false, "repeats": 1, "strategy": "graph", "structured": "auto", "system_prompt": false, "temperature": 0.0, "threshold": null, "trace": false, "turns": "last", "with_inputs": false}','judgeflow run in.jsonl -o out.jsonl --model baseline/lexical --store s.sqlite --resume');
CREATE INDEX results_seq ON results (run_id, seq);
COMMIT;
