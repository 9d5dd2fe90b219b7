"""The language server's connection to the daemon: start it, stream from it, survive its loss.
A lost daemon is said once, reconnected in the background, and requests fail fast meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from daemon.client.daemon_client import (
    NO_DELAY,
    DaemonError,
    DaemonUnavailable,
    auth_headers,
    tls_verify,
    transport_error,
)
from daemon.client.launcher import can_autostart, ensure_daemon
from daemon.protocol import ErrorBody, Health, parse_event
from daemon.settings import Settings

log = logging.getLogger(__name__)

# How long a request waits for a daemon that is still starting.
READY_WAIT_S = 60.0
RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 5.0, 10.0)

StatusCallback = Callable[[str, Health | None, str | None], None]
MessageCallback = Callable[[str], None]


class DaemonConnection:
    def __init__(
        self,
        settings: Settings,
        autostart: bool,
        on_status: StatusCallback,
        on_lost: MessageCallback,
    ) -> None:
        self.settings = settings
        self.url = settings.daemon_url
        self.autostart = autostart and can_autostart(settings)
        self.state = "starting"
        self.health: Health | None = None
        self._on_status = on_status
        self._on_lost = on_lost
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=auth_headers(settings.token),
            timeout=httpx.Timeout(120.0, connect=2.0),
            trust_env=False,
            transport=httpx.AsyncHTTPTransport(
                verify=tls_verify(self.url, settings.ca), socket_options=NO_DELAY
            ),
        )

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._connect(), name="assist-daemon-connect")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self._http.aclose()

    async def _connect(self) -> None:
        """Reach a ready daemon, starting it when allowed; retry with backoff until it answers."""
        attempt = 0
        while True:
            self._set("starting", None, None)
            try:
                if self.autostart:
                    health = await asyncio.to_thread(ensure_daemon, self.settings)
                else:
                    health = await self._health()
                self.health = health
                self._set("ready", health, None)
                self._ready.set()
                return
            except (DaemonError, OSError) as exc:
                message = str(exc)
                log.warning("assist daemon unavailable: %s", message)
                self._set("unavailable", None, message)
            delay = RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)]
            attempt += 1
            await asyncio.sleep(delay)

    def _set(self, state: str, health: Health | None, message: str | None) -> None:
        self.state = state
        self._on_status(state, health, message)

    def lost(self, reason: str) -> None:
        """The daemon stopped answering: tell the user once and reconnect in the background."""
        if not self._ready.is_set():
            return  # already reconnecting
        self._ready.clear()
        self.health = None
        self._on_lost(
            f"assist: the daemon at {self.url} stopped answering ({reason}); reconnecting"
            + (" and restarting it" if self.autostart else "")
        )
        self.start()

    async def wait_ready(self, timeout: float = READY_WAIT_S) -> bool:
        if self._ready.is_set():
            return True
        self.start()
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            return False
        return True

    # -- requests --------------------------------------------------------------------------
    async def _health(self) -> Health:
        try:
            response = await self._http.get("/health", timeout=5.0)
        except httpx.TransportError as exc:
            raise transport_error(self.url, exc, f"no assist daemon answers at {self.url}") from exc
        if response.status_code != 200:
            raise DaemonError(f"the daemon answered HTTP {response.status_code}")
        return Health.model_validate_json(response.content)

    async def stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[Any]:
        """The events of one streamed request. Raises DaemonError (4xx) or DaemonUnavailable."""
        if not await self.wait_ready():
            raise DaemonUnavailable(f"the assist daemon at {self.url} is not available")
        try:
            async with self._http.stream("POST", path, json=body) as response:
                if response.status_code != 200:
                    raw = await response.aread()
                    try:
                        error = ErrorBody.model_validate_json(raw).error
                        raise DaemonError(error.message, response.status_code, error.code)
                    except ValueError:
                        raise DaemonError(
                            f"the daemon answered HTTP {response.status_code}", response.status_code
                        ) from None
                async for line in response.aiter_lines():
                    if line.strip():
                        yield parse_event(line)
        except httpx.TransportError as exc:
            self.lost(type(exc).__name__)
            raise DaemonUnavailable(f"the daemon at {self.url} stopped answering") from exc

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        if not await self.wait_ready(timeout=5.0):
            return None
        try:
            response = await self._http.post(path, json=body, timeout=10.0)
        except httpx.TransportError as exc:
            self.lost(type(exc).__name__)
            return None
        if response.status_code != 200:
            log.warning("daemon answered %s on %s: %s", response.status_code, path, response.text)
            return None
        data: dict[str, Any] = response.json()
        return data
