"""Start the daemon: check the tokens, bind, build its parts, announce them, and serve."""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
from collections.abc import Callable

import uvicorn

from daemon.http.app import create_app
from daemon.http.assembly import build_daemon
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


def serve(settings: Settings, announce: Callable[[str], None]) -> None:
    tokens = load_tokens(settings)
    sock = bind_socket(settings.host, settings.port)
    daemon = build_daemon(settings)
    runtime = daemon.runtime
    facts = runtime.model.facts
    stats = runtime.cache.stats()
    if facts.gpu_offload:
        offload = f"{facts.n_gpu_layers} of {facts.n_layers} layers on the GPU"
    else:
        offload = "no GPU offload in this llama.cpp build"
    engine = runtime.engine
    announce(
        f"assist daemon listening on {settings.daemon_url} (pid {os.getpid()})\n"
        f"  model    {facts.name} [{facts.source}] {facts.path}\n"
        f"  format   {facts.prompt_format}, context {facts.n_ctx} tokens, "
        f"loaded in {facts.load_seconds:.2f} s\n"
        f"  backend  {facts.backend} ({offload}, {facts.n_threads} threads, "
        f"flash attention {facts.flash_attn})\n"
        f"  engine   {engine.summary()}\n"
        f"  cache    {stats['path']} ({stats['entries']} entries, {runtime.cache.status})\n"
        f"  access   "
        + (
            f"tokens for {len(tokens.users)} users from {settings.tokens}"
            if tokens
            else "loopback, no tokens"
        )
    )
    config = uvicorn.Config(
        create_app(daemon, tokens),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
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
