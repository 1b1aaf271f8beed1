"""One redaction function for everything judgeflow records: store, rows, traces, errors, hints, logs.

    redact("https://user:sk-live@host/v1")      -> "https://***@host/v1"
    redact("Authorization: Bearer sk-abc123...") -> "Authorization: Bearer ***"

It removes URL credentials, bearer/basic tokens, `sk-...` style keys and the values of
`x-api-key` / `api-key` / `api_key` / `authorization` fields (in headers, JSON or query strings).
Whatever their shape (Google `AIza...`, Together `tgp_v1_...`, a vLLM server's own key), the keys
judgeflow itself sends are masked by value: `remember_secret(key)` when a client is built, and
from then on the key (and any start of it of `SECRET_PREFIX` characters or more, for keys of
twice that length) is *** wherever it appears. Replacements never contain a quote or a
backslash, so redacting a JSON text keeps it valid JSON.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

MASK = "***"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host  (also user-only credentials)
    (re.compile(r"(?<=://)[^/\s@\"'<>]+@"), MASK + "@"),
    # Authorization: Bearer <token> / Basic <token>
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}"), r"\1\2" + MASK),
    # "x-api-key": "value", x-api-key: value, api_key=value, apikey=..., "authorization": "..."
    (re.compile(r"(?i)(\b(?:x-api-key|x-goog-api-key|api[-_]?key|access[-_]?token|authorization)\b[\"']?\s*[:=]\s*[\"']?)"
                r"(?!(?:bearer|basic)\s)[^\s\"'&,;}]{4,}"), r"\1" + MASK),
    # provider key shapes: sk-..., sk-ant-..., sk-proj-..., gsk_..., xai-...
    (re.compile(r"\b(sk|gsk|xai|pk)[-_][A-Za-z0-9_-]{8,}"), r"\1-" + MASK),
)


#: per pattern, what the lower-cased text must hold for it to match: a long text without it skips
#: that pattern's scan (a judgment's JSON is redacted on every write); one search each, and a key
#: shape's and an auth scheme's word boundary too ("task_" in prompts set off the key-shape scan)
_HINTED: tuple[re.Pattern[str], ...] = (
    re.compile("://"), re.compile(r"\b(?:bearer|basic)\s"),
    re.compile("api-key|api_key|apikey|access-token|access_token|accesstoken|authorization"),
    re.compile(r"\b(?:g?sk|xai|pk)[-_]"),
)


#: the keys judgeflow has sent, masked by value wherever they appear (see `remember_secret`); a
#: tuple replaced whole, so a thread redacting never sees it change under it
_SECRETS: tuple[str, ...] = ()
#: a shorter start of a known key is not masked (it could be any text)
SECRET_PREFIX = 8
#: what local servers are sent when no key is set: placeholders, not secrets
PLACEHOLDERS = frozenset({"not-needed", "ollama", "EMPTY"})


def remember_secret(secret: object) -> None:
    """Mask `secret` (a key or password judgeflow sends) in everything redacted from now on (a
    non-string, such as an SDK's key callable, is left alone)."""
    global _SECRETS
    if isinstance(secret, str) and len(secret) >= SECRET_PREFIX and secret not in PLACEHOLDERS \
            and secret not in _SECRETS:
        _SECRETS = (*_SECRETS, secret)


def _mask_secrets(text: str) -> str:
    """`text` with each known secret masked, and each start of one of SECRET_PREFIX characters or
    more (a provider's "Incorrect API key provided: AIzaSyB1..."); a short secret only whole."""
    for secret in sorted(_SECRETS, key=len, reverse=True):  # whole keys first, the longest first
        if secret in text:
            text = text.replace(secret, MASK)
    for secret in _SECRETS:  # then an echo cut short: as far as any known key goes on matching
        if len(secret) < 2 * SECRET_PREFIX:
            continue
        start = text.find(secret[:SECRET_PREFIX])
        while start != -1:
            end = start + max(_common(text, start, s) for s in _SECRETS)
            text = text[:start] + MASK + text[end:]
            start = text.find(secret[:SECRET_PREFIX], start + len(MASK))
    return text


def _common(text: str, start: int, secret: str) -> int:
    """How many characters of `secret` `text` repeats from `start` on."""
    n = 0
    while n < len(secret) and start + n < len(text) and text[start + n] == secret[n]:
        n += 1
    return n


#: the last long texts redacted, with the known keys they were redacted with: a judged row's JSON is
#: redacted twice (the response cache's copy as it comes in, then the run's row)
_LAST: dict[str, tuple[tuple[str, ...], str]] = {}
_LONG = 2000


def redact(text: str) -> str:
    """`text` with credentials replaced by ***."""
    if not text:
        return text
    known = _SECRETS
    if len(text) >= _LONG and (hit := _LAST.get(text)) is not None and hit[0] is known:
        return hit[1]
    clean = _mask_secrets(text) if known else text
    low = clean.lower()
    for (pattern, repl), hinted in zip(_PATTERNS, _HINTED):
        if hinted.search(low):
            clean = pattern.sub(repl, clean)
    if len(text) >= _LONG:
        if len(_LAST) >= 64:  # the oldest out
            _LAST.pop(next(iter(_LAST), ""), None)
        _LAST[text] = (known, clean)
    return clean


#: query parameters whose value is a credential, whatever the service calls it
_SECRET_PARAMS = re.compile(r"(?i)^(?:.*(?:key|token|secret|password|passwd|pwd|auth|signature|sig|credential)s?"
                            r"|code|session|x-amz-[a-z-]*)$")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")


def _secret_segment(seg: str) -> bool:
    """A path segment that looks like a key: a known key shape, or long and random-looking (letters
    and digits mixed, 20 characters or more, e.g. /v1/ab12cd34.../chat)."""
    if re.fullmatch(r"(?:sk|gsk|xai|pk|rk|key|tok|token)[-_][A-Za-z0-9_-]{6,}", seg):
        return True
    return len(seg) >= 20 and bool(re.search(r"[A-Za-z]", seg)) and bool(re.search(r"\d", seg)) \
        and re.fullmatch(r"[A-Za-z0-9_.~+=-]+", seg) is not None and not re.fullmatch(r"v\d+(?:\.\d+)*", seg)


def mask_url(url: str) -> str:
    """`url` fit to print: its credentials masked (user and password, key-like path segments, the
    values of key-like query parameters), and any known key (`remember_secret`) anywhere in it.
    Every printer of a URL (errors, hints, summaries, the resume command) goes through here, or
    through `mask_urls`, which applies it to each URL in a text."""
    if not url:
        return url
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _mask_secrets(url) if _SECRETS else url
    rest, hash_, fragment = rest.partition("#")
    rest, q, query = rest.partition("?")
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = MASK + "@" + host.rpartition("@")[2]
    path = "/".join(MASK if _secret_segment(seg) else seg for seg in path.split("/"))
    if query:
        parts = []
        for pair in query.split("&"):
            name, eq, value = pair.partition("=")
            parts.append(f"{name}={MASK}" if eq and value and (_SECRET_PARAMS.match(name) or _secret_segment(value))
                         else pair)
        query = "&".join(parts)
    out = f"{scheme}://{host}{slash}{path}{q}{query}{hash_}{fragment}"
    return _mask_secrets(out) if _SECRETS else out


def mask_urls(text: str) -> str:
    """`text` with each URL in it passed through `mask_url` (for lines printed to the operator)."""
    return _URL.sub(lambda m: mask_url(m.group(0)), text) if text and "://" in text else text


def redact_data(value: Any, clean: Callable[[str], str] = redact) -> Any:
    """`value` (str, list, dict, nested) with every string redacted (or passed through `clean`)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: redact_data(v, clean) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v, clean) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message (attach it to SDK loggers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is left to logging itself
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


#: loggers that may write request details (headers, URLs, bodies) at debug level
SDK_LOGGERS = ("openai", "openai._base_client", "anthropic", "anthropic._base_client", "instructor",
               "httpx", "httpx2", "httpcore", "judgeflow")


def install_log_filter() -> None:
    """Redact what the provider SDKs and judgeflow log (idempotent)."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
