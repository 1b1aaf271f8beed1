"""The OpenAI SDK's JSON POST for one path, with what repeats prepared once per SDK client.

`AsyncOpenAI.post(path, body=..., cast_to=bytes)` rebuilds on every call what is the same for
every judge request: a pydantic options model, the URL merged with the base URL (parsed twice),
the header set (auth, the SDK's platform headers) and the httpx2 request through the client's
merge of URL, headers, cookies and query. At two calls an item that was about a fifth of the
client's CPU per item (see benchmarks/cpu.py).

`prepared_post(raw, path)` builds the URL and headers once and then, per call, makes the httpx2
request directly and sends it through the SDK's own httpx2 client (its transport, connection
pool, cookies and timeouts). What fails is handled by the SDK's own policy, step for step as its
`request` loop does: `_should_retry` and `_sleep_for_retry` (408, 409, 429, 5xx,
`x-should-retry`, `retry-after`), `APITimeoutError` and `APIConnectionError` after the retries,
`_make_status_error_from_response` for a status error, and `x-stainless-retry-count` on each
retry. tests/backends/test_sdk_post.py checks the requests sent and the outcome against the SDK's `post`
for the same replies.

It is used only where the SDK's request loop does nothing more per request: a plain
`AsyncOpenAI` (not Azure, whose requests are rewritten per deployment) over an httpx2 client,
without custom auth, an API-key callable, workload identity, a provider runtime or default
query parameters, once the SDK has answered one call (which fills in its platform headers).
Everything else (and a call with its own headers or timeout) goes through `post` unchanged.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import Any

Post = Callable[[dict[str, Any]], Awaitable[bytes]]

_PREPARED: weakref.WeakKeyDictionary[Any, dict[str, Post | None]] = weakref.WeakKeyDictionary()
#: the SDK client attributes this module relies on (an SDK without them posts through `post`)
_NEEDED = ("_client", "_build_headers", "_prepare_url", "_should_retry", "_sleep_for_retry",
           "_make_status_error_from_response", "_idempotency_key", "_idempotency_header", "max_retries", "timeout")


def prepared_post(raw: Any, path: str) -> Post | None:
    """`raw`'s POST of a JSON body to `path` returning the reply bytes, prepared once; None when
    the SDK's own `post` must do it (see the module docstring)."""
    if getattr(raw, "_platform", None) is None:  # the SDK fills it in on its first request
        return None
    try:
        by_path = _PREPARED.setdefault(raw, {})
    except TypeError:  # not weak-referenceable: not the SDK's client
        return None
    if path not in by_path:
        by_path[path] = _prepare(raw, path) if _plain(raw) else None
    return by_path[path]


def _plain(raw: Any) -> bool:
    """True for a client whose requests need nothing per request beyond what `_prepare` repeats."""
    try:
        import httpx2
        import openai
    except ImportError:  # pragma: no cover - both come with the openai SDK this module serves
        return False
    return (type(raw) is openai.AsyncOpenAI and all(hasattr(raw, name) for name in _NEEDED)
            and isinstance(raw._client, httpx2.AsyncClient)
            and getattr(raw, "custom_auth", None) is None and not getattr(raw, "default_query", None)
            and getattr(raw, "_provider_runtime", None) is None
            and getattr(raw, "_api_key_provider", None) is None
            and getattr(raw, "_workload_identity_auth", None) is None)


def _prepare(raw: Any, path: str) -> Post | None:
    try:
        from openai._httpx2 import timeout_exceptions  # noqa: F401 - the layout of openai 3.x (pinned)
        from openai._utils._json import openapi_dumps  # noqa: F401
    except ImportError:  # another SDK layout: its own post
        return None
    url = raw._prepare_url(path)
    if url.query or "_" in url.host:  # the SDK rewrites these per request (query merge, SNI host name)
        return None
    return _PreparedPost(raw, path, url)


class _PreparedPost:
    """One path's POST through `raw`'s httpx2 client, with the SDK's own retry policy and errors."""

    def __init__(self, raw: Any, path: str, url: Any) -> None:
        import httpx2
        from openai._httpx2 import timeout_exceptions
        from openai._models import FinalRequestOptions

        self.raw, self.url, self.client = raw, url, raw._client
        self.options = FinalRequestOptions.construct(method="post", url=path, json_data=None)
        self.headers = httpx2.Headers(self.client.headers)
        self.headers.update(raw._build_headers(self.options, retries_taken=0))
        self.extensions = {"timeout": httpx2.Timeout(raw.timeout).as_dict()}
        self.timeouts = timeout_exceptions()

    def request(self, content: bytes, retries_taken: int, key: str | None) -> Any:
        import httpx2

        sent = self.headers
        if retries_taken or key is not None:
            sent = httpx2.Headers(self.headers)
            if retries_taken:
                sent["x-stainless-retry-count"] = str(retries_taken)
            if key is not None:
                sent[self.raw._idempotency_header] = key
        return httpx2.Request("POST", self.url, headers=sent, content=content, extensions=self.extensions,
                              cookies=self.client.cookies or None)

    async def sleep(self, retries_taken: int, max_retries: int, response: Any) -> None:
        await self.raw._sleep_for_retry(retries_taken=retries_taken, max_retries=max_retries, options=self.options,
                                        response=response)

    async def __call__(self, body: dict[str, Any]) -> bytes:
        from openai import APIConnectionError, APITimeoutError, OpenAIError
        from openai._utils._json import openapi_dumps

        raw = self.raw
        content = openapi_dumps(body)
        key = raw._idempotency_key() if raw._idempotency_header else None
        max_retries = raw.max_retries
        for retries_taken in range(max_retries + 1):
            sent = self.request(content, retries_taken, key)
            try:
                response = await self.client.send(sent)
            except self.timeouts as e:
                if retries_taken < max_retries:
                    await self.sleep(retries_taken, max_retries, None)
                    continue
                raise APITimeoutError(request=sent) from e
            except OpenAIError:
                raise
            except Exception as e:
                if retries_taken < max_retries:
                    await self.sleep(retries_taken, max_retries, None)
                    continue
                raise APIConnectionError(request=sent) from e
            if response.is_success:
                reply: bytes = response.content
                return reply
            if retries_taken < max_retries and raw._should_retry(response):
                await response.aclose()
                await self.sleep(retries_taken, max_retries, response)
                continue
            raise raw._make_status_error_from_response(response) from None
        raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover
