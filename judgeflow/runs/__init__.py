"""Runs: judging many items with a store (resume, cache), prices, and provider batch APIs."""
