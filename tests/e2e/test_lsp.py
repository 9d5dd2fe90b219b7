"""The language server end to end: a real client (pytest-lsp) replaying the capabilities of
Neovim and of VS Code, the real server over stdio, a real daemon and the real model."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from daemon.checks.syntax import check_syntax
from tests.e2e.documents import LOAD_CONFIG, NUMBERS, unique

SERVER = [sys.executable, "-m", "daemon.cli", "lsp"]
CLIENTS = {"neovim": "neovim@v0.11.0", "vscode": "visual_studio_code@v1.65.2"}


class Recorder:
    """What the server sent the client besides answers: stages, status, messages, edits."""

    def __init__(self, client: LanguageClient) -> None:
        self.stages: list[dict[str, Any]] = []
        self.status: list[dict[str, Any]] = []
        self.edits: list[types.WorkspaceEdit] = []
        client.feature("assist/stage")(lambda params: self.stages.append(_plain(params)))
        client.feature("assist/status")(lambda params: self.status.append(_plain(params)))

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            self.edits.append(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)


def _plain(params: Any) -> dict[str, Any]:
    if isinstance(params, dict):
        return params
    return {k: getattr(params, k) for k in dir(params) if not k.startswith("_")}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nrequires-python = ">=3.11"\n'
        'dependencies = ["fastapi==0.115.0"]\n[tool.ruff]\nline-length = 88\n'
    )
    (root / ".git").mkdir()
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=sorted(CLIENTS))
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, daemon, workspace):
    lsp_client.recorder = Recorder(lsp_client)  # type: ignore[attr-defined]
    lsp_client.initialized = await lsp_client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=client_capabilities(CLIENTS[request.param]),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="demo")],
            initialization_options={"daemonUrl": daemon.url, "debounceMs": 10},
        )
    )
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, path: Path, text: str, language: str = "python") -> str:
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    return uri


def inline_params(
    uri: str,
    position: types.Position,
    trigger: types.InlineCompletionTriggerKind = types.InlineCompletionTriggerKind.Invoked,
) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=position,
        context=types.InlineCompletionContext(trigger_kind=trigger),
    )


def end_of(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1]))


async def test_capabilities(client: LanguageClient):
    caps = client.initialized.capabilities  # type: ignore[attr-defined]
    assert caps.completion_provider is not None
    assert caps.inline_completion_provider
    assert caps.code_action_provider.resolve_provider is True
    commands = caps.execute_command_provider.commands
    assert "assist.fixFile" in commands and "assist.feedback" in commands


async def test_inline_completion_with_stages_in_order(client: LanguageClient, workspace: Path):
    text = unique(LOAD_CONFIG)
    uri = open_document(client, workspace / "config_loader.py", text)
    result = await client.text_document_inline_completion_async(
        inline_params(uri, end_of(text), types.InlineCompletionTriggerKind.Automatic)
    )
    # The answer, then any other candidates decoded with it.
    assert result is not None and len(result.items) >= 1
    item = result.items[0]
    assert item.insert_text.strip()
    assert item.command is not None and item.command.command == "assist.feedback"
    stages = client.recorder.stages  # type: ignore[attr-defined]
    mine = [s for s in stages if s["uri"] == uri]
    assert [s["stage"] for s in mine] == ["skeleton", "logic", "errors", "final"]
    assert len({s["requestId"] for s in mine}) == 1
    times = [s["elapsedMs"] for s in mine]
    assert times == sorted(times)
    assert mine[-1]["text"] == item.insert_text
    # Accepting it reports feedback to the daemon.
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="assist.feedback", arguments=item.command.arguments)
    )


async def test_completion_items_replace_the_word_being_typed(client: LanguageClient, workspace):
    text = unique(LOAD_CONFIG) + "with open(path) as handle:\n        data = json.lo"
    uri = open_document(client, workspace / "typing.py", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=end_of(text)
        )
    )
    # The answer, then any other candidates decoded with it: each replaces the word.
    assert result is not None and len(result.items) >= 1
    assert len({item.text_edit.new_text for item in result.items}) == len(result.items)
    for item in result.items:
        assert item.text_edit.new_text.startswith("lo")
        assert item.text_edit.range.start.character == end_of(text).character - 2
        assert item.filter_text.startswith("lo")


async def test_quick_fix_makes_the_file_parse(client: LanguageClient, workspace: Path):
    broken = unique("import json\n\n\ndef load(path)\n    return json.load(open(path))\n")
    uri = open_document(client, workspace / "broken.py", broken)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=4, character=0), end=types.Position(line=4, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions and actions[0].title.startswith("Fix with assist")
    action = actions[0]
    if action.edit is None:  # the client resolves lazily
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None
    fixed = apply_workspace_edit(broken, action.edit)
    assert check_syntax("python", fixed) == []
    assert "def load(path):" in fixed


async def test_fix_file_command_applies_a_verified_fix(client: LanguageClient, workspace):
    broken = unique("def area(w, h)\n    return w * h\n")
    uri = open_document(client, workspace / "area.py", broken)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="assist.fixFile", arguments=[uri])
    )
    assert result["changed"] is True and result["verified"] is True
    edits = client.recorder.edits  # type: ignore[attr-defined]
    assert edits
    assert check_syntax("python", apply_workspace_edit(broken, edits[-1])) == []
    fixes = [s for s in client.recorder.stages if s["uri"] == uri]  # type: ignore[attr-defined]
    assert [s["stage"] for s in fixes] == ["skeleton", "logic", "final"]
    assert all(s["kind"] == "fix" for s in fixes)


def apply_workspace_edit(text: str, edit: types.WorkspaceEdit) -> str:
    changes = edit.document_changes or []
    assert len(changes) == 1
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    for change in changes:
        for text_edit in sorted(change.edits, key=lambda e: offset(e.range.start), reverse=True):
            start, end = offset(text_edit.range.start), offset(text_edit.range.end)
            text = text[:start] + text_edit.new_text + text[end:]
    return text


async def engine_state(daemon) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=daemon.url, trust_env=False) as http:
        data: dict[str, Any] = (await http.get("/health")).json()["engine"]
        return data


def send_inline(client: LanguageClient, uri: str, position: types.Position, msg_id: str) -> Any:
    """An inline completion request with an id of our own, so that it can be cancelled."""
    params = inline_params(uri, position, types.InlineCompletionTriggerKind.Invoked)
    return asyncio.ensure_future(
        client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
        )
    )


def cancel(client: LanguageClient, msg_id: str) -> None:
    """What an editor sends when the user typed on: $/cancelRequest."""
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))


async def wait_engine_busy(daemon) -> None:
    for _ in range(250):
        if (await engine_state(daemon))["busy"]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the daemon never started generating")


async def wait_engine_quiet(daemon) -> dict[str, Any]:
    """The engine's state once it runs nothing: work an earlier test left behind (a body still
    being finished, a window read in the background) must not pass for this test's job."""
    for _ in range(1200):
        state = await engine_state(daemon)
        if not state["busy"] and not state["running"]:
            return state
        await asyncio.sleep(0.05)
    raise AssertionError("the daemon's engine never went idle")


