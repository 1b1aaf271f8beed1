"""`judgeflow watch SOURCE`: judge new production traces as they come, sampled, under a cap per period.

SOURCE is a Phoenix server's URL (with --project), otlp://127.0.0.1:PORT (judgeflow listens for
OTLP/HTTP there) or an OTLP JSON file that grows. Verdicts go to the run store (a restart goes on
where it stopped: each trace is judged once), to `-o FILE` if given, and with --otel-endpoint /
--otel as OpenTelemetry spans on the judged traces. SIGTERM or Ctrl-C stops it cleanly: the
results in flight are committed, the summary printed, exit 0. See `runs/watch.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import signal
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ProviderUnavailable
from ..items import DEFAULT_MAX_INPUT_CHARS
from ..judging import DEFAULT_CONCURRENCY
from ..redact import mask_url
from ..runs.store import DEFAULT_STORE, RunStore
from . import SUMMARIES, otel_args
from .argtypes import Subparsers, positive_int, positive_seconds, share
from .render import console

EXIT_CODES = """exit codes: 0 stopped (SIGTERM, Ctrl-C, or --once with nothing new); 2 bad input or configuration;
3 stopped on a systemic provider error (fix it and start the same command again: judged traces are skipped)"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("watch", help=SUMMARIES["watch"], epilog=EXIT_CODES)
    p.add_argument("input", metavar="SOURCE",
                   help="a Phoenix server (http://127.0.0.1:6006, with --project), otlp://127.0.0.1:PORT (judgeflow "
                        "receives OTLP/HTTP traces there) or an OTLP JSON file that grows (one request a line)")
    p.add_argument("--project", help="the Phoenix project to watch (default: default); verdict spans are filed there too")
    p.add_argument("--sample-rate", type=share, default=1.0,
                   help="the share of new traces to judge, chosen by trace id (the same traces at every restart; default 1)")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE",
                   help="judge only traces with a span matching: name=SPAN_NAME, kind=RETRIEVER, or ATTRIBUTE=VALUE "
                        "(repeatable: all must match)")
    p.add_argument("--period", type=positive_seconds, default=3600.0, metavar="SECONDS",
                   help="--budget is a cap per period of this many seconds (default 3600: --budget an hour); rows "
                        "over it end unscored 'budget' and are not judged again")
    p.add_argument("--once", action="store_true", help="judge what the source has now, then stop (no waiting)")
    p.add_argument("--poll", type=positive_seconds, default=1.0, metavar="SECONDS",
                   help="seconds between looks at a source that had nothing new (default 1)")
    p.add_argument("-o", "--output", type=Path,
                   help="also write every verdict of this watch to this results file (JSONL), each row as it is "
                        "judged, with the trace's question and answer")
    p.add_argument("--no-annotations", dest="annotations", action="store_false",
                   help="with a Phoenix source, do not write the verdicts back as span annotations on the judged spans "
                        "(the default writes them: Phoenix's annotations column, filters and charts show them)")
    p.add_argument("--model", help="provider/model (default $JUDGEFLOW_MODEL, else the offline baseline)")
    p.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible endpoint")
    p.add_argument("--mode", default="auto", choices=["auto", "factual", "faithfulness", "spec"])
    p.add_argument("--criterion", help="a criterion name or .toml path for every trace")
    p.add_argument("--strategy", default="graph", choices=["graph", "single"])
    p.add_argument("--system-prompt", action="store_true", help="count a conversation's system prompt as evidence")
    p.add_argument("--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--store", type=Path, default=DEFAULT_STORE, help=f"the run store (default {DEFAULT_STORE})")
    p.add_argument("--no-cache", action="store_true", help="do not serve results from the response cache")
    p.add_argument("--max-input-chars", type=positive_int, default=DEFAULT_MAX_INPUT_CHARS,
                   help=f"a trace whose texts together are longer is an invalid row (default {DEFAULT_MAX_INPUT_CHARS:,})")
    from .flags import provider_flags

    provider_flags(p)  # --budget among them: run's cap, here per --period
    otel_args.add_arguments(p)
    p.set_defaults(func=cmd_watch, threshold=None, coverage=None, map=None)


