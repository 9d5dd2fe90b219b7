"""Completions: ghost text (``textDocument/inlineCompletion``) and completion items."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from lsprotocol import types
from pygls.uris import to_fs_path

from daemon.client.daemon_client import DaemonError
from daemon.client.window import window_around
from daemon.protocol import CompleteRequest, ContextSnippet, DoneEvent, ErrorEvent, StageEvent
from daemon.workspace.context import gather_context
from daemon.workspace.recent import RecentEdits
from lsp.debounce import DocumentDebouncer, is_superseded
from lsp.positions import DocumentLines
from lsp.server import AssistServer

log = logging.getLogger(__name__)

FEEDBACK_COMMAND = "assist.feedback"
# Answers remembered for their feedback. Feedback comes within moments of an answer being
# shown: a few hundred is plenty, and a long editing session cannot grow it.
ANSWERS_KEPT = 256
# Characters before the cursor kept with a shown answer, to tell whether the user is still
# typing it: enough to notice an edit elsewhere, little for a very large document.
SHOWN_CONTEXT_CHARS = 2048
# The word before the cursor is looked for in this many characters at most (minified lines).
_WORD_CHARS = 256
_WORD_BEFORE = re.compile(r"[\w$]*$")

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """A mapping that keeps only its ``limit`` most recently set keys."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: OrderedDict[K, V] = OrderedDict()

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True)
class Answer:
    """An answer, and where it goes in the editor (in the editor's units, in the document the
    request was made for)."""

    request_id: str
    text: str
    position: types.Position  # the cursor
    typed: str  # the word before the cursor
    word_start: types.Position  # where that word starts
    alternatives: tuple[str, ...] = ()  # the daemon's other candidates, best first

    @property
    def texts(self) -> tuple[str, ...]:
        """The answer, then each alternative."""
        return (self.text, *self.alternatives)


@dataclass(frozen=True)
class Shown:
    """An answer the editor was given, and where in the document it was given."""

    request_id: str
    offset: int  # the cursor's offset in the document (code points)
    context: str  # the characters just before the cursor (SHOWN_CONTEXT_CHARS at most)
    answer: str

    @classmethod
    def at(cls, request_id: str, text: str, offset: int, answer: str) -> Shown:
        return cls(request_id, offset, text[max(0, offset - SHOWN_CONTEXT_CHARS) : offset], answer)


def still_possible(shown: Shown, text: str, offset: int) -> bool:
    """Whether the user may still be typing (or has inserted) the shown answer, with the
    cursor now at ``offset`` of ``text``."""
    start = shown.offset - len(shown.context)
    if offset < shown.offset or not text.startswith(shown.context, start):
        return False
    typed = offset - shown.offset
    if typed <= len(shown.answer):
        return shown.answer.startswith(text[shown.offset : offset])
    return text.startswith(shown.answer, shown.offset)  # inserted it, then went on


