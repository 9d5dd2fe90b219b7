"""llama.cpp's own server, as the benchmark's yardstick: built once from the sources vendored in
the pinned llama-cpp-python sdist, cached, started on a loopback port.

The build (``pip download`` of the sdist, then CMake's ``llama-server`` target, static, without
CURL) takes about a quarter of an hour on two cores; the binary is kept under
``~/.cache/assist/llama-server/<version>/`` and reused. Benchmark only: CI never builds it.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx
import llama_cpp

from daemon.client.launcher import free_port

CACHE = Path.home() / ".cache" / "assist" / "llama-server"
# x86-64 only: other targets do not know these flags.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" if platform.machine() == "x86_64" else ""


def cached_binary() -> Path:
    return CACHE / llama_cpp.__version__ / "llama-server"


def build(log=sys.stderr) -> Path:
    """The cached llama-server binary, built first when missing."""
    target = cached_binary()
    if target.exists():
        return target
    version = llama_cpp.__version__
    with tempfile.TemporaryDirectory(prefix="assist-llama-server-") as work:
        print(f"building llama-server {version} (about 15 minutes on two cores)", file=log)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                f"llama-cpp-python=={version}",
                "-d",
                work,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        archive = next(Path(work).glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
        source = next(Path(work).glob("llama_cpp_python-*/vendor/llama.cpp"))
        build_dir = Path(work) / "build"
        subprocess.run(
            [
                "cmake",
                "-S",
                str(source),
                "-B",
                str(build_dir),
                "-DCMAKE_BUILD_TYPE=Release",
                "-DLLAMA_CURL=OFF",
                "-DBUILD_SHARED_LIBS=OFF",
                "-DLLAMA_BUILD_TESTS=OFF",
                # As the Makefile builds llama-cpp-python: without llama.cpp's AMX kernels,
                # which crash where the tile registers are not granted.
                f"-DCMAKE_C_FLAGS={NO_AMX}",
                f"-DCMAKE_CXX_FLAGS={NO_AMX}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        jobs = str(len(os.sched_getaffinity(0)))
        subprocess.run(
            ["cmake", "--build", str(build_dir), "--target", "llama-server", "-j", jobs],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        built = next(build_dir.rglob("llama-server"))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.rename(target)
    return target


class LlamaServer:
    """A running llama-server with ``parallel`` slots of ``n_ctx`` tokens each."""

    def __init__(
        self,
        binary: Path,
        model: Path,
        parallel: int,
        n_ctx: int,
        threads: int,
        batch: int = 512,
    ) -> None:
        self.port = free_port()
        self.log = Path(tempfile.mkdtemp(prefix="llama-server-")) / "server.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    str(binary),
                    "-m",
                    str(model),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "-np",
                    str(parallel),
                    "-c",
                    str(n_ctx * parallel),
                    "-t",
                    str(threads),
                    "-b",
                    str(batch),
                    "-ub",
                    "512",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.url = f"http://127.0.0.1:{self.port}"
        self.client = httpx.Client(timeout=600)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.client.get(f"{self.url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"llama-server did not start; see {self.log}")

    def complete(self, tokens: list[int], n_predict: int, cache: bool) -> int:
        """Generate greedily after ``tokens``; returns the number of tokens generated."""
        reply = self.client.post(
            f"{self.url}/completion",
            json={
                "prompt": tokens,
                "n_predict": n_predict,
                "temperature": 0.0,
                "top_k": 1,
                "cache_prompt": cache,
            },
        )
        reply.raise_for_status()
        return int(reply.json()["tokens_predicted"])

    def infill(self, request: dict) -> dict:
        """POST /infill (llama.vim's request) and return the server's JSON answer."""
        reply = self.client.post(f"{self.url}/infill", json=request)
        reply.raise_for_status()
        return reply.json()

    def close(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
