"""How often the intervals `calibrate` prints hold the value they claim to: coverage at 30/50/100 labels.

    python benchmarks/interval_coverage.py                      # simulation, 500 draws per cell
    python benchmarks/interval_coverage.py --draws 200 --labels 30 50 100 200

Simulation: answers with a known true hallucination rate (0.05, 0.2, 0.5) are judged by a judge with
known sensitivity and specificity (each 0.6 or 0.95) on N judged rows (200 and 5000); a person labels
a sample of the judged rows (a simple random sample, and a sample stratified by the judge's label with
equal shares, as `judgeflow sample --results R --equal` draws). Each draw computes, as `calibrate`
does, the corrected rate's 95% interval (`calibration/corrected.py`) and kappa's 95% interval
(`calibration/agreement.kappa_interval`, on the random sample), and counts whether they hold the
true rate and the full-data kappa (judge against the truth on all N rows). Beside them: how often
the judge's raw rate with its Wilson interval holds the true rate, and in how many draws the raw
rate lies outside the corrected interval.

Public sets: when `judgeflow bench` has cached a benchmark's files (`judgeflow bench NAME` once),
its items are judged by the offline judge (baseline/lexical) and label samples are drawn from them;
the full set's human rate and kappa are the values to hold. Without the cache it says so and skips.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judgeflow.calibration.agreement import (  # noqa: E402
    bootstrap_indices,
    kappa_interval,
    kappa_of,
    percentile_ci,
)
from judgeflow.calibration.corrected import corrected_rate  # noqa: E402
from judgeflow.calibration.rates import wilson_interval  # noqa: E402

RATES = (0.05, 0.2, 0.5)
JUDGES = ((0.6, 0.6), (0.95, 0.6), (0.6, 0.95), (0.95, 0.95))
JUDGED = (200, 5000)


def counts(h: np.ndarray, j: np.ndarray) -> tuple[int, int, int, int]:
    return (int((h & j).sum()), int((~h & j).sum()), int((h & ~j).sum()), int((~h & ~j).sum()))


def label_sample(j: np.ndarray, n: int, design: str, rng: np.random.Generator) -> np.ndarray:
    """Indices of the labelled rows: a random sample, or equal shares of the judge's 1s and 0s."""
    if design == "random":
        return rng.choice(len(j), size=min(n, len(j)), replace=False)
    ones, zeros = np.flatnonzero(j), np.flatnonzero(~j)
    k1 = min(len(ones), n // 2)
    k0 = min(len(zeros), n - k1)
    k1 = min(len(ones), n - k0)
    return np.concatenate([rng.choice(ones, k1, replace=False), rng.choice(zeros, k0, replace=False)])


def one_draw(h: np.ndarray, j: np.ndarray, truth: float, full_kappa: float, n: int, design: str,
             rng: np.random.Generator, seed: int) -> dict[str, bool | None]:
    idx = label_sample(j, n, design, rng)
    c = corrected_rate(int(j.sum()), len(j), *counts(h[idx], j[idx]), seed=seed, draws=2000)
    held = c.low is not None and c.high is not None and c.low <= truth <= c.high
    out: dict[str, bool | None] = {"corrected": held, "raw_outside": c.raw_outside}
    raw = wilson_interval(int(j.sum()), len(j))
    out["raw"] = raw is not None and raw[0] <= truth <= raw[1]
    hs, js = h[idx].astype(int), j[idx].astype(int)
    if design == "random" and not np.isnan(full_kappa) and len(set(hs.tolist())) == 2:  # else calibrate gives none
        ci, _ = kappa_interval(hs, js, seed=seed, n_boot=1000)
        out["kappa"] = None if ci is None else ci[0] <= full_kappa <= ci[1]
        if ci is not None:  # the percentile bootstrap calibrate used before (agreement.kappa_interval's old method)
            b = bootstrap_indices(len(hs), seed=seed, n_boot=1000)
            boot = percentile_ci(kappa_of(hs[b], js[b]))
            out["kappa_bootstrap"] = None if boot is None else boot[0] <= full_kappa <= boot[1]
    return out


def simulate(labels: list[int], draws: int, seed: int) -> list[tuple[str, str, int, int, float, float, int, str]]:
    """(interval, design, labels, cells, pooled coverage, worst cell's coverage, draws with an interval, worst cell)."""
    rng = np.random.default_rng(seed)
    tally: dict[tuple[str, str, int], list[tuple[str, list[bool]]]] = {}
    for (rate, (sens, spec), big_n), n, design in itertools.product(
            itertools.product(RATES, JUDGES, JUDGED), labels, ("random", "stratified")):
        cell: dict[str, list[bool]] = {}
        for d in range(draws):
            h = rng.random(big_n) < rate
            j = np.where(h, rng.random(big_n) < sens, rng.random(big_n) >= spec)
            full = float(kappa_of(h.astype(int), j.astype(int)))
            for key, hit in one_draw(h, j, rate, full, n, design, rng, seed + d).items():
                if hit is not None:
                    cell.setdefault(key, []).append(bool(hit))
        for key, hits in cell.items():
            tally.setdefault((key, design, n), []).append((f"rate {rate} sens {sens} spec {spec} N {big_n}", hits))
    rows = []
    for (key, design, n), cells in sorted(tally.items()):
        pooled = [x for _, c in cells for x in c]
        worst = min(cells, key=lambda nc: float(np.mean(nc[1])))
        rows.append((key, design, n, len(cells), float(np.mean(pooled)), float(np.mean(worst[1])), len(pooled),
                     worst[0]))
    return rows


def public_sets(labels: list[int], draws: int, seed: int) -> None:
    """Label samples from the benchmark sets `judgeflow bench` cached; skip with a message without them."""
    from judgeflow.bench import BENCHMARKS, benchmark
    from judgeflow.bench.fetch import cache_dir
    from judgeflow.bench.prepare import records_of

    found = False
    for name in BENCHMARKS:
        bench = benchmark(name)
        root = cache_dir(bench)
        if not all((root / f.path).is_file() for f in bench.files):
            continue
        found = True
        from judgeflow import Item, Judge, judge_many

        records = [r for r in records_of(bench, root) if r.get("label") in (0, 1)][:3000]
        results = judge_many(Judge("baseline/lexical"), [Item.from_record(r) for r in records])
        pairs = [(r["label"], res.label) for r, res in zip(records, results) if res.label is not None]
        h = np.array([p[0] for p in pairs], dtype=bool)
        j = np.array([p[1] for p in pairs], dtype=bool)
        truth, full = float(h.mean()), float(kappa_of(h.astype(int), j.astype(int)))
        rng = np.random.default_rng(seed)
        for n in labels:
            hits: dict[str, list[bool]] = {}
            for d in range(draws):
                for key, hit in one_draw(h, j, truth, full, n, "random", rng, seed + d).items():
                    if hit is not None:
                        hits.setdefault(key, []).append(bool(hit))
            cov = ", ".join(f"{k} {np.mean(v):.1%}" for k, v in sorted(hits.items()) if k != "raw_outside")
            print(f"{name}: {len(h)} items, human rate {truth:.1%}, full-data kappa {full:.2f}; {n} labels: {cov}")
    if not found:
        print(f"public sets: none cached under {cache_dir(benchmark('faithbench')).parents[1]} "
              "(run `judgeflow bench halueval_qa` once to download one); skipped")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--draws", type=int, default=500, help="draws per cell (default 500)")
    p.add_argument("--labels", type=int, nargs="+", default=[30, 50, 100], help="label sample sizes (default 30 50 100)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-public", action="store_true", help="simulation only")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    rows = simulate(args.labels, args.draws, args.seed)
    print(f"simulation: true rate {RATES} x judge (sens, spec) {JUDGES} x judged rows {JUDGED}; {args.draws} draws "
          f"per cell; 95% intervals ({time.perf_counter() - t0:.0f} s)")
    print(f"{'interval':<12} {'labels drawn':<12} {'n labels':>8} {'cells':>6} {'coverage':>9} {'worst cell':>11} "
          f"{'draws':>7}  worst cell")
    names = {"corrected": "corrected", "raw": "raw (Wilson)", "kappa": "kappa", "raw_outside": "raw outside",
             "kappa_bootstrap": "kappa (old)"}
    for key, design, n, cells, pooled, worst, k, where in rows:
        print(f"{names[key]:<12} {design:<12} {n:>8} {cells:>6} {pooled:>9.1%} {worst:>11.1%} {k:>7}  {where}")
    print("(raw outside: the share of draws whose raw rate lies outside the corrected interval, not a coverage; "
          "kappa (old): the percentile bootstrap over items that kappa's interval used before; kappa draws where "
          "people labelled one class have no interval, as in calibrate)")
    if not args.no_public:
        public_sets(args.labels, args.draws, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
