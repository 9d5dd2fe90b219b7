"""TLS: the settings that turn it on, the daemon's checks before it starts, and the clients'
verification against a private CA, over real handshakes with a small local HTTPS server."""

from __future__ import annotations

import http.server
import json
import logging
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.client.daemon_client import (
    DaemonClient,
    DaemonError,
    DaemonUnavailable,
    DaemonUntrusted,
    tls_verify,
)
from daemon.http.serve import ServeError, TlsFiles, load_tls
from daemon.settings import SettingsError, load_settings
from lsp.options import parse_options
from tests.unit.certificates import Certificates, make_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("other"))


# -- settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "missing"), [("tls_cert", "tls_key"), ("tls_key", "tls_cert")])
def test_a_certificate_without_its_key_is_refused(certs, given, missing):
    with pytest.raises(SettingsError) as refused:
        load_settings(**{given: getattr(certs, given.removeprefix("tls_"))})
    assert f"{given} is set without {missing}" in str(refused.value)
    assert "--tls-cert FILE" in str(refused.value) and "--tls-key FILE" in str(refused.value)


def test_the_daemon_url_is_https_with_tls(certs):
    plain = load_settings(port=9100)
    assert plain.daemon_url == "http://127.0.0.1:9100"
    secure = load_settings(port=9100, tls_cert=certs.cert, tls_key=certs.key)
    assert secure.daemon_url == "https://127.0.0.1:9100"
    everywhere = load_settings(host="0.0.0.0", port=9100, tls_cert=certs.cert, tls_key=certs.key)
    assert everywhere.daemon_url == "https://127.0.0.1:9100"
    named = load_settings(
        url="https://gpu-box.example:9100/", tls_cert=certs.cert, tls_key=certs.key
    )
    assert named.daemon_url == "https://gpu-box.example:9100"


def test_the_tls_settings_come_from_the_environment(certs, monkeypatch):
    monkeypatch.setenv("ASSIST_TLS_CERT", str(certs.cert))
    monkeypatch.setenv("ASSIST_TLS_KEY", str(certs.key))
    monkeypatch.setenv("ASSIST_CA", str(certs.ca))
    monkeypatch.setenv("ASSIST_ALLOW_PLAINTEXT", "true")
    settings = load_settings()
    assert (settings.tls_cert, settings.tls_key, settings.ca) == (certs.cert, certs.key, certs.ca)
    assert settings.allow_plaintext is True


def test_a_ca_file_that_is_missing_or_not_pem_is_a_clear_error(tmp_path):
    with pytest.raises(SettingsError, match=r"ca: .*No such file or directory"):
        load_settings(ca=tmp_path / "missing.pem")
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    with pytest.raises(SettingsError, match=r"ca: .*junk.pem as the CA file .*PEM certificate"):
        load_settings(ca=tmp_path / "junk.pem")


def test_the_ca_path_may_start_with_a_tilde(certs, monkeypatch):
    monkeypatch.setenv("HOME", str(certs.ca.parent))
    assert load_settings(ca=Path("~/ca.pem")).ca == certs.ca


# -- the daemon's checks before it starts ----------------------------------------------------


def test_loopback_serves_plain_http_without_tls():
    assert load_tls(load_settings(host="127.0.0.1")) is None


def test_off_loopback_without_tls_the_daemon_refuses_and_says_how_to_add_it():
    with pytest.raises(ServeError) as refused:
        load_tls(load_settings(host="0.0.0.0"))
    message = str(refused.value)
    assert message.startswith("refusing to listen on 0.0.0.0 without TLS")
    for advice in ("--tls-cert cert.pem --tls-key key.pem", "--ca", "--allow-plaintext"):
        assert advice in message


def test_allow_plaintext_serves_off_loopback_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="daemon.http.serve"):
        assert load_tls(load_settings(host="0.0.0.0", allow_plaintext=True)) is None
    assert "plain HTTP on 0.0.0.0 (--allow-plaintext)" in caplog.text


def test_a_certificate_and_its_key_are_loaded(certs):
    settings = load_settings(host="0.0.0.0", tls_cert=certs.cert, tls_key=certs.key)
    assert load_tls(settings) == TlsFiles(certs.cert, certs.key)


@pytest.mark.parametrize("which", ["cert", "key"])
def test_a_missing_certificate_or_key_file_is_a_clear_error(certs, tmp_path, which):
    files = {"tls_cert": certs.cert, "tls_key": certs.key, f"tls_{which}": tmp_path / "gone.pem"}
    what = "certificate" if which == "cert" else "private key"
    with pytest.raises(ServeError, match=f"cannot read the TLS {what} .*gone.pem: No such file"):
        load_tls(load_settings(**files))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_key_file_is_a_clear_error(certs, tmp_path):
    key = tmp_path / "key.pem"
    key.write_bytes(certs.key.read_bytes())
    key.chmod(0)
    with pytest.raises(ServeError, match=r"cannot read the TLS private key .*Permission denied"):
        load_tls(load_settings(tls_cert=certs.cert, tls_key=key))


