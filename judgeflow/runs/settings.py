"""A run's settings as one typed object: what its results depend on, and how to rebuild its Judge.

    s = RunSettings.from_args(args)            # the CLI; or RunSettings.from_record(run.settings)
    judge = s.judge()                          # run, resume, batch replay, online re-judging
    s.diff(RunSettings.from_record(old))       # ["strategy: 'graph' then, 'single' now", ...]
    s.resume_command()                         # the command line that resumes it (no credentials)
"""

from __future__ import annotations

import shlex
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..backends import default_model
from ..backends.limits import DEFAULT_MAX_WAIT
from ..criteria import load_criterion
from ..errors import ConfigError
from ..items import parse_column_map
from ..judge import Judge
from ..judging import DEFAULT_CONCURRENCY
from ..redact import redact
from .store import DEFAULT_STORE
from .summary import DEFAULT_MAX_UNSCORED

#: an item whose texts together are longer than this is an invalid row, not a huge request
DEFAULT_MAX_INPUT_CHARS = 200_000

#: settings that change the results of a run; a resume must match them (the stored record's keys).
#: The endpoint (`base_url`) is not one: it says where requests go, not how items are judged, so a
#: run stopped on a bad endpoint resumes with the corrected one (recorded, see `ENDPOINT`).
RESULT_SETTINGS = ("model", "mode", "column_map", "criterion", "strategy", "temperature", "limit", "trace",
                   "coverage", "max_source_chars", "ensemble", "structured", "max_tokens", "max_input_chars",
                   "threshold", "repeats", "turns", "system_prompt")
#: also recorded with the run (not compared on resume)
RECORDED = (*RESULT_SETTINGS, "base_url", "criterion_arg", "batch", "no_cache", "format")
#: the recorded setting a resume may change (the run's record is updated to the new value)
ENDPOINT = "base_url"


