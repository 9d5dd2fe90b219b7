"""Find the running daemon, or start one detached and wait until it is ready.
Only at the local default address; a lock file makes two clients start one daemon."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from daemon.client.daemon_client import DaemonClient, DaemonError, DaemonUnavailable
from daemon.protocol import Health
from daemon.settings import DEFAULT_PORT, Settings, is_loopback


def can_autostart(settings: Settings) -> bool:
    return settings.url is None and is_loopback(settings.host)


def daemon_env(settings: Settings) -> dict[str, str]:
    """The environment of a started daemon: the caller's settings as ASSIST_* variables."""
    env = dict(os.environ)
    for name, value in settings.model_dump().items():
        if value is not None and name != "url":
            # Lists are read back from the environment as JSON.
            env[f"ASSIST_{name.upper()}"] = (
                json.dumps(value) if isinstance(value, list) else str(value)
            )
    return env


def daemon_flags(settings: Settings) -> str:
    """The flags that point another command at the daemon these settings point at."""
    ca = f" --ca {shlex.quote(str(settings.ca))}" if settings.ca else ""
    if settings.url:
        return f" --url {shlex.quote(settings.url)}{ca}"
    flags = "" if settings.host == "127.0.0.1" else f" --host {shlex.quote(settings.host)}"
    return flags + ("" if settings.port == DEFAULT_PORT else f" --port {settings.port}") + ca


def serve_command(settings: Settings) -> str:
    """The `assist serve` that starts a daemon where these settings look for one, quoted.

    Off loopback the daemon must bind an outside address and requires a tokens file and TLS;
    an https:// URL wants TLS on loopback too.
    """
    parts = urlsplit(settings.daemon_url)
    host = parts.hostname or settings.host
    port = parts.port or (443 if parts.scheme == "https" else 80)
    flags = "" if port == DEFAULT_PORT else f" --port {port}"
    if not is_loopback(host):
        flags = f" --host 0.0.0.0{flags} --tokens tokens.toml"
    elif host not in ("127.0.0.1", "localhost"):
        flags = f" --host {shlex.quote(host)}{flags}"
    if parts.scheme == "https" or not is_loopback(host):
        flags += " --tls-cert cert.pem --tls-key key.pem"
    return f"`assist serve{flags}`"


def _https_hint(settings: Settings) -> str:
    """For an http:// URL off loopback: the daemon there serves HTTPS."""
    parts = urlsplit(settings.daemon_url)
    if parts.scheme == "https" or is_loopback(parts.hostname or settings.host):
        return ""
    https = parts._replace(scheme="https").geturl()
    return f", and reach it at {https} (off loopback it serves HTTPS)"


def log_path(settings: Settings) -> Path:
    return settings.cache_dir / f"daemon-{settings.port}.log"


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def ensure_daemon(settings: Settings, wait_s: float = 180.0) -> Health:
    """Return the health of a ready daemon, starting one when allowed and none answers."""
    with DaemonClient.for_settings(settings) as client:
        try:
            health = client.health()
        except DaemonUnavailable:
            health = None
        except DaemonError as exc:
            if exc.status == 401:
                raise DaemonError(
                    f"the daemon at {settings.daemon_url} needs a token: set ASSIST_TOKEN, "
                    f"`token` in the config file, or --token",
                    401,
                    "unauthorized",
                ) from exc
            raise
        if health is not None and health.status == "ok":
            return health
        if not can_autostart(settings):
            raise DaemonUnavailable(
                f"no assist daemon answers at {settings.daemon_url}; start it there with "
                f"{serve_command(settings)}{_https_hint(settings)}"
            )
        settings.cache_dir.mkdir(parents=True, exist_ok=True)
        lock_file = settings.cache_dir / f"daemon-{settings.port}.lock"
        with lock_file.open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            health = client.try_health()
            if health is not None and health.status == "ok":
                return health
            process = spawn_daemon(settings, log_path(settings))
            return wait_ready(client, process, log_path(settings), wait_s)


def spawn_daemon(settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    """Start `assist serve` detached from this process, its output appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        return subprocess.Popen(
            # -P: a `daemon` folder in the current directory must not shadow ours.
            [sys.executable, "-P", "-m", "daemon.cli", "serve"],
            cwd=str(settings.cache_dir),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=daemon_env(settings),
            start_new_session=True,
            close_fds=True,
        )


def wait_ready(
    client: DaemonClient, process: subprocess.Popen[bytes], log: Path, wait_s: float
) -> Health:
    """Poll /health until the daemon is ready; fail early, with its log, if it exits."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        health = client.try_health()
        if health is not None and health.status == "ok":
            return health
        if process.poll() is not None:
            raise DaemonUnavailable(
                f"the daemon exited with status {process.returncode} while starting; "
                f"its log ({log}) ends with:\n{_tail(log)}"
            )
        time.sleep(0.1)
    raise DaemonUnavailable(f"the daemon did not become ready within {wait_s:.0f} s; see {log}")


def free_port() -> int:
    """A loopback port nothing listens on now (for daemons started by tests and benchmarks)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def launch(
    settings: Settings, log: Path, wait_s: float = 180.0
) -> tuple[subprocess.Popen[bytes], Health]:
    """Start a daemon with ``settings`` and wait until it is ready; kill it if it never is."""
    process = spawn_daemon(settings, log)
    try:
        with DaemonClient.for_settings(settings) as client:
            return process, wait_ready(client, process, log, wait_s)
    except BaseException:
        process.kill()
        process.wait()
        raise