# What the feature remembers between requests (register gives the handlers their state). The daemon
# is sent a window of the document around the cursor, so a very large document can be completed;
# answers are relative to the cursor, and the edits given to the editor are placed at the cursor's
# position in the whole document. An answer the user typed past without accepting it is reported as
# rejected. The lines around recent edits in other open documents come from the changes the editor
# reports.
class CompletionState:
    """What completions remember: the debouncer, the last answer shown per document, the
    recent answers' languages and acceptances (both bounded) for their feedback, and the
    programmer's recent edits (bounded) for the context of the next completions."""

    def __init__(self, answers_kept: int = ANSWERS_KEPT) -> None:
        self.debouncer = DocumentDebouncer()
        self.shown: dict[str, Shown] = {}
        self.languages: Recent[str, str | None] = Recent(answers_kept)
        self.accepted: Recent[str, bool] = Recent(answers_kept)
        self.recent = RecentEdits()

    def answered(self, uri: str, shown: Shown, language: str | None) -> None:
        self.shown[uri] = shown
        self.languages.put(shown.request_id, language)

    def feedback(self, request_id: str, accepted: bool) -> dict[str, Any]:
        """The feedback body for an answer the client reported on."""
        if accepted:
            self.accepted.put(request_id, True)
        return {
            "request_id": request_id,
            "accepted": accepted,
            "language": self.languages.pop(request_id),
        }

    def typed_past(self, uri: str, text: str, offset: int) -> dict[str, Any] | None:
        """The rejection to report when the document's shown answer was typed past, or away
        from, without being accepted; None when there is nothing to report."""
        shown = self.shown.get(uri)
        if shown is None or still_possible(shown, text, offset):
            return None
        del self.shown[uri]
        if self.accepted.pop(shown.request_id):
            return None
        return self.feedback(shown.request_id, False)

    def forget(self, uri: str) -> None:
        """The document was closed."""
        self.shown.pop(uri, None)
        self.debouncer.forget(uri)
        path = to_fs_path(uri)
        if path is not None:
            self.recent.forget(Path(path))

    def edited(
        self, uri: str, text: str, changes: list[types.TextDocumentContentChangeEvent]
    ) -> None:
        """The document changed (``text`` is its content after the changes): remember where."""
        path = to_fs_path(uri)
        if path is None:
            return
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = change.range.start.line
                self.recent.record(Path(path), text, start, start + change.text.count("\n"))


async def ask(
    ls: AssistServer, state: CompletionState, uri: str, position: types.Position
) -> Answer | None:
    """Debounce, then ask the daemon for a completion at ``position``; None when there is none."""
    try:
        if not await state.debouncer.settle(uri, ls.options.debounce_ms / 1000):
            return None
        return await _ask(ls, state, uri, position)
    except asyncio.CancelledError as error:
        if is_superseded(error):
            return None
        raise
    finally:
        state.debouncer.finished(uri)


