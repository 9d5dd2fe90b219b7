"""HTTPS end to end: a daemon serving a certificate made here (trustme) on the real model, and
real clients that verify it (httpx, the CLI, the language server); plain HTTP to it fails."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from daemon.client.daemon_client import DaemonClient
from daemon.protocol import CompleteRequest, DoneEvent, parse_event
from daemon.tokens import add_user
from tests.e2e.conftest import RunningDaemon, free_port, start_daemon
from tests.e2e.documents import LOAD_CONFIG, complete_body, end_position, unique
from tests.e2e.test_cli import assist
from tests.e2e.test_lsp import SERVER, Recorder, end_of, inline_params, open_document
from tests.unit.certificates import Certificates, make_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def secure(
    certs: Certificates, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningDaemon]:
    # The launcher starts it with ASSIST_TLS_CERT and ASSIST_TLS_KEY, and waits for its /health
    # over HTTPS, verified with the CA.
    running = start_daemon(
        tmp_path_factory.mktemp("secure"), tls_cert=certs.cert, tls_key=certs.key, ca=certs.ca
    )
    yield running
    running.stop()


def verified(certs: Certificates) -> httpx.Client:
    """A plain httpx client that trusts the private CA and nothing else."""
    context = ssl.create_default_context(cafile=str(certs.ca))
    return httpx.Client(verify=context, trust_env=False, timeout=120)


def test_health_and_a_completion_over_verified_https(secure, certs):
    assert secure.url.startswith("https://127.0.0.1:")
    assert "HTTPS with" in secure.log.read_text()  # the start-up lines say so
    text = unique(LOAD_CONFIG)
    with verified(certs) as http:
        health = http.get(f"{secure.url}/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        with http.stream(
            "POST", f"{secure.url}/v1/complete", json=complete_body(text, max_tokens=8)
        ) as answer:
            assert answer.status_code == 200
            events = [parse_event(line) for line in answer.iter_lines() if line.strip()]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.text and not done.cached
    # The client library, verified with the same CA.
    line, column = end_position(text)
    request = CompleteRequest(text=text, line=line, column=column, path="app.py", max_tokens=8)
    with DaemonClient(secure.url, ca=certs.ca) as client:
        assert client.health().status == "ok"
        again = list(client.complete(request))[-1]
    assert isinstance(again, DoneEvent) and again.text


def test_plain_http_to_the_tls_port_fails(secure, certs):
    port = secure.settings.port
    with httpx.Client(trust_env=False, timeout=10) as plain, pytest.raises(httpx.TransportError):
        plain.get(f"http://127.0.0.1:{port}/health")
    with verified(certs) as http:  # and it still serves HTTPS
        assert http.get(f"{secure.url}/health").status_code == 200


def test_the_cli_verifies_the_daemon_with_the_ca(secure, certs, tmp_path):
    source = tmp_path / "app.py"
    source.write_text(unique(LOAD_CONFIG))
    line = str(len(source.read_text().split("\n")))
    where = ["--line", line, "--column", "5", "--max-tokens", "8", "--url", secure.url]
    answered = assist("complete", str(source), *where, "--ca", str(certs.ca))
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.strip()
    refused = assist("complete", str(source), *where)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert f"the daemon at {secure.url} presented a certificate this client does not trust" in (
        refused.stderr
    )
    assert "--ca FILE" in refused.stderr


def test_a_non_loopback_daemon_without_tls_refuses_to_start(tmp_path):
    tokens = tmp_path / "tokens.toml"
    add_user(tokens, "alice")
    port = str(free_port())
    out = assist("serve", "--host", "0.0.0.0", "--port", port, "--tokens", str(tokens))
    assert out.returncode == 1
    assert "refusing to listen on 0.0.0.0 without TLS" in out.stderr
    assert "--tls-cert cert.pem --tls-key key.pem" in out.stderr
    assert "--allow-plaintext" in out.stderr
    assert "listening" not in out.stdout  # refused before the model was loaded


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[LanguageClient]:
    env = {**os.environ, "ASSIST_CACHE_DIR": str(tmp_path / "state")}
    client = await ClientServerConfig(server_command=SERVER, server_env=env).start()
    assert isinstance(client, LanguageClient)
    client.recorder = Recorder(client)  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def _initialize(client: LanguageClient, workspace: Path, options: dict[str, object]) -> None:
    workspace.mkdir()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=workspace.as_uri(),
            initialization_options={
                "autostart": False,
                "debounceMs": 0,
                "maxTokens": 8,
                **options,
            },
        )
    )


async def _status(client: LanguageClient, state: str) -> dict[str, object]:
    for _ in range(600):
        for status in client.recorder.status:  # type: ignore[attr-defined]
            if status["state"] == state:
                return status  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no {state} status: {client.recorder.status}")  # type: ignore[attr-defined]


async def test_the_language_server_completes_over_https_with_the_ca(
    secure, certs, editor, tmp_path
):
    await _initialize(editor, tmp_path / "project", {"daemonUrl": secure.url, "ca": str(certs.ca)})
    await _status(editor, "ready")
    text = unique(LOAD_CONFIG)
    uri = open_document(editor, tmp_path / "project" / "app.py", text)
    answer = await editor.text_document_inline_completion_async(inline_params(uri, end_of(text)))
    assert answer is not None and answer.items


async def test_the_language_server_without_the_ca_says_what_to_set(secure, editor, tmp_path):
    await _initialize(editor, tmp_path / "project", {"daemonUrl": secure.url})
    status = await _status(editor, "unavailable")
    assert "does not trust" in str(status["message"]) and "`ca` setting" in str(status["message"])