def test_a_certificate_that_is_not_pem_is_a_clear_error(certs, tmp_path):
    junk = tmp_path / "cert.pem"
    junk.write_text("not a certificate\n")
    with pytest.raises(ServeError, match=r"cannot serve HTTPS with the certificate .*PEM files"):
        load_tls(load_settings(tls_cert=junk, tls_key=certs.key))


def test_a_key_of_another_certificate_is_a_clear_error(certs, other_ca):
    with pytest.raises(ServeError, match="the key the private key of the certificate"):
        load_tls(load_settings(tls_cert=certs.cert, tls_key=other_ca.key))


# -- clients --------------------------------------------------------------------------------


def test_clients_verify_an_https_daemon_against_the_ca_or_the_systems_cas(certs):
    assert tls_verify("http://127.0.0.1:8765", certs.ca) is False  # nothing to verify
    private = tls_verify("https://127.0.0.1:8765", certs.ca)
    assert isinstance(private, ssl.SSLContext)
    assert private.verify_mode == ssl.CERT_REQUIRED and private.check_hostname
    assert [c["subject"] for c in private.get_ca_certs()] == [_subject(certs.ca)]
    system = tls_verify("https://127.0.0.1:8765", None)
    assert isinstance(system, ssl.SSLContext) and system.verify_mode == ssl.CERT_REQUIRED


def _subject(pem: Path) -> object:
    context = ssl.create_default_context(cafile=str(pem))
    return context.get_ca_certs()[0]["subject"]


class _Stats(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"entries": 1}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def _serve(certs: Certificates | None) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stats)
    if certs is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certs.cert, certs.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def https_port(certs) -> Iterator[int]:
    yield from _serve(certs)


@pytest.fixture
def http_port() -> Iterator[int]:
    yield from _serve(None)


def test_a_client_with_the_ca_reaches_an_https_server(certs, https_port):
    with DaemonClient(f"https://127.0.0.1:{https_port}", ca=certs.ca) as client:
        assert client.cache_stats() == {"entries": 1}
    settings = load_settings(port=https_port, tls_cert=certs.cert, tls_key=certs.key, ca=certs.ca)
    with DaemonClient.for_settings(settings) as client:
        assert client.cache_stats() == {"entries": 1}


@pytest.mark.parametrize("ca", ["other", "system"])
def test_a_client_without_the_ca_refuses_the_server_and_says_why(other_ca, https_port, ca):
    url = f"https://127.0.0.1:{https_port}"
    with DaemonClient(url, ca=other_ca.ca if ca == "other" else None) as client:
        with pytest.raises(DaemonUntrusted) as refused:
            client.cache_stats()
        # Not "no daemon": a client that would start one must not try.
        with pytest.raises(DaemonUntrusted):
            client.try_health()
    message = str(refused.value)
    assert message.startswith(f"the daemon at {url} presented a certificate this client does not")
    assert "certificate verify failed" not in message  # OpenSSL's words, said plainly instead
    assert "--ca FILE" in message and "ASSIST_CA" in message


def test_a_certificate_for_another_name_is_refused(tmp_path):
    localhost = make_certificates(tmp_path, "localhost")
    for port in _serve(localhost):
        with DaemonClient(f"https://localhost:{port}", ca=localhost.ca) as client:
            assert client.cache_stats()
        with (
            DaemonClient(f"https://127.0.0.1:{port}", ca=localhost.ca) as client,
            pytest.raises(DaemonUntrusted, match="IP address mismatch"),
        ):
            client.cache_stats()


def test_plain_http_to_an_https_server_fails_and_hints_at_https(https_port):
    with DaemonClient(f"http://127.0.0.1:{https_port}") as client:
        with pytest.raises(DaemonUnavailable, match="its URL starts with https://"):
            client.cache_stats()
        assert client.try_health() is None


def test_https_to_a_plain_http_server_fails_and_hints_at_http(certs, http_port):
    with (
        DaemonClient(f"https://127.0.0.1:{http_port}", ca=certs.ca) as client,
        pytest.raises(DaemonUnavailable, match="its URL starts with http://"),
    ):
        client.cache_stats()


def test_the_language_server_takes_a_ca_and_checks_it(certs, tmp_path):
    options, problems = parse_options({"ca": str(certs.ca)})
    assert options.ca == str(certs.ca) and not problems
    options, problems = parse_options({"daemonUrl": "https://x:1", "ca": str(tmp_path / "no.pem")})
    assert options.ca is None and options.daemon_url == "https://x:1"
    assert len(problems) == 1 and "assist setting ca=" in problems[0]
    assert "No such file or directory" in problems[0]


def test_the_language_servers_ca_reaches_its_daemon_settings(certs):
    from lsp.server import AssistServer

    server = AssistServer(load_settings())
    server.options, _ = parse_options({"daemonUrl": "https://gpu-box:8765", "ca": str(certs.ca)})
    settings = server.daemon_settings()
    assert settings.daemon_url == "https://gpu-box:8765" and settings.ca == certs.ca


def test_daemon_errors_are_one_family():
    assert issubclass(DaemonUntrusted, DaemonError)
    assert not issubclass(DaemonUntrusted, DaemonUnavailable)