async def _ask(
    ls: AssistServer, state: CompletionState, uri: str, position: types.Position
) -> Answer | None:
    document = ls.workspace.get_text_document(uri)  # as it is after the pause in typing
    lines = DocumentLines(document)
    line, column = lines.to_daemon(position)
    offset = lines.offset(line, column)
    rejected = state.typed_past(uri, lines.text, offset)
    if rejected is not None and ls.connection is not None:
        ls.tasks.start(ls.connection.post("/v1/feedback", rejected))
    # Only the window goes to the daemon; positions sent back stay those of the document.
    window = window_around(lines.text, line, column)
    profile = await ls.profiles.profile_for(uri, window.text, document.language_id)
    context: list[ContextSnippet] = []
    repository: str | None = None
    if ls.options.context:
        context, repository = await _context(ls, state, uri, lines.text, line, document.language_id)
    request_id = uuid.uuid4().hex[:16]
    request = CompleteRequest(
        text=window.text,
        line=window.line,
        column=window.column,
        path=ls.profiles.display_path(uri),
        language=document.language_id,
        profile=profile,
        max_tokens=ls.options.max_tokens,
        request_id=request_id,
        context=context,
        repository=repository,
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
                if not event.text.strip():
                    return None
                shown = Shown.at(request_id, lines.text, offset, event.text)
                state.answered(uri, shown, profile.language if profile else None)
                others = tuple(a.text for a in event.alternatives if a.text.strip())
                return _answer(request_id, event.text, lines, line, column, others)
    except DaemonError as exc:
        log.warning("completion failed: %s", exc)
    return None


async def _context(
    ls: AssistServer,
    state: CompletionState,
    uri: str,
    text: str,
    line: int,
    language: str | None,
) -> tuple[list[ContextSnippet], str | None]:
    """Snippets of the rest of the workspace for a completion in ``uri``, and the workspace's
    name; none for a document that is not a file."""
    path = to_fs_path(uri)
    if path is None:
        return [], None
    file = Path(path)
    root = ls.profiles.root_for(file)
    try:
        snippets = await asyncio.to_thread(
            gather_context, file, text, line, root, state.recent, language=language
        )
    except Exception:  # context is a help: a completion without it is still a completion
        log.exception("gathering the workspace context for %s failed", uri)
        return [], root.name
    return snippets, root.name


def _answer(
    request_id: str,
    text: str,
    lines: DocumentLines,
    line: int,
    column: int,
    alternatives: tuple[str, ...] = (),
) -> Answer:
    before = lines.line(line)[max(0, column - _WORD_CHARS) : column]
    word = _WORD_BEFORE.search(before)
    typed = word.group(0) if word else ""
    return Answer(
        request_id,
        text,
        position=lines.to_client(line, column),
        typed=typed,
        word_start=lines.to_client(line, column - len(typed)),
        alternatives=alternatives,
    )


def feedback_command(answer: Answer) -> types.Command:
    return types.Command(
        title="assist: accepted",
        command=FEEDBACK_COMMAND,
        arguments=[{"requestId": answer.request_id, "accepted": True}],
    )


def completion_items(answer: Answer) -> list[types.CompletionItem]:
    """An item for the answer and one for each alternative, in that order. Clients filter
    items by the word before the cursor: each item replaces that word with itself plus its
    text, so it survives the filter."""
    typed = answer.typed
    items = []
    for rank, text in enumerate(answer.texts):
        first_line = text.split("\n", 1)[0]
        items.append(
            types.CompletionItem(
                label=(typed + first_line).strip() or text.strip()[:60],
                kind=types.CompletionItemKind.Snippet,
                detail="assist" if rank == 0 else f"assist (alternative {rank})",
                documentation=types.MarkupContent(kind=types.MarkupKind.PlainText, value=text),
                filter_text=typed + text,
                sort_text=str(rank),
                insert_text_format=types.InsertTextFormat.PlainText,
                text_edit=types.TextEdit(
                    range=types.Range(start=answer.word_start, end=answer.position),
                    new_text=typed + text,
                ),
                command=feedback_command(answer),
            )
        )
    return items


def inline_items(answer: Answer) -> list[types.InlineCompletionItem]:
    """The answer, then each alternative: VS Code cycles them (Alt+]), as does Neovim."""
    place = types.Range(start=answer.position, end=answer.position)
    return [
        types.InlineCompletionItem(insert_text=text, range=place, command=feedback_command(answer))
        for text in answer.texts
    ]


def register(server: AssistServer, state: CompletionState) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        types.InlineCompletionOptions(),  # pygls advertises the provider only with options
    )
    async def inline_completion(
        ls: AssistServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        if not ls.options.inline_completion:
            return None
        answer = await ask(ls, state, params.text_document.uri, params.position)
        if answer is None:
            return types.InlineCompletionList(items=[])
        return types.InlineCompletionList(items=inline_items(answer))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[".", "(", " "], resolve_provider=False),
    )
    async def completion(
        ls: AssistServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        if not ls.options.completion_items:
            return None
        answer = await ask(ls, state, params.text_document.uri, params.position)
        if answer is None:
            return types.CompletionList(is_incomplete=True, items=[])
        return types.CompletionList(is_incomplete=True, items=completion_items(answer))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def closed(ls: AssistServer, params: types.DidCloseTextDocumentParams) -> None:
        state.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def changed(ls: AssistServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = ls.workspace.get_text_document(uri)  # pygls applied the changes already
        state.edited(uri, document.source, list(params.content_changes))

    @server.command(FEEDBACK_COMMAND)
    async def feedback(ls: AssistServer, *args: Any) -> None:
        for item in args:
            if not isinstance(item, dict) or "requestId" not in item:
                continue
            body = state.feedback(str(item["requestId"]), bool(item.get("accepted", True)))
            if ls.connection is not None:
                await ls.connection.post("/v1/feedback", body)
