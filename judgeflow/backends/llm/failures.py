"""What a provider's failure means: systemic (every call will fail alike: stop the run) or not,
a context-length error (not retried), a rejected request shape (fall back), how long to wait."""

from __future__ import annotations

import errno
import re
import socket
import sys

from ...redact import mask_urls, redact

_CONTEXT_LENGTH = re.compile(
    r"maximum context length|context[_ ]length|context window|too many tokens|prompt is too long|"
    r"input is too long|reduce the length|exceeds? the (?:model'?s? )?(?:maximum|context)", re.IGNORECASE)

SHAPE_WORDS = re.compile(r"response_format|json_schema|json_object|tool_choice|\btools?\b|function|strict|schema",
                    re.IGNORECASE)


def sdk_errors(name: str) -> tuple[type[BaseException], ...]:
    """The exception class `name` (APIError, APITimeoutError, ...) of each provider SDK that is
    loaded: an SDK that was never imported cannot have raised anything."""
    return tuple(getattr(m, name) for m in (sys.modules.get("openai"), sys.modules.get("anthropic")) if m is not None)


def status_of(e: BaseException) -> int | None:
    return getattr(e, "status_code", None)


def _causes(e: BaseException) -> list[BaseException]:
    """`e` and what caused it (`__cause__`, else `__context__`), outermost first."""
    seen: list[BaseException] = []
    cause: BaseException | None = e
    while cause is not None and all(cause is not s for s in seen):
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    return seen


def connect_failure(e: BaseException) -> BaseException | None:
    """The failed connect (refused, no such host) behind `e`, if any: the SDKs' aiohttp transport
    reports aiohttp's ClientConnectorError as a connect timeout. A connection dropped after it was
    made (mid-body) is not one: the server is there."""
    aiohttp = sys.modules.get("aiohttp")
    for cause in _causes(e):
        httpx_connect = type(cause).__name__ == "ConnectError" and \
            type(cause).__module__.split(".")[0] in ("httpx2", "httpx", "httpcore")
        if httpx_connect or isinstance(cause, (ConnectionRefusedError, socket.gaierror)) or (
                aiohttp is not None and isinstance(cause, aiohttp.ClientConnectorError)):
            return cause
    return None


def local_failure(e: BaseException) -> BaseException | None:
    """Out of file descriptors (EMFILE, ENFILE) behind `e`: this machine's limit, not the endpoint's."""
    for cause in _causes(e):
        if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE):
            return cause
    return None


def classify(e: BaseException) -> tuple[str, str] | None:
    """(kind, what to do) for a systemic provider error that will fail every call alike, else None."""
    status = status_of(e)
    if local_failure(e) is not None:
        return ("too many open files", "judgeflow ran out of file descriptors (a limit of this machine, not the "
                                       "endpoint's): raise it (`ulimit -n 4096`) or lower --concurrency")
    if isinstance(e, sdk_errors("APITimeoutError")) and connect_failure(e) is None:
        return None  # slow, not broken: the SDK's retries handle it
    if isinstance(e, sdk_errors("APIConnectionError")) and connect_failure(e) is not None:
        return ("connection", "cannot connect: check --base-url (host, port, scheme) and that the server is running")
    if status in (401, 403):
        return (f"HTTP {status}", "authentication failed: check the API key (OPENAI_API_KEY / ANTHROPIC_API_KEY) "
                                  "and its permissions")
    if status == 404:
        if type(e).__module__.startswith("anthropic"):
            return ("HTTP 404", "not found: check the model name and --base-url (an Anthropic-compatible base URL "
                                "has no /v1: the SDK adds /v1/messages itself)")
        return ("HTTP 404", "not found: check the model name and --base-url (OpenAI-compatible servers "
                            "usually end in /v1)")
    return None


class ProviderFailure(Exception):
    """Internal: a provider (HTTP/transport) error, to be classified by LLMClient._ask."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        super().__init__(str(error))


def is_provider_error(e: BaseException | None) -> bool:
    if isinstance(e, sdk_errors("APIError")) or (e is not None and local_failure(e) is not None):
        return True  # an SDK error, or out of file descriptors (classified as a local systemic failure)
    from ..providers import PROVIDERS, provider

    # SDKs reached through from_provider (google-genai, boto3, mistralai): their HTTP errors
    return e is not None and any(provider(name).owns_error(e) for name in PROVIDERS)


def asked_wait(e: BaseException) -> float:
    """Seconds to wait before retrying, as the provider asked (retry-after), else half a second."""
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name)) * scale
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 60:
            return value
    return 0.5


def is_context_length(e: BaseException) -> bool:
    return status_of(e) in (400, 413, 422, None) and bool(_CONTEXT_LENGTH.search(str(e)))


def short(e: BaseException | str, n: int = 300) -> str:
    s = mask_urls(redact(" ".join(str(e).split())))  # a provider may echo the Authorization header back
    return s if len(s) <= n else s[: n - 1] + "…"
