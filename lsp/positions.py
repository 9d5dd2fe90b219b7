"""Positions between the editor (UTF-16 units by default) and the daemon (code points)."""

from __future__ import annotations

import difflib

from lsprotocol import types
from pygls.workspace import TextDocument


def to_daemon(document: TextDocument, position: types.Position) -> tuple[int, int]:
    """The editor's position as a 0-based (line, column in code points), clamped to the text."""
    lines = document.source.split("\n")  # as the daemon counts them
    line = min(position.line, len(lines) - 1)
    if line >= len(document.lines):
        return line, 0  # the empty line after a final newline
    clamped = types.Position(line=line, character=position.character)
    server = document.position_codec.position_from_client_units(document.lines, clamped)
    return line, min(server.character, len(lines[line].rstrip("\r")))


def to_client(document: TextDocument, line: int, column: int) -> types.Position:
    return document.position_codec.position_to_client_units(
        document.lines, types.Position(line=line, character=column)
    )


def replace_edit(document: TextDocument, new_text: str) -> types.TextEdit | None:
    """One edit that turns the document into ``new_text``, spanning only the changed lines."""
    old_lines = document.source.split("\n")
    new_lines = new_text.split("\n")
    if old_lines == new_lines:
        return None
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    blocks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    first_old, first_new = blocks[0][1], blocks[0][3]
    last_old, last_new = blocks[-1][2], blocks[-1][4]
    replacement = new_lines[first_new:last_new]
    document_end = to_client(document, len(old_lines) - 1, len(old_lines[-1]))
    if first_old == len(old_lines):
        # Lines added after the last one: insert at the very end.
        text = "".join("\n" + line for line in replacement)
        return types.TextEdit(
            range=types.Range(start=document_end, end=document_end), new_text=text
        )
    start = types.Position(line=first_old, character=0)
    if last_old < len(old_lines):
        end = types.Position(line=last_old, character=0)
        text = "".join(line + "\n" for line in replacement)
    else:
        # The change reaches the last line, which has no newline after it.
        end = document_end
        text = "\n".join(replacement)
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=text)
