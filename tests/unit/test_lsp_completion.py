"""Completions in the language server, with the daemon connection as the only seam: what the
feature remembers stays bounded, large documents go to the daemon as a window, and the edits
come back at the cursor's place in the whole document."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from lsprotocol import types

from daemon.client.window import WINDOW_CHARS
from daemon.protocol import Alternative, DoneEvent, Timings
from lsp import completion
from lsp.completion import ANSWERS_KEPT, CompletionState, Shown, still_possible
from lsp.options import AssistOptions
from lsp.server import AssistServer

URI = "untitled:big.py"


class FakeDaemon:
    """Stands in for the daemon connection: answers every completion with ``answer``."""

    url = "http://127.0.0.1:1"
    state = "ready"
    health = None

    def __init__(self, answer: str = "return 42", alternatives: tuple[str, ...] = ()) -> None:
        self.answer = answer
        self.alternatives = alternatives
        self.requests: list[dict[str, Any]] = []
        self.posts: list[tuple[str, dict[str, Any]]] = []

    async def stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[Any]:
        self.requests.append(body)
        yield DoneEvent(
            request_id=body["request_id"],
            text=self.answer,
            cached=False,
            finish_reason="stop",
            timings=Timings(total_ms=1.0),
            alternatives=[Alternative(text=text) for text in self.alternatives],
        )

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.posts.append((path, body))
        return {}

    async def close(self) -> None:
        pass


class Sink:
    """The client's end of the transport: what the server sends is decoded and kept."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


def started_server() -> tuple[AssistServer, CompletionState, FakeDaemon]:
    """A language server past `initialize`, its daemon connection a ``FakeDaemon``."""
    ls = AssistServer()
    state = CompletionState()
    completion.register(ls, state)
    ls.protocol.set_writer(Sink(), include_headers=False)
    # What the client's `initialize` does: a workspace, here with UTF-16 positions.
    for _ in ls.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities())
    ):
        pass
    ls.options = AssistOptions(debounce_ms=0)
    daemon = FakeDaemon()
    ls.connection = daemon  # type: ignore[assignment]
    return ls, state, daemon


@pytest.fixture
def server() -> tuple[AssistServer, CompletionState, FakeDaemon]:
    return started_server()


def open_document(ls: AssistServer, text: str, version: int = 1) -> None:
    ls.workspace.put_text_document(
        types.TextDocumentItem(uri=URI, language_id="python", version=version, text=text)
    )


async def inline(ls: AssistServer, line: int, character: int) -> types.InlineCompletionList:
    handler = ls.protocol.fm.features[types.TEXT_DOCUMENT_INLINE_COMPLETION]
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )
    result: types.InlineCompletionList = await handler(params)
    return result


async def items(ls: AssistServer, line: int, character: int) -> types.CompletionList:
    handler = ls.protocol.fm.features[types.TEXT_DOCUMENT_COMPLETION]
    params = types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        position=types.Position(line=line, character=character),
    )
    result: types.CompletionList = await handler(params)
    return result


async def feedback(ls: AssistServer, request_id: str, accepted: bool = True) -> None:
    handler = ls.protocol.fm.commands[completion.FEEDBACK_COMMAND]
    await handler({"requestId": request_id, "accepted": accepted})


def request_id(result: types.InlineCompletionList) -> str:
    command = result.items[0].command
    assert command is not None and command.arguments
    return str(command.arguments[0]["requestId"])


async def test_a_long_session_keeps_a_bounded_number_of_answers(server):
    """Regression: the language of every answer was kept until its feedback came, which for
    most answers is never, so a long editing session grew it without bound."""
    ls, state, daemon = server
    daemon.answer = "x" * (4 * ANSWERS_KEPT)
    text = "def f():\n    "
    ids = []
    for version in range(3 * ANSWERS_KEPT):
        text += "x"  # the user types the answer on: each answer is for a new position
        open_document(ls, text, version)
        result = await inline(ls, 1, len(text.split("\n")[1]))
        ids.append(request_id(result))
    assert len(set(ids)) == len(ids)
    assert not daemon.posts  # none was rejected, none was accepted: no feedback yet
    assert len(state.languages) <= ANSWERS_KEPT
    for answer in ids:
        await feedback(ls, answer, accepted=True)
    assert len(state.accepted) <= ANSWERS_KEPT
    # Feedback on a recent answer still names its language; the oldest are forgotten.
    sent = {body["request_id"]: body for path, body in daemon.posts if path == "/v1/feedback"}
    assert sent[ids[-1]]["language"] == "python"
    assert sent[ids[0]]["language"] is None


