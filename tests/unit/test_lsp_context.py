"""The language server sends the rest of the workspace with a completion: what the document
imports, and the lines around recent edits in other open documents (the daemon connection is
the only seam)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from lsp.completion import CompletionState
from lsp.options import AssistOptions
from lsp.server import AssistServer
from tests.unit.test_lsp_completion import FakeDaemon, started_server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "prices.py").write_text(
        'def with_tax(amount: float, rate: float = 0.2) -> float:\n    """Add VAT."""\n'
        "    return amount * (1 + rate)\n"
    )
    return root


@pytest.fixture
def server(workspace: Path) -> tuple[AssistServer, CompletionState, FakeDaemon]:
    ls, state, daemon = started_server()
    ls.profiles.set_folders([workspace])
    return ls, state, daemon


def open_file(ls: AssistServer, path: Path, text: str) -> str:
    uri = path.as_uri()
    ls.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    )
    return uri


def edit(ls: AssistServer, uri: str, line: int, new_text: str) -> None:
    """What pygls does with a didChange: apply it, then call the feature's handler."""
    change = types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)
        ),
        text=new_text,
    )
    params = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[change],
    )
    ls.workspace.update_text_document(params.text_document, change)
    ls.protocol.fm.features[types.TEXT_DOCUMENT_DID_CHANGE](params)


async def complete(ls: AssistServer, uri: str, line: int, character: int) -> dict:
    handler = ls.protocol.fm.features[types.TEXT_DOCUMENT_INLINE_COMPLETION]
    await handler(
        types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
        )
    )
    return ls.connection.requests[-1]  # type: ignore[union-attr]


async def test_imports_and_recent_edits_elsewhere_go_with_a_completion(server, workspace):
    ls, state, _ = server
    document = "from prices import with_tax\n\n\ndef total(items):\n    return with_tax("
    app = open_file(ls, workspace / "app.py", document)
    notes = open_file(ls, workspace / "notes.py", "a = 1\nb = 2\n")
    edit(ls, notes, 1, "SHIPPING = 4.5\n")
    edit(ls, app, 2, "# typing in the document itself is not context\n")
    sent = await complete(ls, app, 4, 20)
    assert sent["repository"] == "shop"
    context = [(s["kind"], s["path"], s.get("name")) for s in sent["context"]]
    assert context == [("import", "prices.py", "with_tax"), ("recent", "notes.py", None)]
    assert sent["context"][0]["text"].startswith("def with_tax(amount: float, rate: float = 0.2)")
    assert "SHIPPING = 4.5" in sent["context"][1]["text"]

    # A closed document's edits are forgotten; the setting turns context off.
    ls.protocol.fm.features[types.TEXT_DOCUMENT_DID_CLOSE](
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=notes))
    )
    assert len(state.recent) == 1  # the document's own edit, never sent for itself
    sent = await complete(ls, app, 4, 20)
    assert [s["kind"] for s in sent["context"]] == ["import"]
    ls.options = AssistOptions(debounce_ms=0, context=False)
    sent = await complete(ls, app, 4, 20)
    assert "context" not in sent or sent["context"] == []
