"""The compiled judge graph, for LangGraph's own tooling (`langgraph dev`, see langgraph.json).

Served, the context is JSON from whoever may call the server, who spends the server's key: it may
name an allowed model and a criterion, nothing more (`judgeflow.served`: JUDGEFLOW_ALLOWED_MODELS,
JUDGEFLOW_BASE_URL, JUDGEFLOW_CRITERIA_DIR are the operator's):
    await graph.ainvoke({"item": {...}}, context={"model": "baseline/lexical"})
Python callers may pass a full JudgeContext (any endpoint, a ready backend): it is used as given.
"""

import judgeflow.backends  # noqa: F401 - registers the backends now: importing them inside the server's event loop would block it
from judgeflow.served import build_served_graph

graph = build_served_graph()
