"""Reading a completion server's event stream: the answer's chunks, and every way it can end."""

from __future__ import annotations

import json

import pytest

from daemon.engine.remote.server import Chunk, Unreachable, sse_chunks


def event(text: str, finish: str | None = None) -> str:
    return "data: " + json.dumps({"choices": [{"text": text, "finish_reason": finish}]})


def test_chunks_until_done():
    lines = [event("def"), "", ": a comment", event(" f"), event("", "stop"), "data: [DONE]"]
    assert list(sse_chunks(iter(lines))) == [Chunk("def"), Chunk(" f"), Chunk("", "stop")]


def test_a_finish_on_the_last_text_chunk():
    lines = [event("x", "length"), "data: [DONE]", event("never read")]
    assert list(sse_chunks(iter(lines))) == [Chunk("x", "length")]


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([event("a")], "ended before the answer did"),  # the connection closed: it died
        ([event("a"), "data: [DONE]"], "without finishing"),  # it dropped the answer
        (["data: {not json"], "not JSON"),
        (['data: {"error": {"message": "out of memory"}}'], "out of memory"),
    ],
)
def test_a_stream_that_breaks_off_is_unreachable(lines, why):
    with pytest.raises(Unreachable, match=why):
        list(sse_chunks(iter(lines)))
