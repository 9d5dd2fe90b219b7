"""The remote servers together: health checks, routing, and the bound on each one's requests.
A request takes a place on the server best placed for its prompt (``acquire``), or waits.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import httpx

from daemon.engine.remote.routing import BLOCK_TOKENS, placing_key, prefix_hashes, rendezvous
from daemon.engine.remote.server import RemoteServer

# A backend holds a prompt when it holds at least this share of it: less is the opening that
# many documents share (the format's markers, the workspace profile), which says nothing of
# where the document's KV cache is.
AFFINITY_SHARE = 0.5


class BackendPool:
    """A thread checks every server every ``check_s`` seconds: one that does not answer is taken
    out, one that answers again is put back, and a server's first check learns the ids of the
    thinking markers it is told never to write (``markers``)."""

    def __init__(
        self,
        urls: Sequence[str],
        limit: int,
        check_s: float = 2.0,
        api_key: str | None = None,
        markers: Sequence[str] = (),
    ) -> None:
        if not urls:
            raise ValueError("a pool needs at least one backend")
        total = limit * len(urls)
        self._client = httpx.Client(
            limits=httpx.Limits(max_connections=total + len(urls), max_keepalive_connections=total)
        )
        self.servers = [RemoteServer(url, limit, self._client, api_key, markers) for url in urls]
        self.check_s = check_s
        self._changed = threading.Condition()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def capacity(self) -> int:
        return sum(server.limit for server in self.servers)

    # -- health ------------------------------------------------------------------------------
    def check_all(self) -> int:
        """Check every backend now; returns how many are up."""
        up = sum(server.check() for server in self.servers)
        with self._changed:
            self._changed.notify_all()
        return up

    def start(self) -> None:
        """Check every server every ``check_s`` seconds, in a thread of its own: a server that
        does not answer is taken out, one that answers again is put back."""
        self._thread = threading.Thread(target=self._watch, name="assist-backends", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._closed.wait(self.check_s):
            self.check_all()

    def close(self) -> None:
        self._closed.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._client.close()

    def taken_out(self, server: RemoteServer, why: str) -> None:
        server.mark_down(why)
        with self._changed:
            self._changed.notify_all()

    # -- places ------------------------------------------------------------------------------
    def any_up(self) -> bool:
        return any(server.up for server in self.servers)

    def room(self) -> bool:
        """Whether any server could take a request now: when none can, requests wait in the
        scheduler's queue, and beyond it are refused (429)."""
        return any(server.free for server in self.servers)

    def wait_for_room(self, timeout: float) -> bool:
        """Wait until a backend could take a request (or the pool closes, or ``timeout``)."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: self.room() or self._closed.is_set(), timeout)
                and not self._closed.is_set()
            )

    def acquire(
        self, tokens: Sequence[int], exclude: Sequence[RemoteServer] = ()
    ) -> RemoteServer | None:
        """A place on the backend best placed for ``tokens``; None when none is free. Among
        the servers that are up and below their limit: the one that holds the longest prefix of
        the prompt (``daemon.engine.remote.routing``) when that is most of it, then the least
        busy, then a stable hash of the document's opening."""
        hashes = prefix_hashes(tokens)
        with self._changed:
            free = [s for s in self.servers if s.free and s not in exclude]
            if not free:
                return None
            held = {id(s): s.prefixes.held(hashes) for s in free}
            most = max(held.values())
            best = free
            if most * BLOCK_TOKENS >= AFFINITY_SHARE * len(tokens):
                best = [s for s in free if held[id(s)] == most]
            least = min(s.in_flight for s in best)
            best = [s for s in best if s.in_flight == least]
            key = placing_key(tokens, hashes, most)
            server = max(best, key=lambda s: rendezvous(key, s.url))
            server.in_flight += 1
            server.requests += 1
            server.prefixes.remember(hashes)
            return server

    def release(self, server: RemoteServer) -> None:
        with self._changed:
            server.in_flight -= 1
            self._changed.notify_all()

    def cached(self, tokens: Sequence[int]) -> int:
        """About how many leading tokens of ``tokens`` some backend holds (whole blocks)."""
        hashes = prefix_hashes(tokens)
        with self._changed:
            held = max((s.prefixes.held(hashes) for s in self.servers if s.up), default=0)
        return min(len(tokens), held * BLOCK_TOKENS)

    def snapshot(self) -> list[dict]:
        return [server.snapshot() for server in self.servers]
