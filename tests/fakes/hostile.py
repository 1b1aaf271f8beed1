"""A hostile HTTP endpoint on 127.0.0.1: each request is answered by a script that writes raw bytes
to the socket (a reply that trickles in, a connection dropped mid-body, an error that echoes the
request's headers back), and every request is recorded with its headers.

    with HostileServer(trickle(b'{"x": 1}', every=0.5)) as server:
        make_client("openai/m", base_url=server.url + "/v1", ...)
        server.requests  # [(method, path, headers, body)]
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable

Respond = Callable[[socket.socket, dict[str, str], bytes], None]


def head(status: int, length: int, content_type: str = "application/json") -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
            "Connection: close\r\n\r\n").encode()


class trickle:  # noqa: N801 - used like the other reply scripts (functions)
    """A 200 whose body arrives one byte every `every` seconds (never idle long enough to time out);
    `cut` holds, per request, the seconds after which the client closed the connection."""

    def __init__(self, body: bytes, every: float) -> None:
        self.body, self.every = body, every
        self.cut: list[float] = []

    def __call__(self, conn: socket.socket, headers: dict[str, str], raw: bytes) -> None:
        start = time.monotonic()
        try:
            conn.sendall(head(200, len(self.body)))
            for i in range(len(self.body)):
                conn.sendall(self.body[i:i + 1])
                time.sleep(self.every)
        except OSError:
            self.cut.append(time.monotonic() - start)


def dropped(sent: bytes = b'{"id": "chatcmpl-1", "choi') -> Respond:
    """A 200 that promises a longer body, sends `sent`, and closes the connection."""

    def respond(conn: socket.socket, headers: dict[str, str], raw: bytes) -> None:
        conn.sendall(head(200, len(sent) + 500) + sent)

    return respond


def echoing(status: int = 401) -> Respond:
    """An error reply that quotes the key it was sent, bare (no "Bearer "), and the host it was sent to."""

    def respond(conn: socket.socket, headers: dict[str, str], raw: bytes) -> None:
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        message = f"Incorrect API key provided: {key}. You can find your key at {headers.get('host')}/keys"
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
        conn.sendall(head(status, len(body)) + body)

    return respond


class HostileServer:
    """One thread per connection; `respond` writes the whole reply, then the connection closes."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(30)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                top, _, body = data.partition(b"\r\n\r\n")
                first, *lines = top.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
                while len(body) < int(headers.get("content-length") or 0):
                    body += conn.recv(65536)
                method, path, _ = first.split(" ", 2)
                self.requests.append((method, path, headers, body))
                self.respond(conn, headers, body)
            except OSError:  # the client gave up (a timeout cut the reply): nothing more to send
                pass

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()
