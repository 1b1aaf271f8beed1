"""The compiled judge graph, for LangGraph's own tooling (`langgraph dev`, see langgraph.json).

Served, the context is JSON from whoever may call the server, who spends the server's key: it may
name an allowed model and a criterion, nothing more (`judgeflow.served`: JUDGEFLOW_ALLOWED_MODELS,
JUDGEFLOW_BASE_URL, JUDGEFLOW_CRITERIA_DIR are the operator's):
    await graph.ainvoke({"item": {...}}, context={"model": "baseline/lexical"})
Python callers may pass a full JudgeContext (any endpoint, a ready backend): it is used as given.
"""

from judgeflow.served import build_served_graph

graph = build_served_graph()
