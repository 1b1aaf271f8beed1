"""A local fake LLM provider: a real HTTP server on 127.0.0.1 with a fixed latency.

It speaks the OpenAI chat-completions wire format (and Anthropic's /v1/messages) with tool calls,
answering judgeflow's three requests (Claims, ClaimChecks, SingleJudgment) from the prompt alone:
claims are the answer's sentences (at most 4), and a claim is `contradicted` when it holds a
digit, else `supported`. Token usage is estimated as characters / 4.

    python benchmarks/fake_provider.py --latency 0.05      # prints: READY http://127.0.0.1:PORT
    with FakeProvider(latency=0.0) as fake: ... fake.base_url, fake.requests

Used by benchmarks/throughput.py (in a separate process, so the server does not compete with
the judge for the interpreter) and by tests that need a server another process can reach.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)
_CLAIM = re.compile(r'<claim id="([^"]+)">(.*?)</claim>', re.S)
_SENT = re.compile(r"(?<=[.!?])\s+")


def _claims(answer: str) -> list[dict[str, str]]:
    parts = [s.strip() for s in _SENT.split(answer.strip()) if s.strip()][:4] or [answer.strip() or "empty"]
    return [{"id": f"c{i}", "text": s, "kind": "other"} for i, s in enumerate(parts, 1)]


def _verdict(text: str, prompt: str) -> dict[str, str]:
    basis = "source" if "<source" in prompt else "reference"
    bad = any(ch.isdigit() for ch in text)
    return {"verdict": "contradicted" if bad else "supported", "basis": basis,
            "evidence": "", "reason": "fake provider"}


def answer_for(tool: str, prompt: str) -> dict[str, Any]:
    """The tool arguments judgeflow expects for request `tool`, from the user prompt."""
    if tool == "ClaimChecks":
        return {"checks": [{"claim_id": cid, **_verdict(text, prompt)} for cid, text in _CLAIM.findall(prompt)]}
    found = _ANSWER.findall(prompt)  # the last one: the system prompt may name the tag too
    claims = _claims(found[-1] if found else "")
    if tool == "SingleJudgment":
        return {"claims": [{**c, **_verdict(c["text"], prompt)} for c in claims]}
    return {"claims": claims}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def openai_reply(body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]["function"]["name"]
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
    args = json.dumps(answer_for(tool, prompt))
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": tool, "arguments": args}}],
        }}],
        "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(args) // 4,
                  "total_tokens": len(prompt) // 4 + len(args) // 4},
    }


def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]["name"]
    system = body.get("system")
    prompt = "\n".join([_text(system) if system else "", *(_text(m.get("content")) for m in body.get("messages", []))])
    data = answer_for(tool, prompt)
    return {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
        "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": data}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(json.dumps(data)) // 4},
    }


class FakeProvider:
    """The server, run in a background thread. `requests` holds every request body received."""

    def __init__(self, *, latency: float = 0.0, port: int = 0) -> None:
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                if fake.latency:
                    time.sleep(fake.latency)
                if self.path.endswith("/chat/completions"):
                    self._send(200, openai_reply(body))
                elif self.path.endswith("/messages"):
                    self._send(200, anthropic_reply(body))
                else:
                    self._send(404, {"error": {"message": f"fake provider: no route {self.path}"}})

            def setup(self) -> None:
                super().setup()
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n")
                self.wfile.write(head.encode() + raw)  # one write: no Nagle / delayed-ACK stall

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                    super().handle_error(request, client_address)  # a client that went away is fine

        self.server = Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The root URL; OpenAI clients take base_url + "/v1", Anthropic clients the root."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.05, help="seconds per request (default 0.05)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--stdin-eof-exit", action="store_true", help="stop when stdin closes (the parent exited)")
    args = p.parse_args()
    fake = FakeProvider(latency=args.latency, port=args.port)
    print(f"READY {fake.base_url}", flush=True)
    if args.stdin_eof_exit:
        threading.Thread(target=lambda: (sys.stdin.read(), fake.server.shutdown()), daemon=True).start()
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