async def wait_engine_cancelled(daemon, before: dict[str, Any]) -> dict[str, Any]:
    """The engine's state once it has ended a job as cancelled since ``before``. Counters, not
    the last job: background work (the whole window read after a cut one) may end after it."""
    for _ in range(200):
        state = await engine_state(daemon)
        if state["cancelled"] > before["cancelled"]:
            return state
        await asyncio.sleep(0.05)
    raise AssertionError("the daemon's engine never ended a job as cancelled")


async def test_cancel_request_stops_the_daemon_generation(client, workspace, daemon):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"assist": {"maxTokens": 400}})
    )
    text = unique(NUMBERS)
    uri = open_document(client, workspace / "numbers.py", text)
    before = await wait_engine_quiet(daemon)
    answer = send_inline(client, uri, end_of(text), "cancel-me")
    await wait_engine_busy(daemon)
    cancel(client, "cancel-me")
    with pytest.raises(Exception, match="cancel"):
        await answer
    state = await wait_engine_cancelled(daemon, before)
    assert state["tokens_generated"] - before["tokens_generated"] < 400


async def test_a_newer_request_for_the_document_replaces_the_older(client, workspace, daemon):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"assist": {"maxTokens": 400}})
    )
    text = unique(NUMBERS)
    uri = open_document(client, workspace / "numbers2.py", text)

    before = await wait_engine_quiet(daemon)
    first = send_inline(client, uri, end_of(text), "older")
    await wait_engine_busy(daemon)
    second = send_inline(client, uri, end_of(text), "newer")
    older = await first
    assert older is not None and len(older.items) == 0  # answered empty, not left hanging
    cancel(client, "newer")
    with pytest.raises(Exception, match="cancel"):
        await second
    await wait_engine_cancelled(daemon, before)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def misconfigured(lsp_client: LanguageClient, daemon, workspace):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=workspace.as_uri(),
            initialization_options={
                "daemonUrl": daemon.url,
                "debounceMs": "soon",
                "maxTokens": -3,
                "logLevel": "loud",
            },
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_bad_settings_give_one_message_and_defaults(misconfigured: LanguageClient, workspace):
    for _ in range(50):
        if misconfigured.messages:
            break
        await asyncio.sleep(0.05)
    messages = [m.message for m in misconfigured.messages]
    assert len(messages) == 1
    for name in ("debounceMs", "maxTokens", "logLevel"):
        assert name in messages[0]
    # The server still works on its defaults.
    text = unique(LOAD_CONFIG) + "data = "
    uri = open_document(misconfigured, workspace / "defaults.py", text)
    result = await misconfigured.text_document_inline_completion_async(
        inline_params(uri, end_of(text), types.InlineCompletionTriggerKind.Invoked)
    )
    assert result is not None and result.items


