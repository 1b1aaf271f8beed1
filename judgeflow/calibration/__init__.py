"""Calibration: human labels, agreement with them (calibrate), comparing judges (compare),
sampling items to label, the terminal labeller and the HTML reports."""
