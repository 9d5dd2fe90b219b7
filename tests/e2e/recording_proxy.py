"""A loopback HTTP proxy in front of one real server that keeps every request it passes on: what
the server received, for tests that check what assist sends (streams are passed on as they come).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

# Headers of the server's answer that describe the hop, not the content, and are not passed on.
_HOP = {"connection", "content-length", "content-encoding", "keep-alive", "transfer-encoding"}


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    body: Any  # the JSON body, or None


class RecordingProxy:
    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.seen: list[Seen] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.forward(self)

            def do_POST(self) -> None:
                proxy.forward(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> RecordingProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def bodies(self, path: str) -> list[Any]:
        return [seen.body for seen in self.seen if seen.path == path]

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        """Pass the request on, keep it, and stream the answer back (the connection closes at
        its end: the handler speaks HTTP/1.0)."""
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        self.seen.append(Seen(handler.command, handler.path, json.loads(raw) if raw else None))
        headers = {
            k: v
            for k, v in handler.headers.items()
            if k.lower() in ("content-type", "authorization")
        }
        with httpx.stream(
            handler.command,
            self.target + handler.path,
            content=raw,
            headers=headers,
            timeout=120,
            trust_env=False,
        ) as response:
            handler.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in _HOP:
                    handler.send_header(name, value)
            handler.end_headers()
            for chunk in response.iter_bytes():
                handler.wfile.write(chunk)
                handler.wfile.flush()
