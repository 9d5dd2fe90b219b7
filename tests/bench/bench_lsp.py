"""The language server's own cost, measured through a real LSP client in one run.

Starts a daemon on a free loopback port and `assist lsp` under a pytest-lsp client (with
Neovim's capabilities), warms the cache with one completion, then times, as medians:
  http hit     the same completion straight from the daemon over HTTP,
  lsp hit      didChange + textDocument/inlineCompletion through the server, answered from the
               cache, with debounce 0 and with the default debounce,
and prints the language server's overhead: lsp hit - debounce - http hit, i.e. what the server
adds between the keystroke reaching it and the request reaching the daemon (and back).
Run: .venv/bin/python tests/bench/bench_lsp.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import CompleteRequest, DoneEvent
from daemon.settings import load_settings

TEXT = '''import json
from pathlib import Path


def load_config(path: Path) -> dict:
    """Read a JSON config file and return it as a dict."""
    data = '''
ROUNDS = 15


async def lsp_hits(url: str, workspace: Path, debounce_ms: int) -> list[float]:
    client = await ClientServerConfig(
        server_command=[sys.executable, "-m", "daemon.cli", "lsp"]
    ).start()
    assert isinstance(client, LanguageClient)
    for method in ("assist/stage", "assist/status"):
        client.feature(method)(lambda params: None)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@v0.11.0"),
            root_uri=workspace.as_uri(),
            initialization_options={"daemonUrl": url, "debounceMs": debounce_ms},
        )
    )
    uri = (workspace / "config.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text="")
        )
    )
    lines = TEXT.split("\n")
    position = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    times: list[float] = []
    try:
        for version in range(2, ROUNDS + 3):
            start = time.perf_counter()
            # The keystroke: the editor sends the change, then asks.
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=TEXT)],
                )
            )
            result = await client.text_document_inline_completion_async(
                types.InlineCompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=position,
                    context=types.InlineCompletionContext(
                        trigger_kind=types.InlineCompletionTriggerKind.Automatic
                    ),
                )
            )
            elapsed = (time.perf_counter() - start) * 1000
            assert result is not None and result.items, "no answer through the server"
            if version > 3:  # the first rounds warm the server's profile and connection
                times.append(elapsed)
    finally:
        await client.shutdown_session()
        await client.stop()
    return times


def http_hits(url: str) -> list[float]:
    lines = TEXT.split("\n")
    request = CompleteRequest(
        text=TEXT, line=len(lines) - 1, column=len(lines[-1]), path="config.py", language="python"
    )
    times: list[float] = []
    with DaemonClient(url) as client:
        for _ in range(ROUNDS + 2):
            start = time.perf_counter()
            done = [e for e in client.complete(request) if isinstance(e, DoneEvent)][-1]
            times.append((time.perf_counter() - start) * 1000)
        assert done.cached, "the repeated request was not a cache hit"
    return times[2:]


async def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-lsp-"))
    workspace = work / "project"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.11"\n')
    settings = load_settings(port=free_port(), cache_path=work / "cache.sqlite3")
    process, _ = launch(settings, work / "daemon.log")
    try:
        # Warm the cache through the server (the profile it sends is part of the key).
        await lsp_hits(settings.daemon_url, workspace, 0)
        direct = statistics.median(http_hits(settings.daemon_url))
        undebounced = statistics.median(await lsp_hits(settings.daemon_url, workspace, 0))
        debounced = statistics.median(await lsp_hits(settings.daemon_url, workspace, 75))
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(f"language server, cache hits, median of {ROUNDS} rounds")
    print(f"  http hit (daemon directly)       {direct:7.2f} ms")
    print(f"  lsp hit, debounce 0              {undebounced:7.2f} ms")
    print(f"  lsp hit, debounce 75 ms          {debounced:7.2f} ms")
    print(f"  server overhead (debounce 0)     {undebounced - direct:7.2f} ms")
    print(f"  keystroke to daemon, debounce 75 {debounced - direct:7.2f} ms (75 ms + overhead)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
