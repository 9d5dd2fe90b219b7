"""The client library of the daemon, used by the command line (and the language server).
Requests are ``daemon.protocol`` models; failures are ``DaemonError`` and its kinds."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
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


class DaemonUntrusted(DaemonError):
    """The daemon's certificate did not verify: a daemon answers, but not one to send code to."""


def tls_verify(url: str, ca: Path | None) -> ssl.SSLContext | bool:
    """What a connection to the daemon verifies its certificate against: the CA file, else the
    system's CAs. An http:// URL has no certificate to verify (and loads no CAs: 35 ms)."""
    if not url.startswith("https://"):
        return False
    return ssl.create_default_context(cafile=str(ca) if ca else None)


# A connection the server accepted and dropped: what an HTTPS server does with plain HTTP.
_DROPPED = (httpx.RemoteProtocolError, httpx.ReadError)


def transport_error(url: str, exc: httpx.TransportError, what: str) -> DaemonError:
    """The error for a connection that failed: ``what`` happened, why, and what to change."""
    cause = _ssl_cause(exc)
    if isinstance(cause, ssl.SSLCertVerificationError):
        return DaemonUntrusted(
            f"the daemon at {url} presented a certificate this client does not trust "
            f"({cause.verify_message}): name the CA that signed it with --ca FILE (the `ca` "
            f"setting, ASSIST_CA), and reach the daemon by a name its certificate holds"
        )
    hint = ""
    if cause is not None:
        hint = "; if the daemon serves plain HTTP, its URL starts with http://"
    elif url.startswith("http://") and isinstance(exc, _DROPPED):
        hint = "; if the daemon serves HTTPS (--tls-cert), its URL starts with https://"
    return DaemonUnavailable(f"{what} ({exc}){hint}")


def _ssl_cause(exc: BaseException) -> ssl.SSLError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _error_from(response: httpx.Response) -> DaemonError:
    try:
        body = ErrorBody.model_validate_json(response.read())
        return DaemonError(body.error.message, response.status_code, body.error.code)
    except (ValidationError, ValueError):
        return DaemonError(f"the daemon answered HTTP {response.status_code}", response.status_code)


class DaemonClient:
    def __init__(
        self,
        url: str,
        timeout: float = 120.0,
        token: str | None = None,
        ca: Path | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers=auth_headers(token),
            timeout=httpx.Timeout(timeout, connect=2.0),
            trust_env=False,
            transport=httpx.HTTPTransport(verify=tls_verify(self.url, ca), socket_options=NO_DELAY),
        )

    @classmethod
    def for_settings(cls, settings: Settings) -> DaemonClient:
        return cls(settings.daemon_url, token=settings.token, ca=settings.ca)

    @staticmethod
    def async_http(settings: Settings, connections: int) -> httpx.AsyncClient:
        """An asyncio HTTP client of the same daemon, reached as ``for_settings`` reaches it
        (its URL, token, CA and transport), for a tool that keeps many requests in flight
        (``assist loadtest``). No overall timeout: the caller bounds each request."""
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(
            base_url=settings.daemon_url,
            headers=auth_headers(settings.token),
            timeout=httpx.Timeout(None, connect=5.0),
            trust_env=False,
            transport=httpx.AsyncHTTPTransport(
                verify=tls_verify(settings.daemon_url, settings.ca),
                socket_options=NO_DELAY,
                limits=limits,
            ),
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
            raise self._failed(exc, f"no assist daemon answers at {self.url}") from exc
        if response.status_code != 200:
            raise _error_from(response)
        return Health.model_validate_json(response.content)

    def try_health(self) -> Health | None:
        """The daemon's health, or None when none is ready; an untrusted daemon still raises."""
        try:
            return self.health()
        except DaemonUntrusted:
            raise
        except DaemonError:
            return None

    def _failed(self, exc: httpx.TransportError, what: str) -> DaemonError:
        return transport_error(self.url, exc, what)

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
            raise self._failed(exc, f"the daemon at {self.url} stopped answering") from exc

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
            raise self._failed(exc, f"no assist daemon answers at {self.url}") from exc
        if response.status_code != 200:
            raise _error_from(response)
        data: dict[str, Any] = response.json()
        return data
