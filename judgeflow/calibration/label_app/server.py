"""The Starlette app and the uvicorn launcher for `judgeflow review`.

Safety: every /api route needs the token made at launch (header `X-Judgeflow-Token`; the page
takes it from its URL), requests must name a local Host unless the server was bound elsewhere
on purpose (no DNS rebinding), the page may run only its own script (Content-Security-Policy),
and no route takes a path: the app reads and writes only the files it was started with.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import webbrowser
from collections.abc import Callable
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...io.atomic import OutputError
from .session import ReviewSession, SaveConflict

TOKEN_HEADER = "X-Judgeflow-Token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def static_dir() -> str:
    return str(files(__package__) / "static")


LABEL_BODY = '{"id": "<the item id shown>", "label": 1 | 0 | "skip" | null, "note": "..."}'


def parse_label_body(body: Any) -> tuple[int | None, str | None, str]:
    """(label or None for a skip, note, item id) from a save's JSON body; ValueError naming the fix."""
    if not isinstance(body, dict):
        raise ValueError(f"the body must be a JSON object: {LABEL_BODY}")
    value = body.get("label")
    if not (value in ("skip", None) or (type(value) is int and value in (0, 1))):  # not 1.0, not true
        raise ValueError(f"label must be the whole number 1 or 0, \"skip\" or null, got {json.dumps(value)}")
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError("note must be text")
    item_id = body.get("id")
    if not isinstance(item_id, str):
        raise ValueError(f"the save must name the item it labels: {LABEL_BODY}")
    return (None if value in ("skip", None) else value), note, item_id


#: a save's body is a few hundred bytes; anything far larger is refused before it is parsed
MAX_BODY_BYTES = 64 * 1024


def read_label_json(raw: bytes) -> Any:
    """A save's JSON body; ValueError (a 400) naming the fix for one that is not JSON, too large or
    nested too deep for the parser (a RecursionError was a bare 500)."""
    if len(raw) > MAX_BODY_BYTES:
        raise ValueError(f"the body is {len(raw):,} bytes, over the {MAX_BODY_BYTES:,}-byte limit of a save: {LABEL_BODY}")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise ValueError(f"the body must be JSON: {LABEL_BODY}") from None


def create_app(session: ReviewSession, token: str, *, allow_any_host: bool = False) -> Starlette:
    """The app over `session`; `token` guards every /api route."""

    def api(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        return _api(fn, token)

    # every route runs the session in a worker thread: a slow calibration never holds up a save
    async def queue(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(session.queue, request.query_params)

    async def step(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(session.step, request.query_params)

    async def item(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(session.item, int(request.path_params["index"]))

    async def calibration(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(session.calibration)

    async def label(request: Request) -> dict[str, Any]:
        body = read_label_json(await request.body())
        value, note, item_id = parse_label_body(body)
        return await run_in_threadpool(lambda: session.label(int(request.path_params["index"]), value, note,
                                                             item_id=item_id))

    async def index(request: Request) -> Response:
        return FileResponse(f"{static_dir()}/index.html")

    return Starlette(middleware=[Middleware(BaseHTTPMiddleware, dispatch=_guard(allow_any_host))], routes=[
        Route("/", index),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/queue", api(queue)),
        Route("/api/step", api(step)),
        Route("/api/items/{index:int}", api(item)),
        Route("/api/items/{index:int}/label", api(label), methods=["POST"]),
        Route("/api/calibration", api(calibration)),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ])


def _api(fn: Callable[[Request], Any], token: str) -> Callable[[Request], Any]:
    """An /api route: the token checked, the answer as JSON, each failure as its HTTP status."""

    async def endpoint(request: Request) -> Response:
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
            return JSONResponse({"error": "missing or wrong token: open the URL `judgeflow review` printed"},
                                status_code=403)
        try:
            return JSONResponse(await fn(request))
        except IndexError:
            return JSONResponse({"error": "no such item"}, status_code=404)
        except SaveConflict as e:
            return JSONResponse({"error": str(e)}, status_code=409)
        except OutputError as e:
            return JSONResponse({"error": f"the label was NOT saved: {e}. The item stays as it was; free "
                                          "some space (or fix the file) and press the key again"},
                                status_code=507)
        except ValueError as e:
            return JSONResponse({"error": str(e)}, status_code=400)

    return endpoint


def _guard(allow_any_host: bool) -> Callable[[Request, Callable[[Request], Any]], Any]:
    """The middleware: only local host names (DNS rebinding), and the security headers on every response."""

    async def guard(request: Request, call_next: Callable[[Request], Any]) -> Response:
        host = request.url.hostname or ""
        if not allow_any_host and host not in LOCAL_HOSTS:
            return JSONResponse({"error": f"host {host!r} refused: this server answers to 127.0.0.1 only"},
                                status_code=421)
        response: Response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    return guard


def serve(session: ReviewSession, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
          announce: Callable[[str], None] = print) -> None:
    """Bind, announce the URL (with the token), and serve until interrupted."""
    import uvicorn

    token = secrets.token_urlsafe(24)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = host if host not in ("0.0.0.0", "::") else "127.0.0.1"
    url = f"http://{f'[{shown}]' if ':' in shown else shown}:{bound}/?token={token}"
    app = create_app(session, token, allow_any_host=host not in LOCAL_HOSTS)
    session.warm_up()
    sock.listen(128)  # connections wait in the backlog from now on: a browser sent to the URL is never refused
    announce(url)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.run(sockets=[sock])
