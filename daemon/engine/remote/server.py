"""One remote completion server: its state, its figures, and a streamed completion from it."""

from __future__ import annotations

import json
import logging
import statistics
import threading
import time
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from daemon.engine.remote.markers import MarkerIds, NotNow, learn_marker_ids
from daemon.engine.remote.routing import PrefixMemory

log = logging.getLogger(__name__)

# A server that does not accept a connection in this time is taken for down.
CONNECT_TIMEOUT_S = 2.0
# How long the list of models may take (a server finishing an answer may hold it back).
MODELS_TIMEOUT_S = 10.0
# Recent requests whose times the figures rest on.
RECENT = 200


# Errors are sorted by what the caller can do: Unreachable (connection refused or cut, a 5xx, a
# stream that ended without finishing: try another server) and Refused (a 4xx: the request itself
# is wrong for this server, and another will not do better).
class Unreachable(Exception):
    """The server could not be reached, failed (5xx) or stopped mid-stream: try another."""


class Overloaded(Unreachable):
    """The server is up but refused for now (429): try another, without taking it out."""


class Refused(Exception):
    """The server answered the request with a client error (4xx): another will not do better."""


@dataclass
class Chunk:
    """A piece of a streamed answer; ``finish`` is set on the last ("stop" or "length")."""

    text: str
    finish: str | None = None


def sse_chunks(lines: Iterator[str]) -> Iterator[Chunk]:
    """The chunks of an OpenAI-style completions stream, to ``data: [DONE]``. A stream that
    ends without it, or without saying why the answer ended (a server that died, or one that
    dropped this answer for another request), raises ``Unreachable``."""
    finished = False
    for line in lines:
        if not line.startswith("data:"):
            continue  # comments, event names and the blank lines between events
        payload = line[5:].strip()
        if payload == "[DONE]":
            if not finished:
                raise Unreachable("the server ended the stream without finishing the answer")
            return
        try:
            data = json.loads(payload)
        except ValueError as exc:
            why = f"the server sent an event that is not JSON: {payload[:80]!r}"
            raise Unreachable(why) from exc
        if "error" in data:
            raise Unreachable(f"the server reported an error: {_error_text(data)}")
        choices = data.get("choices") or [{}]
        choice = choices[0]
        finish = choice.get("finish_reason")
        finished = finished or bool(finish)
        yield Chunk(str(choice.get("text") or ""), finish)
    raise Unreachable("the stream ended before the answer did")


def _error_text(data: Any) -> str:
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data))
        if isinstance(error, dict):
            return str(error.get("message", error))
        return str(error)
    return str(data)


