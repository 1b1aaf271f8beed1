"""What ratio to the latency-bound ideal a client can reach here at all: judgeflow beside two floors.

    python benchmarks/floor.py                                   # about 3 min on 2 shared cores
    python benchmarks/floor.py --latency 50 --concurrency 16 --passes 5

benchmarks/cpu.py's part 3 compares judgeflow with the ideal (items / C x latency x calls per
item), which no client reaches: every request also costs the client CPU, on one event loop
shared by all C items in flight. This measures how close the libraries judgeflow runs on get by
themselves, in the same conditions, so that the ratio can be read against what is reachable:

- transport: each item's two requests, the exact bytes judgeflow sent for it (recorded from a
  judgeflow pass over the same items), sent one after the other through the openai SDK client
  judgeflow builds (`backends.connections.sdk_client`: its aiohttp transport and connection
  pool), each reply read and JSON-parsed. No graph, no Instructor, no judgeflow code.
- LangGraph + transport: the same two requests, sent from inside a 4-node LangGraph graph of
  judgeflow's shape (route -> decompose -> check -> aggregate, routed with `Command`), a
  TypedDict state; the nodes do nothing else.
- judgeflow: `Judge`, graph strategy, factual rows, as cpu.py's part 3 (its `ideal_case`).

All three run against the same fake (tests/fakes/provider.py --asyncio, in its own process), with
the collector as `judgeflow run` sets it, one pass of each in turn, `--passes` times, so that
this VM's speed swings fall on all three alike; printed as the median pass and the best one,
and judgeflow's median as a share of each floor's. First it prints LangGraph's own CPU per
invoke of a chain of 1, 2, 4 and 6 no-op nodes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import cpu  # benchmarks/cpu.py: the fake, the items, the judge and the collector, as its part 3

Request = tuple[str, list[tuple[bytes, bytes]], bytes]  # (URL path, raw headers but Host, body)
Recorded = list[Request]


async def record(url: str, items: list[Any]) -> list[Recorded]:
    """judgeflow's requests for each item, in order, recorded from one judgeflow pass (one item at
    a time, so that each request is attributed to its item; the fake at `url` without latency:
    what judgeflow sends does not depend on it)."""
    import httpx2

    judge = cpu.make_judge(url, "graph", "factual", 1)
    sent: Recorded = []
    send = httpx2.AsyncClient.send

    async def recording(self: Any, request: Any, **kwargs: Any) -> Any:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"host"]
        sent.append((request.url.raw_path.decode(), headers, request.content))
        return await send(self, request, **kwargs)

    out: list[Recorded] = []
    httpx2.AsyncClient.send = recording  # type: ignore[method-assign]
    try:
        for it in items:
            sent = []
            await judge.ajudge(it)
            out.append(sent)
    finally:
        httpx2.AsyncClient.send = send  # type: ignore[method-assign]
        await cpu.close(judge)
    if any(len(r) != 2 for r in out):
        raise SystemExit(f"expected two requests per item, recorded {sorted({len(r) for r in out})}")
    return out


def sender(url: str) -> tuple[Any, Callable[[Request], Awaitable[Any]]]:
    """(SDK client, send one recorded request and return its parsed JSON reply) over the client
    judgeflow builds for this URL."""
    import httpx2

    from judgeflow.backends.connections import sdk_client

    raw = sdk_client("openai", "AsyncOpenAI", base_url=url + "/v1", api_key="bench")
    http = raw._client

    async def send(req: Request) -> Any:
        path, headers, body = req
        response = await http.send(httpx2.Request("POST", url + path, headers=headers, content=body))
        response.raise_for_status()
        return json.loads(response.content)

    return raw, send


def graph_of(send: Callable[[Any], Awaitable[Any]]) -> Any:
    """judgeflow's graph shape whose model nodes only send the item's recorded requests."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command
    from typing_extensions import TypedDict

    class State(TypedDict, total=False):
        requests: Any
        claims: Any
        checks: Any
        label: int | None

    async def route(state: State) -> Command[Literal["decompose"]]:
        return Command(update={"label": None}, goto="decompose")

    async def decompose(state: State) -> Command[Literal["check"]]:
        return Command(update={"claims": await send(state["requests"][0])}, goto="check")

    async def check(state: State) -> Command[Literal["aggregate"]]:
        return Command(update={"checks": await send(state["requests"][1])}, goto="aggregate")

    async def aggregate(state: State) -> dict[str, Any]:
        return {"label": 0}

    g = StateGraph(State)
    for node in (route, decompose, check, aggregate):
        g.add_node(node)
    g.add_edge(START, "route")
    g.add_edge("aggregate", END)
    return g.compile(name="floor")


async def floor_pass(url: str, kind: str, recorded: list[Recorded], c: int) -> tuple[float, float]:
    """(wall s, CPU s) for one pass of `kind` ("transport" or "graph") over the recorded items at
    concurrency `c`, after `c` untimed items (connections open)."""
    raw, send = sender(url)
    graph = graph_of(send) if kind == "graph" else None
    gate = asyncio.Semaphore(c)

    async def one(requests: Recorded) -> None:
        async with gate:
            if graph is not None:
                await graph.ainvoke({"requests": requests})
            else:
                for req in requests:
                    await send(req)

    try:
        await asyncio.gather(*(one(r) for r in recorded[:c]))
        start, cpu_start = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(r) for r in recorded))
        return time.perf_counter() - start, time.process_time() - cpu_start
    finally:
        await raw.close()


