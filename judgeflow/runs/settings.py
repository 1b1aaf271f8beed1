"""A run's settings as the command line gives them (flat), and the typed spec they stand for.

    s = RunSettings.from_args(args)            # the CLI; or RunSettings.from_record(run.settings)
    s.spec()                                   # the RunSpec (judgeflow.config): judging + run fields
    judging = build(s.judging_spec())          # run, resume, batch replay: a Judge, Panel, Cascade, Repeats
    s.with_judging(spec_of(judge))             # the settings of what really judges (Run.open(judging=))
    s.diff(RunSettings.from_record(old))       # ["strategy: 'graph' then, 'single' now", ...]
    s.resume_command()                         # the command line that resumes it (no credentials)
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..backends import default_model, member_reasoning
from ..build import build
from ..config.client import DEFAULT_MAX_WAIT, ClientConfig, affects_results
from ..config.judging import JUDGING, JudgeSpec, JudgingSpec, RepeatsSpec
from ..config.run import DEFAULT_MAX_INPUT_CHARS, RunSpec, results_view
from ..criteria import load_criterion
from ..errors import ConfigError
from ..items import parse_column_map
from .._judge import Judge
from ..judging import DEFAULT_CONCURRENCY
from ..redact import mask_urls, redact
from .ensemble_spec import ensemble_spec
from .store import DEFAULT_STORE
from .summary import DEFAULT_MAX_UNSCORED

#: settings that change the results of a run; a resume must match them (the stored record's keys).
#: The endpoint (`base_url`) is not one: it says where requests go, not how items are judged, so a
#: run stopped on a bad endpoint resumes with the corrected one (recorded, see `ENDPOINT`).
RESULT_SETTINGS: tuple[str, ...] = ()  # filled below, from the fields' `affects_results` (config/)
#: also recorded with the run (not compared on resume): RECORDED, below
#: the recorded setting a resume may change (the run's record is updated to the new value)
ENDPOINT = "base_url"


def setting(default: Any, flag: str, *, client: str | None = None, dest: str | None = None,
            cli_default: Any = None, resume: bool = True) -> Any:
    """A setting with its `judgeflow run` flag (and argparse dest), the ClientConfig field it fills, the
    CLI's default where it differs from the field's, and whether the resume command repeats it. from_args,
    client_config, with_judging and resume_command all read these: a new flag is declared once here."""
    return Field(default, json_schema_extra={"flag": flag, "dest": dest or flag.lstrip("-").replace("-", "_"),
                                             "client": client, "cli_default": cli_default, "resume": resume})


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


class RunSettings(BaseModel):
    """Everything a `judgeflow run` was asked to do. Never holds an API key."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    model: str
    base_url: str | None = setting(None, "--base-url", client="base_url")
    mode: str | None = setting(None, "--mode", cli_default="auto")
    criterion: str | None = None
    """The fixed criterion as "name@fingerprint" (for the record; an edited file is another criterion)."""
    criterion_arg: str | None = setting(None, "--criterion", dest="criterion")
    """The fixed criterion as given: a shipped name or a path."""
    strategy: Literal["graph", "single"] = setting("graph", "--strategy")
    limit: int | None = setting(None, "--limit")
    concurrency: int = setting(DEFAULT_CONCURRENCY, "--concurrency")
    temperature: float | None = setting(None, "--temperature", client="temperature", cli_default=0.0)
    store: str = setting(str(DEFAULT_STORE), "--store")
    # how the run calls the provider and where it writes; not what its results are
    retries: int = setting(4, "--retries", client="provider_retries")
    reasks: int = setting(2, "--reasks", client="max_retries")
    timeout: float | None = setting(None, "--timeout", client="timeout")
    """None: the endpoint's default (`providers.DEFAULT_TIMEOUT`, or `LOCAL_TIMEOUT` for a local one)."""
    prices: str | None = setting(None, "--prices")
    http_transport: str = setting("auto", "--http-transport", client="http_transport")
    rpm: float | None = setting(None, "--rpm", client="rpm")
    tpm: float | None = setting(None, "--tpm", client="tpm")
    max_wait: float = setting(DEFAULT_MAX_WAIT, "--max-wait", client="max_wait")
    structured: str = setting("auto", "--structured", client="structured")
    max_tokens: int | None = setting(None, "--max-tokens", client="max_tokens")
    reasoning_effort: str | None = setting(None, "--reasoning-effort", client="reasoning_effort")
    profile: str | None = setting(None, "--profile", client="profile")
    max_input_chars: int = setting(DEFAULT_MAX_INPUT_CHARS, "--max-input-chars")
    max_unscored: float = setting(DEFAULT_MAX_UNSCORED, "--max-unscored")
    max_source_chars: int | None = setting(None, "--max-source-chars", client="max_source_chars")
    threshold: float | None = setting(None, "--threshold", client="threshold")
    format: str | None = setting(None, "--format")
    """The results file's format as given (`--format`; None: from the -o suffix)."""
    repeats: int = setting(1, "--repeats")
    """Verdicts per item from the same judge (test-retest, `--repeats K`); 1: none."""
    delimiter: str | None = setting(None, "--delimiter")
    """A CSV input's delimiter (`--delimiter`); None: `,`, or `;`, a tab or `|` sniffed from the header."""
    turns: Literal["last", "all"] = setting("last", "--turns")
    """Conversations: judge the last assistant turn ("last") or every one ("all")."""
    trace: bool = setting(False, "--trace")
    no_cache: bool = setting(False, "--no-cache")
    system_prompt: bool = setting(False, "--system-prompt")
    """Conversations: the system prompt counts as evidence."""
    batch: bool = setting(False, "--batch", resume=False)
    with_inputs: bool = setting(True, "--with-inputs", resume=False)
    """Result rows carry the item's question, answer, reference, source and spec (`--with-inputs`)."""
    budget: str | None = setting(None, "--budget")
    """The spend cap as given (`--budget 200` calls, `--budget '$1.50'`): `spend_cap()` builds it."""
    coverage: bool = False
    """Requirement coverage (spec criteria): on with --mode spec unless --no-coverage."""
    check_dropped: bool = True
    """Numbers, dates and names no claim carries are checked as added claims (off: --no-check-dropped)."""
    knowledge: str | None = setting(None, "--knowledge")
    """Claims the reference does not settle: default or commit-first (None: the criterion's setting)."""
    evidence: str | None = setting(None, "--evidence")
    """Documents for claims the reference does not settle: a JSONL file or a folder (`--evidence`)."""
    ensemble: dict[str, Any] | None = None
    column_map: dict[str, str] | None = None
    """Item field -> the input column holding it (`--map FIELD=COLUMN`)."""
    input: str | None = None
    output: str | None = None
    ensemble_flags: list[str] = []
    """The panel/cascade flags that rebuild the ensemble (the CLI's)."""
    judging: dict[str, Any] | None = None
    """What judges, as a `JudgingSpec` (JSON): recorded, and what a resume or batch replay rebuilds."""

    @classmethod
    def from_args(cls, args: Any, *, ensemble: dict[str, Any] | None = None, ensemble_flags: list[str] | None = None,
                  model: str | None = None) -> RunSettings:
        """The settings of a `judgeflow run` command line (argparse namespace)."""
        flag = getattr(args, "coverage", None)
        crit = load_criterion(args.criterion) if args.criterion else None
        given = {name: _plain(getattr(args, dest)) for name, (_, dest, _, _) in FLAGS.items() if hasattr(args, dest)}
        return cls(
            **given, model=model or args.model or default_model(),
            criterion=f"{crit.name}@{crit.fingerprint}" if crit else None,
            coverage=bool(flag) if flag is not None else args.mode == "spec", ensemble=ensemble,
            check_dropped=getattr(args, "check_dropped", True) is not False,
            input=_plain(args.input), output=_plain(args.output), ensemble_flags=ensemble_flags or [],
            column_map=parse_column_map(getattr(args, "map", None)) or None,
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

    def client_config(self, model: str | None = None, base_url: str | None = None) -> ClientConfig:
        """The client options of `model` (a member of a panel, or this run's model)."""
        model = model or self.model
        if self.threshold is not None and not model.startswith("baseline/"):
            raise ConfigError("--threshold applies to the offline judges (baseline/lexical, baseline/rouge-l) only")
        options = {client: getattr(self, name) for name, (_, _, client, _) in FLAGS.items() if client}
        options.update(base_url=base_url or self.base_url, temperature=self.temperature or 0.0,
                       max_tokens=self.max_tokens or None)
        if self.ensemble:  # each member takes the effort and the profile that apply to it
            options["reasoning_effort"], options["profile"] = member_reasoning(model, self.reasoning_effort, self.profile)
        return ClientConfig(**options)

    def member(self, ref: str, *, keep_trace: bool = True) -> JudgeSpec:
        """The spec of one judge, "provider/model" or "provider/model@BASE_URL", with this run's routing."""
        model, _, url = ref.partition("@")
        return JudgeSpec(model=model, mode=self.mode, criterion=self.criterion_arg, strategy=self.strategy,
                         coverage=self.coverage, keep_trace=keep_trace, concurrency=self.concurrency,
                         check_dropped=self.check_dropped, knowledge=self.knowledge, evidence=self.evidence,
                         client=self.client_config(model, url or None))

    def judging_spec(self) -> JudgingSpec:
        """What judges this run: the recorded spec, else the one the flat settings describe."""
        if self.judging is not None:
            return JUDGING.validate_python(self.judging)
        judging: JudgingSpec = (ensemble_spec(self.ensemble, self.member, model=self.model, trace=self.trace,
                                              concurrency=self.concurrency)
                                if self.ensemble else self.member(self.model))
        if self.repeats > 1:
            if not isinstance(judging, JudgeSpec):
                raise ConfigError("--repeats does not combine with --panel, --samples or --cascade yet: repeat one "
                                  "judge (drop --panel, --samples or --cascade)")
            return RepeatsSpec(judging=judging, k=self.repeats, concurrency=self.concurrency)
        return judging

    def with_judging(self, spec: JudgingSpec, model: str | None = None) -> RunSettings:
        """These settings for what really judges (`spec`): the flat fields it determines follow it, so
        the record, the diff and the resume command say what judged (not what the settings assumed)."""
        update: dict[str, Any] = {"judging": spec.model_dump(mode="json")}
        one = spec.judging if isinstance(spec, RepeatsSpec) else spec
        if isinstance(one, JudgeSpec):
            crit = load_criterion(one.criterion) if one.criterion else None
            mode = one.mode or (self.mode if self.mode in (None, "auto") else None)  # "auto" as the CLI says it
            update.update({name: getattr(one.client, client) for name, (_, _, client, _) in FLAGS.items() if client})
            update.update(model=one.model, mode=mode, strategy=one.strategy, coverage=one.coverage,
                          check_dropped=one.check_dropped, knowledge=one.knowledge, evidence=one.evidence,
                          criterion_arg=one.criterion, criterion=f"{crit.name}@{crit.fingerprint}" if crit else None,
                          repeats=spec.k if isinstance(spec, RepeatsSpec) else 1)
        elif not self.ensemble:  # a panel or cascade built in Python: the spec names it
            update.update(ensemble={"judging": update["judging"]}, model=model or self.model)
        return self.model_copy(update=update)

    def spend_cap(self) -> Any:
        """A new `runs.budget.Budget` for `--budget` (one per invocation, shared by every member), or None."""
        from .budget import Budget
        from .pricing import load_prices

        return Budget.parse(self.budget, prices=load_prices(self.prices) if self.budget else None)

    def spec(self) -> RunSpec:
        """The typed spec of this run (`judgeflow.config.RunSpec`)."""
        return RunSpec(judging=self.judging_spec(), **{k: getattr(self, k) for k in RunSpec.model_fields if k != "judging"})

    @classmethod
    def from_spec(cls, spec: RunSpec) -> RunSettings:
        """The flat settings of a RunSpec (what the store records and the resume command says)."""
        one = spec.judging.judging if isinstance(spec.judging, RepeatsSpec) else spec.judging
        base = cls(model=one.model if isinstance(one, JudgeSpec) else one.judges()[0].model,
                   **spec.model_dump(exclude={"judging"}))
        return base.with_judging(spec.judging, model=build(spec.judging).model if not isinstance(one, JudgeSpec)
                                 else None)

    def judge(self, *, keep_trace: bool = True, **overrides: Any) -> Judge:
        """The run's Judge (one model); `overrides` replace client options (batch replay: `http_client`,
        no retries). A panel or cascade: `build(judging_spec())`."""
        spec = self.judging_spec()
        one = spec.judging if isinstance(spec, RepeatsSpec) else spec
        if not isinstance(one, JudgeSpec):
            raise ConfigError("this run judged with a panel or cascade: rebuild it with build(settings.judging_spec())")
        judge = build(one.model_copy(update={"keep_trace": keep_trace}), **overrides)
        assert isinstance(judge, Judge)
        return judge

    def diff(self, other: RunSettings) -> list[str]:
        """The result settings that differ, as "name: then-value then, now-value now" (self is now)."""
        now, then = self.record(), other.record()
        flat = [f"{k}: {then.get(k)!r} then, {now.get(k)!r} now" for k in RESULT_SETTINGS if then.get(k) != now.get(k)]
        if flat or self.judging is None or other.judging is None:  # older records hold no spec
            return flat
        a, b = results_view(JUDGING.validate_python(other.judging)), results_view(JUDGING.validate_python(self.judging))
        return [] if a == b else [f"judging: {a!r} then, {b!r} now"]

    def resume_command(self) -> str:
        """The command line that resumes this run; credentials in --base-url are removed."""
        parts = ["judgeflow", "run", str(self.input), "-o", str(self.output)]
        if self.ensemble:  # a panel or cascade is named by its own flags; with --samples alone, --model is the sampled judge
            parts += ([] if ("--panel" in self.ensemble_flags or "--cascade" in self.ensemble_flags)
                      else ["--model", self.model])
            parts += self.ensemble_flags
        else:
            parts += ["--model", self.model]
        for name, (flag, _, _, cli_default) in FLAGS.items():
            value, default = getattr(self, name), RunSettings.model_fields[name].default
            if value is None or value == default or value == cli_default or not _resumes(name):
                continue
            parts += [flag] if value is True else [flag, str(value)]
        for field, column in (self.column_map or {}).items():
            parts += ["--map", f"{field}={column}"]
        if self.coverage != (self.mode == "spec"):  # not the default for the mode: say it
            parts.append("--coverage" if self.coverage else "--no-coverage")
        if not self.check_dropped:
            parts.append("--no-check-dropped")
        if not self.with_inputs:
            parts.append("--no-with-inputs")
        command = shlex.join([*parts, "--resume"])
        clean = mask_urls(redact(command))
        if clean != command:  # never print or store a credential; say how to put it back
            clean += "   # credentials removed from --base-url: put them back, or set JUDGEFLOW_BASE_URL"
        return clean


def _flags() -> dict[str, tuple[str, str, str | None, Any]]:
    """setting -> (flag, argparse dest, ClientConfig field, CLI default), in declaration order."""
    out = {}
    for name, field in RunSettings.model_fields.items():
        extra = field.json_schema_extra
        if isinstance(extra, dict) and extra.get("flag"):
            client = extra.get("client")
            out[name] = (str(extra["flag"]), str(extra["dest"]), client if isinstance(client, str) else None,
                         extra.get("cli_default"))
    return out


def _resumes(name: str) -> bool:
    extra = RunSettings.model_fields[name].json_schema_extra
    return bool(extra.get("resume", True)) if isinstance(extra, dict) else True


#: every flag-backed setting (see `setting`)
FLAGS = _flags()

#: what judges (the flat names of the judging spec), then the client options and the run's own fields
#: that change results (`affects_results` in config/): the settings a resume must match
RESULT_SETTINGS = ("model", "mode", "criterion", "strategy", "coverage", "check_dropped", "knowledge", "evidence",
                   "ensemble", "repeats",
                   *(name for name, (_, _, client, _) in FLAGS.items() if client and affects_results(ClientConfig, client)),
                   *(name for name in RunSpec.model_fields if name != "judging" and affects_results(RunSpec, name)))
RECORDED = (*RESULT_SETTINGS, "base_url", "criterion_arg", "batch", "no_cache", "format", "with_inputs", "judging")