# A server is up once it answered a health check (``GET /health``; ``/v1/models`` then names the
# model it serves, and its tokenizer gives the ids of the thinking markers it must not write:
# ``daemon.engine.remote.markers``) and down from the moment a request or a check could not reach
# it, until a check reaches it again. A stream is the OpenAI completions protocol's server-sent
# events: each ``data:`` line a JSON chunk whose ``choices[0].text`` continues the answer,
# ``data: [DONE]`` at the end.
class RemoteServer:
    """One backend: where it is, whether it answers, its recent figures, its load."""

    def __init__(
        self,
        url: str,
        limit: int,
        client: httpx.Client,
        api_key: str | None,
        markers: Sequence[str] = (),
    ) -> None:
        self.url = url.rstrip("/")
        self.limit = limit
        self._client = client
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model_id: str | None = None
        self.up = False
        self.checked = False  # a health check has run at least once
        self.in_flight = 0
        self.requests = 0
        self.errors = 0
        self.failovers = 0  # requests that left this server for another before their first token
        self.last_error: str | None = None
        self.down_since: float | None = None
        self.came_back = 0  # times it answered again after being down
        self.prefixes = PrefixMemory()
        self.markers = tuple(markers)  # the thinking markers it is told never to write
        self.marker_ids: MarkerIds | None = None  # learned from its tokenizer, for model_id
        self._markers_model: str | None = None
        self._markers_warned = False
        self._first_token_ms: deque[float] = deque(maxlen=RECENT)
        self._total_ms: deque[float] = deque(maxlen=RECENT)
        self._lock = threading.Lock()

    # -- state -------------------------------------------------------------------------------
    @property
    def free(self) -> bool:
        return self.up and self.in_flight < self.limit

    def mark_down(self, why: str) -> None:
        with self._lock:
            self.last_error = why
            if self.up or self.down_since is None:
                self.down_since = time.time()
            self.up = False
            self.prefixes.forget()  # a server that comes back has lost its KV cache

    def check(self) -> bool:
        """Is the server there? ``GET /health`` (llama.cpp's server and vLLM answer it; a server
        without one answers 404 just as fast): any answer but a 5xx (a model still loading)
        means up. A server that accepts the connection but is slow to answer while it runs
        requests of ours is busy, not down. Once up, ``/v1/models`` names what it serves."""
        try:
            response = self._client.get(
                f"{self.url}/health", headers=self._headers, timeout=CONNECT_TIMEOUT_S
            )
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout) or not self.in_flight:
                return self._down(f"health check: {_describe(exc)}")
            return self.up  # answering our requests: too busy to answer this one at once
        except httpx.HTTPError as exc:
            return self._down(f"health check: {_describe(exc)}")
        if response.status_code >= 500:
            return self._down(f"health check: HTTP {response.status_code}")
        if self.model_id is None or not self.up:
            self._read_model()
        self._learn_markers()
        with self._lock:
            if not self.up and self.down_since is not None:
                self.came_back += 1
            self.up = True
            self.checked = True
            self.down_since = None
        return True

    def _down(self, why: str) -> bool:
        self.checked = True
        self.mark_down(why)
        return False

    def _read_model(self) -> None:
        """The model the server names first in ``/v1/models`` (kept as it was if it does not
        say: a server busy with a long answer may not list its models at once)."""
        try:
            response = self._client.get(
                f"{self.url}/v1/models", headers=self._headers, timeout=MODELS_TIMEOUT_S
            )
            response.raise_for_status()
            models = response.json().get("data") or []
        except (httpx.HTTPError, ValueError, AttributeError):
            return
        if models and isinstance(models[0], dict) and models[0].get("id"):
            self.model_id = str(models[0]["id"])

    def _learn_markers(self) -> None:
        """The markers' ids from the server's tokenizer: once for the model it serves (again
        when that changes), and at the next check when it could not be asked now."""
        if not self.markers or (
            self.marker_ids is not None and self._markers_model == self.model_id
        ):
            return
        try:
            found = learn_marker_ids(self._post, self.markers, self.model_id)
        except NotNow as exc:
            log.debug("%s: thinking markers not learned yet: %s", self.url, exc)
            return
        self.marker_ids, self._markers_model = found, self.model_id
        if found.tokenizer is None and not self._markers_warned:
            self._markers_warned = True
            log.warning(
                "%s has no tokenize endpoint assist knows (%s): its thinking markers' ids "
                "cannot be learned, and its requests carry no bias against them",
                self.url,
                found.error,
            )
        elif found.ids:
            log.info("%s: thinking markers forbidden: %s", self.url, found.ids)

    def _post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return self._client.post(
            f"{self.url}{path}", json=body, headers=self._headers, timeout=MODELS_TIMEOUT_S
        )

    @property
    def marker_bias(self) -> dict[str, int]:
        """The logit bias that keeps it from writing its thinking markers (none when unknown)."""
        found = self.marker_ids
        return found.bias if found is not None else {}

    def record(self, first_token_ms: float | None, total_ms: float) -> None:
        with self._lock:
            if first_token_ms is not None:
                self._first_token_ms.append(first_token_ms)
            self._total_ms.append(total_ms)

    def snapshot(self) -> dict[str, Any]:
        """The figures /v1/stats, /health, /metrics and the dashboard show."""
        with self._lock:
            first = list(self._first_token_ms)
            total = list(self._total_ms)
            return {
                "url": self.url,
                "state": "up" if self.up else ("down" if self.checked else "unknown"),
                "model": self.model_id,
                "in_flight": self.in_flight,
                "limit": self.limit,
                "requests": self.requests,
                "errors": self.errors,
                "failovers": self.failovers,
                "came_back": self.came_back,
                "first_token_p50_ms": round(statistics.median(first), 1) if first else None,
                "total_p50_ms": round(statistics.median(total), 1) if total else None,
                "held_prefix_blocks": len(self.prefixes),
                "last_error": self.last_error,
                "down_since": self.down_since,
                "tokenizer": None if self.marker_ids is None else self.marker_ids.tokenizer,
                "marker_ids": None if self.marker_ids is None else self.marker_ids.ids,
            }

    # -- a completion ------------------------------------------------------------------------
    def stream(self, body: dict[str, Any], read_timeout_s: float) -> Generator[Chunk, None, None]:
        """POST ``body`` to ``/v1/completions`` with ``stream`` on and yield its chunks.
        ``read_timeout_s`` bounds the wait for each piece of the answer."""
        timeout = httpx.Timeout(
            connect=CONNECT_TIMEOUT_S, read=max(0.1, read_timeout_s), write=10.0, pool=1.0
        )
        try:
            with self._client.stream(
                "POST",
                f"{self.url}/v1/completions",
                json={**body, "stream": True},
                headers=self._headers,
                timeout=timeout,
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    message = f"HTTP {response.status_code}: {_error_text(_json(response))}"
                    if response.status_code == 429:
                        raise Overloaded(message)
                    if response.status_code >= 500:
                        raise Unreachable(message)
                    raise Refused(message)
                yield from sse_chunks(response.iter_lines())
        except httpx.HTTPError as exc:
            raise Unreachable(_describe(exc)) from exc


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:200]


def _describe(exc: Exception) -> str:
    kind = type(exc).__name__
    text = str(exc)
    return f"{kind}: {text}" if text else kind
