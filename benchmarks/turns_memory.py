"""Memory of `--turns all` on one long conversation (#35 item 8): the items of its turns, before any call.

    python benchmarks/turns_memory.py [--messages 2000]

Prints the items made, the characters of evidence they carry, the memory traced while making
them, and the ratio to the conversation's own size. The turns' items share the conversation's
documents, so memory grows with the conversation, not its square.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

from judgeflow.items import items_from_record


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=2000)
    n = p.parse_args().messages
    msgs = [m for k in range(n // 2) for m in ({"role": "user", "content": f"question {k} " + "u" * 38},
                                                {"role": "assistant", "content": f"answer {k} " + "a" * 40})]
    record = {"id": "c1", "messages": msgs}
    size = len(json.dumps(record))
    tracemalloc.start()
    start = time.perf_counter()
    items = items_from_record(record, turns="all")
    seconds = time.perf_counter() - start
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    chars = sum(len(d) for it in items for d in it.source or [])
    print(f"{n} messages ({size:,} characters): {len(items)} items carrying {chars:,} characters of evidence; "
          f"{held / 2**20:,.0f} MB held ({held / size:,.0f}x the conversation), {seconds:.1f} s")


if __name__ == "__main__":
    main()