def ratios(latency_ms: float, c: int, n: int, passes: int, recorded: list[Recorded], url: str) -> dict[str, Any]:
    """The three ratios at one latency and concurrency: {kind: [(ratio, CPU ms/item) per pass]}."""
    ideal = n / c * (latency_ms / 1000) * 2
    out: dict[str, list[tuple[float, float]]] = {"transport": [], "graph": [], "judgeflow": []}
    for _ in range(passes):
        for kind, found in out.items():
            with cpu.run_gc(True):
                if kind == "judgeflow":
                    wall, spent, judged, calls = asyncio.run(cpu.ideal_case(url, c, n))
                    if judged != n or calls != 2 * n:
                        raise SystemExit(f"judgeflow judged {judged}/{n} with {calls} calls: not comparable")
                else:
                    wall, spent = asyncio.run(floor_pass(url, kind, recorded, c))
            found.append((ideal / wall, spent * 1000 / n))
    return out


NAMES = {"transport": "transport floor", "graph": "LangGraph + transport floor", "judgeflow": "judgeflow"}


def report(latency_ms: float, c: int, n: int, found: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    row: dict[str, Any] = {"latency_ms": latency_ms, "concurrency": c, "items": n}
    for kind, passes in found.items():
        ratio, best, spent = median([p[0] for p in passes]), max(p[0] for p in passes), median([p[1] for p in passes])
        row[kind] = {"ratio": ratio, "best": best, "cpu_ms": spent}
        print(f"  latency {latency_ms:3.0f} ms  C={c:<3}  {NAMES[kind]:28} ratio {ratio:.2f} (best pass {best:.2f})  "
              f"client CPU {spent:.2f} ms/item", flush=True)
    jf = row["judgeflow"]["ratio"]
    print(f"  latency {latency_ms:3.0f} ms  C={c:<3}  judgeflow / floor: {jf / row['graph']['ratio']:.2f} of "
          f"LangGraph + transport, {jf / row['transport']['ratio']:.2f} of transport alone", flush=True)
    return row


def floors(n: int, passes: int, latencies: list[float], concurrencies: list[int]) -> list[dict[str, Any]]:
    proc, url = cpu.start_async_fake(0)
    try:
        recorded = asyncio.run(record(url, cpu.load("factual_qa.jsonl", n, "")))
    finally:
        cpu.stop_async_fake(proc)
    rows = []
    for latency_ms in latencies:
        proc, url = cpu.start_async_fake(latency_ms / 1000)
        try:
            for c in concurrencies:
                rows.append(report(latency_ms, c, n, ratios(latency_ms, c, n, passes, recorded, url)))
        finally:
            cpu.stop_async_fake(proc)
    return rows


def graph_cost(nodes: int, invokes: int = 2000) -> float:
    """CPU microseconds per `ainvoke` of a chain of `nodes` no-op async nodes (a one-key TypedDict
    state), after 200 untimed invokes: LangGraph's own cost, with nothing in the nodes."""
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict, total=False):
        n: int

    async def step(state: State) -> dict[str, Any]:
        return {"n": 1}

    g = StateGraph(State)
    names = [f"n{k}" for k in range(nodes)]
    for name in names:
        g.add_node(name, step)
    for a, b in zip([START, *names], [*names, END]):
        g.add_edge(a, b)
    graph = g.compile()

    async def run() -> float:
        for _ in range(200):
            await graph.ainvoke({"n": 0})
        start = time.process_time()
        for _ in range(invokes):
            await graph.ainvoke({"n": 0})
        return (time.process_time() - start) / invokes * 1e6

    with cpu.run_gc(True):
        return asyncio.run(run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=480, help="items per pass (default 480)")
    ap.add_argument("--passes", type=int, default=3, help="passes of each of the three (default 3)")
    ap.add_argument("--latency", type=float, action="append", help="provider latency in ms (default 50 and 200)")
    ap.add_argument("--concurrency", type=int, action="append", help="items in flight (default 16 and 64)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args()
    import judgeflow  # noqa: F401 - imports are not part of any pass

    cost = {k: graph_cost(k) for k in (1, 2, 4, 6)}
    print("LangGraph's own CPU per ainvoke, no-op nodes in a chain: "
          + ", ".join(f"{k} node{'s' * (k > 1)} {us:.0f} us" for k, us in cost.items())
          + f" (about {(cost[6] - cost[1]) / 5:.0f} us a node)")
    print("ratio to the latency-bound ideal, graph factual, and the floors under it "
          f"(tests/fakes/provider.py --asyncio; gc as judgeflow run; judgeflow's "
          f"{cpu.external.pace_line(base_url='http://127.0.0.1/v1')}):")
    rows = floors(args.items, args.passes, args.latency or [50, 200], args.concurrency or [16, 64])
    if args.json:
        print(json.dumps({"langgraph_us_per_invoke": cost, "ratios": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
