"""Editor positions and minimal edits between the editor and the daemon."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from lsp.positions import replace_edit, to_daemon


def apply(text: str, edit: types.TextEdit) -> str:
    document = TextDocument("file:///x.py", text)
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        server = document.position_codec.position_from_client_units(document.lines, position)
        return sum(len(line) + 1 for line in lines[: server.line]) + server.character

    start, end = offset(edit.range.start), offset(edit.range.end)
    return text[:start] + edit.new_text + text[end:]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("def f(x)\n    return x\n", "def f(x):\n    return x\n"),
        ("a\nb\nc", "a\nB\nc"),
        ("a\nb\nc", "a\nb\nC"),
        ("a\nb", "a\nb\nc\nd"),
        ("a\nb\n", "x\na\nb\n"),
        ("a\nb\nc\n", "a\n"),
        ("x = 'é😀'\ny(", "x = 'é😀'\ny()\n"),
    ],
)
def test_replace_edit_turns_the_old_text_into_the_new(old, new):
    edit = replace_edit(TextDocument("file:///x.py", old), new)
    assert edit is not None
    assert apply(old, edit) == new


def test_no_edit_for_the_same_text():
    assert replace_edit(TextDocument("file:///x.py", "a\n"), "a\n") is None


def test_utf16_columns_become_code_points():
    document = TextDocument("file:///x.py", "s = '😀'; t\n")
    # '😀' is two UTF-16 units: the client's column 10 is the daemon's column 9.
    assert to_daemon(document, types.Position(line=0, character=10)) == (0, 9)
    assert to_daemon(document, types.Position(line=7, character=0))[0] == 1