class RunSettings(BaseModel):
    """Everything a `judgeflow run` was asked to do. Never holds an API key."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    model: str
    base_url: str | None = None
    mode: str | None = None
    criterion: str | None = None
    """The fixed criterion as "name@fingerprint" (for the record; an edited file is another criterion)."""
    criterion_arg: str | None = None
    """The fixed criterion as given: a shipped name or a path."""
    strategy: str = "graph"
    temperature: float | None = None
    limit: int | None = None
    trace: bool = False
    coverage: bool = False
    """Requirement coverage (spec criteria): on with --mode spec unless --no-coverage."""
    max_source_chars: int | None = None
    structured: str = "auto"
    max_tokens: int | None = None
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS
    batch: bool = False
    ensemble: dict[str, Any] | None = None
    threshold: float | None = None
    format: str | None = None
    """The results file's format as given (`--format`; None: from the -o suffix)."""
    column_map: dict[str, str] | None = None
    """Item field -> the input column holding it (`--map FIELD=COLUMN`)."""
    repeats: int = 1
    """Verdicts per item from the same judge (test-retest, `--repeats K`); 1: none."""
    turns: str = "last"
    """Conversations: judge the last assistant turn ("last") or every one ("all")."""
    system_prompt: bool = False
    """Conversations: the system prompt counts as evidence."""
    # how the run calls the provider and where it writes; not what its results are
    retries: int = 4
    reasks: int = 2
    timeout: float | None = None
    """None: the endpoint's default (`providers.DEFAULT_TIMEOUT`, or `LOCAL_TIMEOUT` for a local one)."""
    http_transport: str = "auto"
    rpm: float | None = None
    tpm: float | None = None
    max_wait: float = DEFAULT_MAX_WAIT
    concurrency: int = DEFAULT_CONCURRENCY
    input: str | None = None
    output: str | None = None
    store: str = str(DEFAULT_STORE)
    prices: str | None = None
    max_unscored: float = DEFAULT_MAX_UNSCORED
    no_cache: bool = False
    ensemble_flags: list[str] = []
    """The panel/cascade flags that rebuild the ensemble (the CLI's)."""

    @classmethod
    def from_args(cls, args: Any, *, ensemble: dict[str, Any] | None = None, ensemble_flags: list[str] | None = None,
                  model: str | None = None) -> RunSettings:
        """The settings of a `judgeflow run` command line (argparse namespace)."""
        flag = getattr(args, "coverage", None)
        crit = load_criterion(args.criterion) if args.criterion else None
        return cls(
            model=model or args.model or default_model(), base_url=args.base_url, mode=args.mode,
            criterion=f"{crit.name}@{crit.fingerprint}" if crit else None, criterion_arg=args.criterion,
            strategy=args.strategy, temperature=args.temperature, limit=args.limit, trace=args.trace,
            coverage=bool(flag) if flag is not None else args.mode == "spec",
            max_source_chars=getattr(args, "max_source_chars", None), structured=getattr(args, "structured", "auto"),
            max_tokens=getattr(args, "max_tokens", None),
            max_input_chars=getattr(args, "max_input_chars", DEFAULT_MAX_INPUT_CHARS), batch=args.batch,
            ensemble=ensemble, threshold=getattr(args, "threshold", None), repeats=getattr(args, "repeats", 1),
            retries=args.retries, reasks=args.reasks,
            timeout=args.timeout, http_transport=getattr(args, "http_transport", "auto"),
            rpm=getattr(args, "rpm", None), tpm=getattr(args, "tpm", None),
            max_wait=getattr(args, "max_wait", DEFAULT_MAX_WAIT),
            concurrency=args.concurrency, input=str(args.input), output=str(args.output),
            store=str(args.store), prices=str(args.prices) if args.prices else None,
            max_unscored=getattr(args, "max_unscored", DEFAULT_MAX_UNSCORED), no_cache=args.no_cache,
            ensemble_flags=ensemble_flags or [], column_map=parse_column_map(getattr(args, "map", None)) or None,
            format=getattr(args, "format", None), turns=getattr(args, "turns", "last"),
            system_prompt=bool(getattr(args, "system_prompt", False)),
        )

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> RunSettings:
        """The settings a run store recorded (older records lack some keys: their defaults apply)."""
        return cls(**{k: v for k, v in record.items() if v is not None})

    def record(self) -> dict[str, Any]:
        """What the run store keeps: the result settings, the base URL without credentials."""
        data = self.model_dump(include=set(RECORDED))
        data["base_url"] = redact(self.base_url) if self.base_url else None
        return data

    def judge_kwargs(self, model: str | None = None) -> dict[str, Any]:
        """The Judge keyword arguments for `model` (a member of a panel, or this run's model)."""
        model = model or self.model
        kwargs: dict[str, Any] = {}
        if not model.startswith("baseline/"):
            kwargs.update(provider_retries=self.retries, max_retries=self.reasks, timeout=self.timeout,
                          structured=self.structured, http_transport=self.http_transport, max_wait=self.max_wait)
            if self.rpm or self.tpm:
                kwargs.update(rpm=self.rpm, tpm=self.tpm)
            if self.max_tokens:
                kwargs["max_tokens"] = self.max_tokens
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if self.temperature:
            kwargs["temperature"] = self.temperature
        if self.threshold is not None:
            if not model.startswith("baseline/"):
                raise ConfigError("--threshold applies to the offline judges (baseline/lexical, baseline/rouge-l) only")
            kwargs["threshold"] = self.threshold
        if self.max_source_chars is not None:  # 0: sources sent whole
            kwargs["max_source_chars"] = self.max_source_chars
        return kwargs

    def judge(self, *, keep_trace: bool = True, **overrides: Any) -> Judge:
        """The run's Judge (one model; panels and cascades are built by the CLI from their flags).

        `overrides` replace Judge/client keyword arguments (batch replay: `http_client`, no retries).
        """
        if self.ensemble:
            raise ConfigError("this run judged with a panel or cascade: rebuild it from its flags "
                              f"({shlex.join(self.ensemble_flags) or 'see the run command'})")
        kwargs = self.judge_kwargs() | overrides
        return Judge(self.model, mode=self.mode, criterion=self.criterion_arg, strategy=self.strategy,  # type: ignore[arg-type]
                     concurrency=self.concurrency, keep_trace=keep_trace, coverage=self.coverage, **kwargs)

    def diff(self, other: RunSettings) -> list[str]:
        """The result settings that differ, as "name: then-value then, now-value now" (self is now)."""
        now, then = self.record(), other.record()
        return [f"{k}: {then.get(k)!r} then, {now.get(k)!r} now" for k in RESULT_SETTINGS if then.get(k) != now.get(k)]

    def resume_command(self) -> str:
        """The command line that resumes this run; credentials in --base-url are removed."""
        parts = ["judgeflow", "run", str(self.input), "-o", str(self.output)]
        if self.ensemble:  # a panel or cascade is named by its own flags; with --samples alone, --model is the sampled judge
            parts += ([] if ("--panel" in self.ensemble_flags or "--cascade" in self.ensemble_flags)
                      else ["--model", self.model])
            parts += self.ensemble_flags
        else:
            parts += ["--model", self.model]
        opts: list[tuple[str, Any, Any]] = [
            ("--base-url", self.base_url, None), ("--mode", self.mode, "auto"), ("--criterion", self.criterion_arg, None),
            ("--strategy", self.strategy, "graph"), ("--limit", self.limit, None),
            ("--concurrency", self.concurrency, DEFAULT_CONCURRENCY), ("--temperature", self.temperature, 0.0),
            ("--store", self.store, str(DEFAULT_STORE)), ("--retries", self.retries, 4),
            ("--reasks", self.reasks, 2), ("--timeout", self.timeout, None), ("--prices", self.prices, None),
            ("--http-transport", self.http_transport, "auto"), ("--rpm", self.rpm, None), ("--tpm", self.tpm, None),
            ("--max-wait", self.max_wait, DEFAULT_MAX_WAIT),
            ("--structured", self.structured, "auto"), ("--max-tokens", self.max_tokens, None),
            ("--max-input-chars", self.max_input_chars, DEFAULT_MAX_INPUT_CHARS),
            ("--max-unscored", self.max_unscored, DEFAULT_MAX_UNSCORED),
            ("--max-source-chars", self.max_source_chars, None), ("--threshold", self.threshold, None),
            ("--format", self.format, None),
            ("--repeats", self.repeats, 1),
            ("--turns", self.turns, "last"),
        ]
        for flag, value, default in opts:
            if value is not None and value != default:
                parts += [flag, str(value)]
        for field, column in (self.column_map or {}).items():
            parts += ["--map", f"{field}={column}"]
        for flag, on in (("--trace", self.trace), ("--no-cache", self.no_cache), ("--system-prompt", self.system_prompt)):
            if on:
                parts.append(flag)
        if self.coverage != (self.mode == "spec"):  # not the default for the mode: say it
            parts.append("--coverage" if self.coverage else "--no-coverage")
        command = shlex.join([*parts, "--resume"])
        clean = redact(command)
        if clean != command:  # never print or store a credential; say how to put it back
            clean += "   # credentials removed from --base-url: put them back, or set JUDGEFLOW_BASE_URL"
        return clean
