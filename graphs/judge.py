"""The compiled judge graph, for LangGraph's own tooling (`langgraph dev`, see langgraph.json).

The context is plain data, so it travels as JSON; the backend is built from it once per process:
    await graph.ainvoke({"item": {...}}, context={"model": "baseline/lexical"})
Python callers may pass a ready backend: `context=JudgeContext(backend=make_backend(...))`.
"""

import judgeflow.backends  # noqa: F401 - registers the backends now: importing them inside the server's event loop would block it
from judgeflow.workflow import build_graph

graph = build_graph()
