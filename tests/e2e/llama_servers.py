"""Real OpenAI-compatible completion servers for the remote-backend tests and benchmark:
llama-cpp-python's own server (``python -m llama_cpp.server``) on loopback ports, serving the
embedded Gemma 3 270M (the smallest model: three of them share this machine's cores).

``interrupt_requests`` is off: by default that server drops the answer it is streaming
whenever any other request arrives, health checks included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from daemon.client.launcher import free_port
from daemon.settings import load_settings
from models.resolve import resolve_model

MODEL = "gemma-3-270m"


def model_path() -> Path:
    settings = load_settings()
    return resolve_model(None, settings.cache_dir, MODEL).path


class LlamaServer:
    """One ``llama_cpp.server`` process; ``kill`` is ``kill -9``, ``start`` (re)starts it on
    the same port."""

    def __init__(self, log_dir: Path, port: int | None = None, threads: int = 1) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"llama-server-{self.port}.log"
        self.threads = threads
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, wait_s: float = 120.0) -> LlamaServer:
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "2048",
            "--n_threads",
            str(self.threads),
            "--interrupt_requests",
            "False",
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited; see {self.log}")
            if self.answers():
                return self
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"llama_cpp.server did not answer in {wait_s} s; see {self.log}")

    def answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/v1/models", timeout=1, trust_env=False).is_success
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """``kill -9``: no goodbye, connections cut mid-stream."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def complete(self, prompt: str, max_tokens: int) -> tuple[str, float]:
        """The server's own answer to a prompt (greedy) and its time in seconds."""
        began = time.perf_counter()
        response = httpx.post(
            f"{self.url}/v1/completions",
            json={"prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0},
            timeout=120,
            trust_env=False,
        )
        response.raise_for_status()
        return response.json()["choices"][0]["text"], time.perf_counter() - began


def start_servers(count: int, log_dir: Path, threads: int = 1) -> list[LlamaServer]:
    servers: list[LlamaServer] = []
    try:
        for _ in range(count):
            servers.append(LlamaServer(log_dir, threads=threads).start())
    except BaseException:
        for server in servers:
            server.kill()
        raise
    return servers
