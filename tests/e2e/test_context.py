"""Context from the rest of the workspace against a real daemon and the real model: it reaches
the prompt (more prompt tokens) when the line names what it defines, it is part of what a cached
answer is keyed by, and the CLI and the language server gather it from real files."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from daemon.protocol import DoneEvent, StartEvent, parse_event
from tests.e2e.documents import complete_body, unique
from tests.e2e.test_cli import assist, port_args
from tests.e2e.test_http_api import post_events
from tests.e2e.test_lsp import SERVER, end_of, inline_params, open_document

PRICES = '''"""Prices and taxes."""


def with_tax(amount: float, rate: float = 0.2) -> float:
    """The amount with value-added tax at ``rate``."""
    return amount * (1 + rate)
'''
# The line being completed names what the other files define (a fast-path completion is shown
# only the snippets its line names).
LAST_LINE = "    return with_tax(sum(items)) + SHIPPING * "
DOCUMENT = "from prices import with_tax\n\n\ndef total(items: list[float]) -> float:\n" + LAST_LINE
SNIPPET = {
    "path": "prices.py",
    "text": 'def with_tax(amount: float, rate: float = 0.2) -> float:\n    """VAT."""\n    ...\n',
    "kind": "import",
    "name": "with_tax",
    "line": 3,
}


def test_context_makes_a_longer_prompt_and_a_different_cache_key(daemon):
    text = unique(DOCUMENT)
    plain_body = complete_body(text, language="python", mode="fast", max_tokens=8)
    context_body = {**plain_body, "context": [SNIPPET], "repository": "shop"}
    with daemon.http() as http:
        plain = post_events(http, plain_body)
        with_context = post_events(http, context_body)
        again = post_events(http, context_body)
    start_plain, start_context = plain[0], with_context[0]
    assert isinstance(start_plain, StartEvent) and isinstance(start_context, StartEvent)
    assert start_context.prompt_tokens > start_plain.prompt_tokens + 20
    done = with_context[-1]
    assert isinstance(done, DoneEvent)
    # Not the first answer served again: the context is part of the request's key.
    assert done.cached is False
    assert done.prompt_tokens == start_context.prompt_tokens
    assert again[-1].cached is True and again[-1].cache_match == "exact"


def test_the_cli_sends_what_the_file_imports_unless_told_not_to(daemon, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    (tmp_path / "prices.py").write_text(PRICES)
    app = tmp_path / "app.py"
    app.write_text(unique(DOCUMENT))
    line = str(app.read_text().count("\n") + 1)

    def prompt_tokens(*extra: str) -> int:
        out = assist(
            *(
                "complete",
                str(app),
                "--line",
                line,
                "--column",
                str(len(LAST_LINE)),
                "--json",
                "--no-cache",
            ),
            *("--max-tokens", "8", *extra, *port_args(daemon)),
        )
        assert out.returncode == 0, out.stderr
        start = parse_event(out.stdout.splitlines()[0])
        assert isinstance(start, StartEvent)
        return start.prompt_tokens

    with_context = prompt_tokens()
    without = prompt_tokens("--no-context")
    assert with_context > without + 20


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, daemon, tmp_path_factory):
    root = tmp_path_factory.mktemp("shop")
    (root / ".git").mkdir()
    lsp_client.root = root  # type: ignore[attr-defined]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@v0.11.0"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="shop")],
            initialization_options={"daemonUrl": daemon.url, "debounceMs": 0, "maxTokens": 8},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def records(daemon, path: str, count: int) -> list[tuple[int, int]]:
    """(prompt_tokens, cached) of the daemon's records for ``path``, once there are ``count``."""
    for _ in range(200):
        metrics = sqlite3.connect(daemon.settings.resolved_metrics_path)
        try:
            rows = metrics.execute(
                "SELECT prompt_tokens, cached FROM requests WHERE path = ? ORDER BY at", (path,)
            ).fetchall()
        finally:
            metrics.close()
        if len(rows) >= count:
            return [(int(a), int(b)) for a, b in rows]
        await asyncio.sleep(0.1)
    raise AssertionError(f"the daemon recorded {len(rows)} requests for {path}, not {count}")


async def test_the_language_server_sends_the_imports_and_recent_edits(
    client: LanguageClient, daemon
):
    root: Path = client.root  # type: ignore[attr-defined]
    name = f"app_{uuid.uuid4().hex[:8]}.py"
    text = unique(DOCUMENT)
    uri = open_document(client, root / name, text)
    params = inline_params(uri, end_of(text))
    first = await client.text_document_inline_completion_async(params)
    assert first is not None

    # The imported module appears, and another document is edited: the same request, at the
    # same place of the same document, now carries both, so it is a new prompt, not a hit.
    (root / "prices.py").write_text(PRICES)
    notes = open_document(client, root / "notes.py", "SHIPPING = 4\n")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=notes, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=1, character=0),
                        end=types.Position(line=1, character=0),
                    ),
                    text="HANDLING = 2.5\n",
                )
            ],
        )
    )
    second = await client.text_document_inline_completion_async(params)
    assert second is not None
    (plain, plain_cached), (with_context, cached) = await records(daemon, name, 2)
    assert plain_cached == 0 and cached == 0
    assert with_context > plain + 30
