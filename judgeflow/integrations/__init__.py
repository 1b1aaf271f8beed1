"""Adapters to the tools judgeflow users already have: LangChain, LangSmith, pandas.

Each adapter module imports its optional library lazily, so `import judgeflow` never needs them.
"""