async def test_a_large_document_sends_a_window_and_edits_at_the_document_position(server):
    ls, _, daemon = server
    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40_000))
    cursor_line = filler.count("\n")
    text = filler + "s = '😀'; val" + "\n" + filler
    assert len(text) > 4 * WINDOW_CHARS
    open_document(ls, text)
    # '😀' is two UTF-16 units: the client's column 13 is the daemon's column 12.
    result = await inline(ls, cursor_line, 13)
    sent = daemon.requests[-1]
    assert len(sent["text"]) <= WINDOW_CHARS
    window_lines = sent["text"].split("\n")
    assert sent["line"] < cursor_line
    assert window_lines[sent["line"]][: sent["column"]] == "s = '😀'; val"
    here = types.Position(line=cursor_line, character=13)
    assert result.items[0].range == types.Range(start=here, end=here)

    listed = await items(ls, cursor_line, 13)
    edit = listed.items[0].text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.range == types.Range(start=types.Position(line=cursor_line, character=10), end=here)
    assert edit.new_text == "val" + daemon.answer


async def test_one_enormous_line_is_completed_at_its_own_column(server):
    ls, _, daemon = server
    text = "var a=1;" * 100_000 + "\nlast();\n"  # minified: 800,000 characters on line 0
    open_document(ls, text)
    column = 500_000
    result = await inline(ls, 0, column)
    sent = daemon.requests[-1]
    assert len(sent["text"]) <= WINDOW_CHARS
    assert sent["line"] == 0 and sent["column"] < column
    assert sent["text"][: sent["column"]].endswith(text[column - 100 : column])
    here = types.Position(line=0, character=column)
    assert result.items[0].range == types.Range(start=here, end=here)


async def test_an_answer_typed_away_from_is_reported_rejected_unless_accepted(server):
    ls, _, daemon = server
    text = "def f():\n    "
    open_document(ls, text)
    shown = request_id(await inline(ls, 1, 4))
    changed = text + "pass\n    "
    open_document(ls, changed, 2)
    await inline(ls, 2, 4)
    await posted(daemon, 1)
    assert daemon.posts == [
        ("/v1/feedback", {"request_id": shown, "accepted": False, "language": "python"})
    ]
    # An accepted answer that the user then typed away from is not reported again.
    accepted = request_id(await inline(ls, 2, 4))
    await feedback(ls, accepted)
    open_document(ls, changed + "y = 1\n    ", 3)
    await inline(ls, 3, 4)
    await asyncio.sleep(0.1)  # time for a rejection that should not be sent
    assert [body["accepted"] for _, body in daemon.posts] == [False, True]
    assert daemon.posts[1][1]["request_id"] == accepted


async def posted(daemon: FakeDaemon, count: int) -> None:
    """Rejections are posted in the background: wait for ``count`` posts."""
    for _ in range(200):
        if len(daemon.posts) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(daemon.posts)} feedback posts, expected {count}")


def test_a_shown_answer_is_still_possible_while_its_characters_are_typed():
    before = "def f():\n    "
    shown = Shown.at("r1", before + "\n", len(before), "return 42")

    def possible(text: str) -> bool:
        return still_possible(shown, text, len(text))

    assert possible(before)
    assert possible(before + "ret")
    assert possible(before + "return 42\n    ")  # accepted, then went on
    assert not possible(before + "pass")  # typed something else
    assert not possible("def g():\n    ")  # elsewhere
    assert not possible("def f():\n")  # deleted back past where it was shown


def test_a_shown_answer_in_a_large_document_keeps_only_its_context():
    text = "x = 1\n" * 200_000
    shown = Shown.at("r1", text, len(text), "y = 2")
    assert len(shown.context) < 10_000
    assert still_possible(shown, text + "y =", len(text) + 3)
    edited = text[:-6] + "x = 9\n"  # just before the cursor: the answer is no longer possible
    assert not still_possible(shown, edited + "y =", len(text) + 3)


async def test_the_alternatives_come_as_further_items_in_order(server):
    ls, _, daemon = server
    daemon.alternatives = ("return 0", "", "return None")
    open_document(ls, "def f():\n    ")
    result = await inline(ls, 1, 4)
    assert [item.insert_text for item in result.items] == ["return 42", "return 0", "return None"]
    ids = {item.command.arguments[0]["requestId"] for item in result.items}  # type: ignore[union-attr,index]
    assert ids == {request_id(result)}  # accepting any of them is feedback on the answer
    listed = await items(ls, 1, 4)
    assert [item.text_edit.new_text for item in listed.items] == [  # type: ignore[union-attr]
        "return 42",
        "return 0",
        "return None",
    ]
    assert [item.sort_text for item in listed.items] == ["0", "1", "2"]
