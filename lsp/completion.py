"""Completions: ghost text (``textDocument/inlineCompletion``) and completion items.

What the user sees: after a short pause in typing, the daemon's answer for the cursor, as
inline ghost text accepted with one key (editors with inline completion), or as one completion
item (every other LSP client). Long answers stream their stages as ``assist/stage``
notifications. A newer request for the same document, or ``$/cancelRequest``, cancels the
daemon's generation. Accepting an answer reports it back (``assist.feedback``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from dataclasses import dataclass

from lsprotocol import types

from daemon.client import DaemonError
from daemon.prompt import split_at_cursor
from daemon.protocol import CompleteRequest, DoneEvent, ErrorEvent, StageEvent
from lsp.debounce import is_superseded
from lsp.positions import to_client, to_daemon
from lsp.server import AssistServer

log = logging.getLogger(__name__)

FEEDBACK_COMMAND = "assist.feedback"
_WORD_BEFORE = re.compile(r"[\w$]*$")


@dataclass(frozen=True)
class Answer:
    request_id: str
    text: str
    line: int
    column: int


async def ask(ls: AssistServer, uri: str, position: types.Position) -> Answer | None:
    """Debounce, then ask the daemon for a completion at ``position``; None when there is none."""
    try:
        if not await ls.debouncer.settle(uri, ls.options.debounce_ms / 1000):
            return None
        return await _ask(ls, uri, position)
    except asyncio.CancelledError as error:
        if is_superseded(error):
            return None
        raise
    finally:
        ls.debouncer.finished(uri)


@dataclass(frozen=True)
class Shown:
    """An answer the editor was given, and the text before the cursor when it was."""

    request_id: str
    before: str
    answer: str


def still_possible(shown: Shown, before: str) -> bool:
    """Whether the user may still be typing (or has inserted) the shown answer."""
    if not before.startswith(shown.before):
        return False
    typed = before[len(shown.before) :]
    return shown.answer.startswith(typed) or typed.startswith(shown.answer)


def judge_shown(ls: AssistServer, uri: str, before: str) -> None:
    """A shown answer that the user typed past, or away from, without accepting: rejected."""
    shown = ls.shown.get(uri)
    if shown is None or still_possible(shown, before):
        return
    del ls.shown[uri]
    if shown.request_id in ls.accepted:
        ls.accepted.discard(shown.request_id)
        return
    body = {
        "request_id": shown.request_id,
        "accepted": False,
        "language": ls.answer_languages.pop(shown.request_id, None),
    }
    if ls.connection is not None:
        ls.background(ls.connection.post("/v1/feedback", body))


async def _ask(ls: AssistServer, uri: str, position: types.Position) -> Answer | None:
    document = ls.workspace.get_text_document(uri)
    line, column = to_daemon(document, position)
    text = document.source
    before = split_at_cursor(text, line, column)[0]
    judge_shown(ls, uri, before)
    profile = await ls.profiles.profile_for(uri, text, document.language_id)
    request_id = uuid.uuid4().hex[:16]
    request = CompleteRequest(
        text=text,
        line=line,
        column=column,
        path=ls.profiles.display_path(uri),
        language=document.language_id,
        profile=profile,
        max_tokens=ls.options.max_tokens,
        request_id=request_id,
    )
    connection = ls.connection
    if connection is None:
        return None
    try:
        async for event in connection.stream("/v1/complete", request.model_dump(exclude_none=True)):
            if isinstance(event, StageEvent):
                ls.notify_stage(request_id, uri, "complete", event)
            elif isinstance(event, ErrorEvent):
                log.warning("completion failed: %s: %s", event.code, event.message)
                return None
            elif isinstance(event, DoneEvent):
                ls.record_latency(event.timings.total_ms)
                ls.answer_languages[request_id] = profile.language if profile else None
                if not event.text.strip():
                    return None
                ls.shown[uri] = Shown(request_id, before, event.text)
                return Answer(request_id, event.text, line, column)
    except DaemonError as exc:
        log.warning("completion failed: %s", exc)
    return None


def feedback_command(answer: Answer) -> types.Command:
    return types.Command(
        title="assist: accepted",
        command=FEEDBACK_COMMAND,
        arguments=[{"requestId": answer.request_id, "accepted": True}],
    )


def register(server: AssistServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        types.InlineCompletionOptions(),  # pygls advertises the provider only with options
    )
    async def inline_completion(
        ls: AssistServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        if not ls.options.inline_completion:
            return None
        answer = await ask(ls, params.text_document.uri, params.position)
        if answer is None:
            return types.InlineCompletionList(items=[])
        document = ls.workspace.get_text_document(params.text_document.uri)
        here = to_client(document, answer.line, answer.column)
        item = types.InlineCompletionItem(
            insert_text=answer.text,
            range=types.Range(start=here, end=here),
            command=feedback_command(answer),
        )
        return types.InlineCompletionList(items=[item])

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[".", "(", " "], resolve_provider=False),
    )
    async def completion(
        ls: AssistServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        if not ls.options.completion_items:
            return None
        answer = await ask(ls, params.text_document.uri, params.position)
        if answer is None:
            return types.CompletionList(is_incomplete=True, items=[])
        document = ls.workspace.get_text_document(params.text_document.uri)
        line_text = document.source.split("\n")[answer.line][: answer.column]
        # Clients filter items by the word before the cursor: the item replaces that word
        # with itself plus the answer, so it survives the filter.
        word = _WORD_BEFORE.search(line_text)
        typed = word.group(0) if word else ""
        start = to_client(document, answer.line, answer.column - len(typed))
        end = to_client(document, answer.line, answer.column)
        first_line = answer.text.split("\n", 1)[0]
        item = types.CompletionItem(
            label=(typed + first_line).strip() or answer.text.strip()[:60],
            kind=types.CompletionItemKind.Snippet,
            detail="assist",
            documentation=types.MarkupContent(kind=types.MarkupKind.PlainText, value=answer.text),
            filter_text=typed + answer.text,
            sort_text="0",
            insert_text_format=types.InsertTextFormat.PlainText,
            text_edit=types.TextEdit(
                range=types.Range(start=start, end=end), new_text=typed + answer.text
            ),
            command=feedback_command(answer),
        )
        return types.CompletionList(is_incomplete=True, items=[item])
