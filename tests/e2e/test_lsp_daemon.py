"""The language server starts the shared daemon when none answers, and survives losing it."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.e2e.conftest import free_port
from tests.e2e.documents import LOAD_CONFIG, unique
from tests.e2e.test_lsp import SERVER, Recorder, end_of, inline_params, open_document


async def daemon_pid(port: int) -> int | None:
    try:
        async with httpx.AsyncClient(trust_env=False) as http:
            response = await http.get(f"http://127.0.0.1:{port}/health", timeout=2)
        pid: int = response.json()["pid"]
        return pid
    except httpx.HTTPError:
        return None


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[tuple[LanguageClient, int, Path]]:
    port = free_port()
    state = tmp_path / "state"
    env = {
        **os.environ,
        "ASSIST_PORT": str(port),
        "ASSIST_CACHE_DIR": str(state),
        "ASSIST_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
        "ASSIST_FAST_MAX_TOKENS": "8",
        "ASSIST_FAST_DEADLINE_MS": "30000",
        "ASSIST_DEEP_MAX_TOKENS": "16",
    }
    client = await ClientServerConfig(server_command=SERVER, server_env=env).start()
    assert isinstance(client, LanguageClient)
    client.recorder = Recorder(client)  # type: ignore[attr-defined]
    workspace = tmp_path / "project"
    workspace.mkdir()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=workspace.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    try:
        yield client, port, workspace
    finally:
        await client.shutdown_session()
        await client.stop()
        pid = await daemon_pid(port)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)


async def wait_ready(client: LanguageClient, after: int = 0) -> None:
    for _ in range(1200):
        states = [s["state"] for s in client.recorder.status[after:]]  # type: ignore[attr-defined]
        if "ready" in states:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the daemon never became ready: {client.recorder.status}")  # type: ignore[attr-defined]


async def inline(client: LanguageClient, uri: str, text: str) -> types.InlineCompletionList | None:
    return await client.text_document_inline_completion_async(
        inline_params(uri, end_of(text), types.InlineCompletionTriggerKind.Invoked)
    )


async def test_starts_the_daemon_and_reconnects_after_losing_it(local):
    client, port, workspace = local
    await wait_ready(client)
    first_pid = await daemon_pid(port)
    assert first_pid is not None
    text = unique(LOAD_CONFIG) + "data = "
    uri = open_document(client, workspace / "app.py", text)
    answer = await inline(client, uri, text)
    assert answer is not None and answer.items

    # The daemon dies: the next requests answer empty, the user gets one message, and the
    # server restarts the local daemon.
    os.kill(first_pid, signal.SIGKILL)
    seen = len(client.recorder.status)  # type: ignore[attr-defined]
    lost = await inline(client, uri, text + "1")
    assert lost is not None and not lost.items
    await inline(client, uri, text + "2")
    await wait_ready(client, after=seen)
    warnings = [m.message for m in client.messages if "stopped answering" in m.message]
    assert len(warnings) == 1 and "reconnecting" in warnings[0]
    second_pid = await daemon_pid(port)
    assert second_pid is not None and second_pid != first_pid
    again = await inline(client, uri, text + "3")
    assert again is not None and again.items


async def test_two_servers_starting_together_start_one_daemon(tmp_path: Path):
    port = free_port()
    env = {
        **os.environ,
        "ASSIST_PORT": str(port),
        "ASSIST_CACHE_DIR": str(tmp_path / "state"),
        "ASSIST_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
    }
    clients = []
    try:
        for _ in range(2):
            client = await ClientServerConfig(server_command=SERVER, server_env=env).start()
            assert isinstance(client, LanguageClient)
            client.recorder = Recorder(client)  # type: ignore[attr-defined]
            clients.append(client)
        await asyncio.gather(
            *(
                c.initialize_session(
                    types.InitializeParams(capabilities=client_capabilities("neovim"))
                )
                for c in clients
            )
        )
        await asyncio.gather(*(wait_ready(c) for c in clients))
        log = (tmp_path / "state" / f"daemon-{port}.log").read_text()
        assert log.count("assist daemon listening") == 1
    finally:
        for client in clients:
            await client.shutdown_session()
            await client.stop()
        pid = await daemon_pid(port)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
