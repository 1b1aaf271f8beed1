"""Readers of untrusted bytes, bounded in depth, size and time (OTLP bodies, Phoenix replies, bench
files, state files written by other processes).

    doc = loads(raw)                                   # ValueError, never RecursionError, on a 100k-deep line
    body = read_capped(chunks, limit=MAX_BODY, deadline=time.monotonic() + 30, what="Phoenix's reply")
    data = gunzip_capped(body, limit=MAX_BODY)         # a gzip bomb stops at `limit` decompressed bytes

Every failure is a ValueError whose message names the bound and the way out, so each caller turns
it into its own invalid row, 400 or error line.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterable
from typing import Any

#: nesting levels a JSON document may have (OTLP nests 6 deep, an AnyValue a few more)
MAX_DEPTH = 64


def loads(raw: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads for untrusted text: a document nested deeper than `max_depth` (the parser's own
    recursion included) is a ValueError, so no RecursionError reaches the caller or its walkers."""
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise ValueError(f"nested too deeply to read (more than {max_depth} levels)") from None
    if depth_over(doc, max_depth):
        raise ValueError(f"nested too deeply to read (more than {max_depth} levels)")
    return doc


def depth_over(doc: Any, max_depth: int) -> bool:
    """Whether `doc` (parsed JSON) nests deeper than `max_depth`, found without recursion."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def read_capped(chunks: Iterable[bytes], *, limit: int, deadline: float, what: str) -> bytes:
    """The bytes of `chunks` (an HTTP body's stream), refused once over `limit` bytes or past
    `deadline` (time.monotonic()): the total time, so a server that drips a byte at a time is cut."""
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise ValueError(f"{what} is over {limit:,} bytes")
        if time.monotonic() > deadline:
            raise ValueError(f"{what} did not arrive in time (the deadline of the read passed)")
    return bytes(out)


def gunzip_capped(body: bytes, *, limit: int) -> bytes:
    """gzip-decompressed `body`, refused once over `limit` bytes (a small bomb cannot fill memory)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as e:
        raise ValueError(f"the body is not gzip ({e})") from None
    if len(out) > limit or d.unconsumed_tail:
        raise ValueError(f"the body is over {limit:,} bytes once decompressed")
    return out
