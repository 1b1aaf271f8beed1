"""An independent reference for bootstrap kappas: Cohen's kappa of every resample at once (numpy),
checked against scikit-learn's `cohen_kappa_score` on the first resamples. The tests used to call
scikit-learn 2,000-4,000 times in a Python loop (most of their CPU); the figures are the same."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score

#: resamples checked one by one against scikit-learn
SPOT_CHECKS = 25


def resampled_kappas(human: Any, judge: Any, idx: Any) -> tuple[np.ndarray, np.ndarray]:
    """(kappa per resample, mask of the resamples where kappa is defined: both classes among the human
    and judge labels of that resample), for 0/1 label arrays and resample rows `idx` (n_boot x n)."""
    h, j = np.asarray(human)[idx], np.asarray(judge)[idx]
    both = np.concatenate([h, j], axis=1)
    defined = both.min(axis=1) != both.max(axis=1)
    po = (h == j).mean(axis=1)
    ph, pj = h.mean(axis=1), j.mean(axis=1)
    pe = ph * pj + (1 - ph) * (1 - pj)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(defined, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)
    for k in np.flatnonzero(defined)[:SPOT_CHECKS]:
        assert abs(kappa[k] - cohen_kappa_score(h[k], j[k], labels=[0, 1])) < 1e-12, k
    return kappa, defined
