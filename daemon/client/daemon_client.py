"""The client library of the daemon, used by the command line (and the language server).

It speaks the wire protocol of ``daemon.protocol``: requests are pydantic models, answers are
parsed into events. Errors come back as ``DaemonError`` with the daemon's own message, and a
daemon that does not answer as ``DaemonUnavailable``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
from pydantic import ValidationError

from daemon.protocol import CompleteRequest, ErrorBody, FixRequest, Health, parse_event
from daemon.settings import Settings

Event = Any


# Without TCP_NODELAY the request body waits for the ACK of its headers (Nagle against delayed
# ACK): 40 ms added to every request on loopback.
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class DaemonError(RuntimeError):
    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class DaemonUnavailable(DaemonError):
    """Nothing answers at the daemon URL, or it stopped answering mid-request."""


def _error_from(response: httpx.Response) -> DaemonError:
    try:
        body = ErrorBody.model_validate_json(response.read())
        return DaemonError(body.error.message, response.status_code, body.error.code)
    except (ValidationError, ValueError):
        return DaemonError(f"the daemon answered HTTP {response.status_code}", response.status_code)


class DaemonClient:
    def __init__(self, url: str, timeout: float = 120.0, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers=auth_headers(token),
            timeout=httpx.Timeout(timeout, connect=2.0),
            trust_env=False,
            transport=httpx.HTTPTransport(socket_options=NO_DELAY),
        )

    @classmethod
    def for_settings(cls, settings: Settings) -> DaemonClient:
        return cls(settings.daemon_url, token=settings.token)

    @staticmethod
    def async_http(settings: Settings, connections: int) -> httpx.AsyncClient:
        """An asyncio HTTP client of the same daemon, reached as ``for_settings`` reaches it
        (its URL, token and transport), for a tool that keeps many requests in flight
        (``assist loadtest``). No overall timeout: the caller bounds each request."""
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(
            base_url=settings.daemon_url,
            headers=auth_headers(settings.token),
            timeout=httpx.Timeout(None, connect=5.0),
            trust_env=False,
            transport=httpx.AsyncHTTPTransport(socket_options=NO_DELAY, limits=limits),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def health(self) -> Health:
        try:
            response = self._http.get("/health", timeout=5.0)
        except httpx.TransportError as exc:
            raise DaemonUnavailable(f"no assist daemon answers at {self.url} ({exc})") from exc
        if response.status_code != 200:
            raise _error_from(response)
        return Health.model_validate_json(response.content)

    def try_health(self) -> Health | None:
        try:
            return self.health()
        except DaemonError:
            return None

    def complete(self, request: CompleteRequest) -> Iterator[Event]:
        """Stream the events of a completion as they arrive."""
        return self._events("/v1/complete", request.model_dump(exclude_none=True))

    def fix(self, request: FixRequest) -> Iterator[Event]:
        """Stream the events of a repair as they arrive."""
        return self._events("/v1/fix", request.model_dump(exclude_none=True))

    def _events(self, path: str, body: dict[str, Any]) -> Iterator[Event]:
        try:
            with self._http.stream("POST", path, json=body) as response:
                if response.status_code != 200:
                    raise _error_from(response)
                for line in response.iter_lines():
                    if line.strip():
                        yield parse_event(line)
        except httpx.TransportError as exc:
            raise DaemonUnavailable(f"the daemon at {self.url} stopped answering ({exc})") from exc

    def stats(self, window: str, by: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/stats?window={window}&by={by}")

    def cache_stats(self) -> dict[str, Any]:
        return self._json("GET", "/v1/cache/stats")

    def cache_clear(self) -> dict[str, Any]:
        return self._json("POST", "/v1/cache/clear")

    def _json(self, method: str, path: str) -> dict[str, Any]:
        try:
            response = self._http.request(method, path)
        except httpx.TransportError as exc:
            raise DaemonUnavailable(f"no assist daemon answers at {self.url} ({exc})") from exc
        if response.status_code != 200:
            raise _error_from(response)
        data: dict[str, Any] = response.json()
        return data