def cmd_watch(args: argparse.Namespace) -> int:
    from ..io.sources import open_source
    from ..runs.run import Run
    from ..runs.watch import Watch, parse_filters
    from ..runs.watch_output import WatchOutput, streams

    con = console(stderr=True)
    filters = parse_filters(args.filter)
    shown = mask_url(args.input) if "://" in args.input else args.input  # the run store never keeps a URL's key
    key = f"watch:{shown}" + (f"#{args.project}" if args.project else "")
    from ..build import build
    from ..runs.budget import spend_cap
    from .flags import to_spec

    settings = to_spec(args).model_copy(update={"input": shown})  # the record never keeps a URL's key
    # run's --budget (runs.budget.Budget): reserved before each call, per period here
    budget = spend_cap(settings)
    judge = build(settings.judging, **({"budget": budget} if budget is not None else {}))
    spool = None
    if args.input.startswith("otlp://"):  # the receiver's bodies, fsync'd before each 200 (read again on a restart)
        spool = Path(settings.store).with_name(Path(settings.store).name + "." + re.sub(r"\W+", "-", args.input)
                                                 + ".spool.jsonl")
    source = open_source(args.input, project=args.project, spool=spool)
    loop_back = otel_args.loops_back(args, source.name)
    if loop_back is not None:
        source.close()
        raise ConfigError(loop_back)
    spans = otel_args.exporter_of(args, project=source.project)
    exporter = otel_args.exporters(spans, _annotator(source) if args.annotations else None)
    with RunStore(settings.store) as store, contextlib.closing(source):
        run = Run.online(store, settings, judging=judge, key=key)
        output = WatchOutput.open(args.output, run) if streams(args.output) else None
        watch = Watch(source, run, judge, rate=args.sample_rate, filters=filters, budget=budget,
                      period=args.period, exporter=exporter, concurrency=args.concurrency, once=args.once,
                      poll=args.poll, settings=settings)
        watch.output = output
        if hasattr(source, "keep"):
            source.keep = watch.keep  # a Phoenix source reads only the sampled traces' spans
        con.print(f"watching {source.name}: sample rate {args.sample_rate:g}"
                  + (f", at most {args.budget} calls per {args.period:g} s" if budget else "")
                  + f"; run {run.run_id} (judged before: {len(watch.done)})"
                  + (f"; verdict spans to {otel_args.target(spans.endpoint)}" if spans is not None else ""),
                  markup=False, soft_wrap=True)
        code = 0
        try:
            asyncio.run(_watch(watch, judge))
        except ProviderUnavailable as e:
            con.print(f"[red]error:[/red] {e}", soft_wrap=True, markup=False)
            code = 3
        finally:
            run.stop("stopped" if code else "interrupted", None if output is not None else args.output)
            if output is not None:
                output.close()
            if exporter is not None:
                exporter.close()
        for line in watch.summary.lines() + _extra_lines(budget, exporter):
            con.print("  " + line, markup=False, soft_wrap=True)
    return code


def _annotator(source: Any) -> Any:
    """Span annotations back into the Phoenix server the traces came from (None for other sources)."""
    from ..io.sources import PhoenixSource

    if not isinstance(source, PhoenixSource):
        return None
    from ..integrations.phoenix import PhoenixAnnotator

    return PhoenixAnnotator(source.url)


def _extra_lines(budget: Any, exporter: Any) -> list[str]:
    out = []
    if budget is not None:
        out.append(f"budget: {budget.describe()} in the last period; {budget.denied} call(s) did not fit in it")
    if exporter is not None:
        out.extend(otel_args.describe_all(exporter))
    return out


async def _watch(watch: Any, judge: Any) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await watch.loop(stop)
    finally:
        await judge.aclose()
