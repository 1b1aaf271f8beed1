"""Calibration: human labels, agreement with them (calibrate), comparing judges (compare),
sampling items to label, the terminal labeller and the HTML reports."""

#: bootstrap resamples for confidence intervals (here, not in agreement.py, so that building the
#: CLI's parser never imports numpy)
DEFAULT_BOOT = 2000
