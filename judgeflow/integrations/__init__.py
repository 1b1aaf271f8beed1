"""Adapters to the tools judgeflow users already have: LangChain, LangSmith, MLflow (`mlflow.judgeflow_scorer`), pandas.

Each adapter module imports its optional library lazily, so `import judgeflow` never needs them.
"""