async def test_an_answer_typed_away_from_is_reported_rejected(client, workspace, daemon):
    text = unique(LOAD_CONFIG) + "with open(path) as handle:\n        "
    uri = open_document(client, workspace / "reject.py", text)
    first = await client.text_document_inline_completion_async(
        inline_params(uri, end_of(text), types.InlineCompletionTriggerKind.Invoked)
    )
    assert first is not None and first.items
    shown_id = first.items[0].command.arguments[0]["requestId"]
    changed = text + "raise SystemExit  # the user wrote something else\n        "
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=changed)],
        )
    )
    await client.text_document_inline_completion_async(
        inline_params(uri, end_of(changed), types.InlineCompletionTriggerKind.Automatic)
    )
    cache = sqlite3.connect(daemon.settings.resolved_cache_path)
    try:
        for _ in range(100):
            row = cache.execute(
                "SELECT accepted FROM feedback WHERE request_id = ?", (shown_id,)
            ).fetchone()
            if row is not None:
                break
            await asyncio.sleep(0.05)
    finally:
        cache.close()
    assert row == (0,)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def neovim(lsp_client: LanguageClient, daemon, workspace):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(CLIENTS["neovim"]),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="demo")],
            initialization_options={"daemonUrl": daemon.url, "debounceMs": 10},
        )
    )
    yield
    await lsp_client.shutdown_session()


def generated_module(megabytes: int) -> str:
    """Python code of about ``megabytes`` MB, as a generator would write it."""
    block = "".join(f"def value_{i}(x: int) -> int:\n    return x + {i}\n\n\n" for i in range(1000))
    return block * (megabytes * 1024 * 1024 // len(block))


async def test_a_50_mb_document_is_completed_where_the_cursor_is(neovim, workspace):
    # The daemon refuses bodies over 2 MB: the server sends it a window around the cursor.
    half = generated_module(25)
    snippet = unique(LOAD_CONFIG) + "data = "
    text = half + snippet + "\n\n\n" + half
    assert len(text) > 50_000_000
    lines = (half + snippet).split("\n")
    here = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    uri = open_document(neovim, workspace / "generated.py", text)
    del half, lines
    inline = await neovim.text_document_inline_completion_async(
        inline_params(uri, here, types.InlineCompletionTriggerKind.Invoked)
    )
    assert inline is not None and inline.items
    assert inline.items[0].insert_text.strip()
    assert inline.items[0].range == types.Range(start=here, end=here)
    # Completion items replace the word before the cursor (none here) in the document.
    listed = await neovim.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=here)
    )
    assert listed is not None and listed.items
    assert listed.items[0].text_edit.range == types.Range(start=here, end=here)
