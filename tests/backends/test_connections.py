"""The provider SDK's HTTP transport: aiohttp when installed, httpx when asked or when it must be.

The lifecycle across event loops (closed with the loop, with `aclose`, by the next loop, at
exit) is tested end to end in test_sync_facade.py (one Judge, two loops, three ways)."""

from __future__ import annotations

import asyncio

import pytest

from judgeflow.backends.connections import LoopClient, check_transport, sdk_client
from judgeflow.backends.llm import classify
from judgeflow.build import build
from judgeflow.cli import build_parser
from judgeflow.cli.flags import resume_command, to_spec
from judgeflow.errors import ConfigError

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")


def transport_of(client) -> str:
    """The HTTP stack under an SDK client: the SDKs' vendored aiohttp transport, or httpx's own
    (under judgeflow's own layers: the request deadline, the rate limiter)."""
    transport = client._client._transport
    while hasattr(transport, "inner"):
        transport = transport.inner
    return "aiohttp" if "aiohttp" in type(transport).__module__ else "httpx"


@pytest.mark.parametrize(("module", "cls"), [("openai", "AsyncOpenAI"), ("anthropic", "AsyncAnthropic")])
def test_auto_takes_aiohttp_and_httpx_is_there_when_asked(module: str, cls: str) -> None:
    url = "http://127.0.0.1:9/v1"
    assert transport_of(sdk_client(module, cls, api_key="k", base_url=url, timeout=5.0)) == "aiohttp"
    assert transport_of(sdk_client(module, cls, transport="aiohttp", api_key="k", base_url=url)) == "aiohttp"
    assert transport_of(sdk_client(module, cls, transport="httpx", api_key="k", base_url=url)) == "httpx"


def test_credentials_in_the_base_url_keep_httpx() -> None:
    """aiohttp refuses URL credentials beside the SDK's Authorization header (every call failed
    with a connection error); httpx sends them."""
    client = sdk_client("openai", "AsyncOpenAI", api_key="k", base_url="http://user:pw@127.0.0.1:9/v1")
    assert transport_of(client) == "httpx"


def test_a_given_http_client_is_used_as_given() -> None:
    import httpx2

    given = httpx2.AsyncClient()
    assert sdk_client("openai", "AsyncOpenAI", api_key="k", base_url="http://127.0.0.1:9/v1",
                      http_client=given)._client is given


def test_aiohttp_asked_for_but_missing_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(**_: object) -> None:
        raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    monkeypatch.setattr(openai, "DefaultAioHttpClient", missing)
    with pytest.raises(ConfigError, match=r"pip install 'openai\[aiohttp\]'"):
        sdk_client("openai", "AsyncOpenAI", transport="aiohttp", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert transport_of(sdk_client("openai", "AsyncOpenAI", api_key="k", base_url="http://127.0.0.1:9/v1")) == "httpx"
    with pytest.raises(ConfigError, match="is not one of auto, aiohttp, httpx"):
        check_transport("h2")


def test_a_refused_connection_is_systemic_over_either_transport() -> None:
    """The vendored aiohttp transport reports a refused connect as a connect *timeout*; a timeout
    is not systemic (the run would have gone on retrying a dead port), a refused connect is."""
    async def refused(transport: str) -> BaseException:
        client = sdk_client("openai", "AsyncOpenAI", transport=transport, api_key="k", max_retries=0,
                            base_url="http://127.0.0.1:9/v1")
        try:
            await client.models.list()
        except Exception as e:  # noqa: BLE001 - the SDK's error is what is classified
            return e
        finally:
            await client.close()
        raise AssertionError("port 9 answered")

    for transport in ("aiohttp", "httpx"):
        error = asyncio.run(refused(transport))
        assert classify(error) is not None and classify(error)[0] == "connection", (transport, repr(error))
    assert classify(openai.APITimeoutError(request=__import__("httpx2").Request("POST", "http://x"))) is None


def test_the_cli_flag_reaches_the_client_and_the_resume_command() -> None:
    args = build_parser().parse_args(["run", "in.jsonl", "-o", "out.jsonl", "--model", "openai/gpt-4o-mini",
                                      "--base-url", "http://127.0.0.1:9/v1", "--http-transport", "httpx"])
    settings = to_spec(args)
    assert settings.judging.judges()[0].client.http_transport == "httpx"
    assert "--http-transport httpx" in resume_command(settings)
    client = build(settings.judging).backend.client
    assert isinstance(client.sdk, LoopClient)
    raw = asyncio.run(client.sdk.get())
    assert transport_of(raw) == "httpx"


def test_every_sdk_client_shares_one_verifying_tls_context(monkeypatch) -> None:
    """Each SDK client used to load the CA store itself (about 70 ms of CPU a client, again in every
    event loop and process); now one context, made as httpx2 makes its default, serves them all.
    Counted where every context is born (`ssl.SSLContext.__new__`), whichever httpx2 makes it
    (2.14 on Python 3.10 builds it itself, 2.16 asks httpcore2)."""
    import ssl

    import aiohttp  # noqa: F401  (aiohttp makes its own two contexts once, at import)
    import anthropic  # noqa: F401
    import openai  # noqa: F401

    from judgeflow.backends import connections

    made = []
    real = ssl.SSLContext.__new__
    monkeypatch.setattr(ssl.SSLContext, "__new__", lambda cls, *a, **k: made.append(cls) or real(cls, *a, **k))
    connections.tls_context.cache_clear()
    try:
        clients = [sdk_client(module, cls, transport=t, api_key="sk-test", base_url="http://127.0.0.1:9/v1")
                   for module, cls in (("openai", "AsyncOpenAI"), ("anthropic", "AsyncAnthropic"))
                   for t in ("aiohttp", "httpx")]
        assert {transport_of(c) for c in clients} == {"aiohttp", "httpx"}
        assert len(made) == 1, f"{len(made)} TLS contexts made for {len(clients)} clients"
        ctx = connections.tls_context()
        assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
        assert ctx.cert_store_stats()["x509_ca"] > 0  # the system's CA store is loaded
    finally:
        connections.tls_context.cache_clear()
