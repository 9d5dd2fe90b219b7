"""Start the daemon: check the tokens and TLS, bind, build its parts, announce them, and serve."""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from daemon.http.app import create_app
from daemon.http.assembly import Daemon, build_daemon
from daemon.settings import Settings, is_loopback
from daemon.tokens import TokensError, TokenStore

log = logging.getLogger(__name__)


class ServeError(RuntimeError):
    """The daemon cannot start; the message says why and what to do."""


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # proto must be IPPROTO_TCP: asyncio only turns Nagle off (TCP_NODELAY) on connections
    # accepted from such a socket, and with Nagle on, every kept-alive request waits 40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(
                f"port {port} on {host} is already in use: another assist daemon may be running "
                f"(check with `assist doctor --port {port}`), or choose another port with --port"
            ) from exc
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def load_tokens(settings: Settings) -> TokenStore | None:
    """The tokens file, required anywhere but loopback."""
    if settings.tokens is None:
        if not is_loopback(settings.host):
            raise ServeError(
                f"refusing to listen on {settings.host} without tokens: a non-loopback address "
                f"exposes the model and its cache to the network. Create per-user tokens with "
                f"`assist tokens add NAME --tokens tokens.toml` and start with "
                f"--tokens tokens.toml, or use --host 127.0.0.1"
            )
        return None
    try:
        return TokenStore(settings.tokens)
    except (TokensError, OSError) as exc:
        raise ServeError(str(exc)) from exc


@dataclass(frozen=True)
class TlsFiles:
    """The certificate and private key the daemon serves HTTPS with."""

    cert: Path
    key: Path


def load_tls(settings: Settings) -> TlsFiles | None:
    """The TLS certificate and key, checked before the model loads; off loopback, TLS is
    required unless a TLS proxy in front of the daemon terminates it (``allow_plaintext``)."""
    if settings.tls_cert is None or settings.tls_key is None:
        _plaintext_allowed(settings)
        return None
    files = TlsFiles(settings.tls_cert.expanduser(), settings.tls_key.expanduser())
    for what, path in (("certificate", files.cert), ("private key", files.key)):
        try:
            path.read_bytes()
        except OSError as exc:
            raise ServeError(f"cannot read the TLS {what} {path}: {exc.strerror or exc}") from exc
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(files.cert, files.key)
    except ssl.SSLError as exc:
        raise ServeError(
            f"cannot serve HTTPS with the certificate {files.cert} and the key {files.key} "
            f"({exc}): both must be PEM files, the key the private key of the certificate"
        ) from exc
    return files


def _plaintext_allowed(settings: Settings) -> None:
    if is_loopback(settings.host):
        return
    if settings.allow_plaintext:
        log.warning(
            "serving plain HTTP on %s (--allow-plaintext): tokens and code cross the network "
            "unencrypted unless a TLS proxy in front of the daemon is the only way to it",
            settings.host,
        )
        return
    raise ServeError(
        f"refusing to listen on {settings.host} without TLS: tokens and code would cross the "
        f"network in clear text. Start with --tls-cert cert.pem --tls-key key.pem (a "
        f"certificate for the name clients connect to, and its key; clients then use an "
        f"https:// URL, with --ca ca.pem for a private CA), or with --allow-plaintext when a "
        f"TLS proxy in front of the daemon terminates HTTPS, or use --host 127.0.0.1"
    )


def _access(settings: Settings, tokens: TokenStore | None, tls: TlsFiles | None) -> str:
    """Who may reach the daemon and how, for its start-up lines."""
    who = (
        f"tokens for {len(tokens.users)} users from {settings.tokens}"
        if tokens
        else "loopback, no tokens"
    )
    if tls is not None:
        return f"{who}, HTTPS with {tls.cert}"
    if not is_loopback(settings.host):
        return f"{who}, plain HTTP for a TLS proxy (--allow-plaintext)"
    return who


def startup_lines(daemon: Daemon, tokens: TokenStore | None, tls: TlsFiles | None) -> str:
    """Where the daemon listens and what it runs on: model, backend, engine, memory, cache."""
    settings = daemon.settings
    runtime = daemon.runtime
    facts = runtime.model.facts
    stats = runtime.cache.stats()
    if facts.gpu_offload:
        offload = f"{facts.n_gpu_layers} of {facts.n_layers} layers on the GPU"
    else:
        offload = "no GPU offload in this llama.cpp build"
    access = _access(settings, tokens, tls)
    lines = [
        f"assist daemon listening on {settings.daemon_url} (pid {os.getpid()})",
        f"  model    {facts.name} [{facts.source}] {facts.path}",
        f"  format   {facts.prompt_format}, context {facts.n_ctx} tokens, "
        f"loaded in {facts.load_seconds:.2f} s",
        f"  backend  {facts.backend} ({offload}, {facts.n_threads} threads, "
        f"flash attention {facts.flash_attn})",
        f"  engine   {runtime.engine.summary()}",
    ]
    if daemon.sizing is not None:
        lines.append(f"  memory   {daemon.sizing.line()}")
    lines.append(f"  cache    {stats['path']} ({stats['entries']} entries, {runtime.cache.status})")
    lines.append(f"  access   {access}")
    return "\n".join(lines)


def serve(settings: Settings, announce: Callable[[str], None]) -> None:
    tokens = load_tokens(settings)
    tls = load_tls(settings)
    sock = bind_socket(settings.host, settings.port)
    daemon = build_daemon(settings)
    announce(startup_lines(daemon, tokens, tls))
    config = uvicorn.Config(
        create_app(daemon, tokens),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
        ssl_certfile=tls.cert if tls else None,
        ssl_keyfile=tls.key if tls else None,
    )
    server = uvicorn.Server(config)
    # uvicorn stops on SIGTERM, then raises it again for the handler that was there before it:
    # the default one would end the process there, before the daemon is closed (its KV states
    # written to disk, its files closed). This one asks the server to stop, and lets it close.
    previous = signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    try:
        server.run(sockets=[sock])
    finally:
        daemon.close()
        sock.close()
        signal.signal(signal.SIGTERM, previous)
