"""The compiled judge graph, for LangGraph's own tooling (`langgraph dev`, see langgraph.json).

Invoke it with a context naming the backend, e.g.
    graph.invoke({"item": {...}}, context=JudgeContext(backend=make_backend("baseline/lexical")))
"""

from judgeflow.workflow import build_graph

graph = build_graph()
