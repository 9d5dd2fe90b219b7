"""Positions between the editor (UTF-16 units by default) and the daemon (code points).
The daemon counts lines as the text split at ``\\n``.
"""

from __future__ import annotations

import difflib

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

_STEP = 1 << 16  # characters whose newlines are counted at once


def line_start(text: str, line: int) -> int:
    """The offset at which the 0-based ``line`` of ``text`` starts; -1 past the last line.
    Newlines are counted in large steps instead of splitting the text, so that a position in a
    very large document costs a scan of the text, not a list of all its lines."""
    start = 0
    remaining = line
    while remaining > 0:
        end = min(start + _STEP, len(text))
        count = text.count("\n", start, end)
        if count < remaining:
            if end == len(text):
                return -1
            remaining -= count
            start = end
            continue
        for _ in range(remaining):
            start = text.index("\n", start) + 1
        return start
    return start


class DocumentLines:
    """One version of a document's text, with its lines as the daemon counts them."""

    def __init__(self, document: TextDocument) -> None:
        self.text = document.source
        self.codec: PositionCodec = document.position_codec
        self.count = self.text.count("\n") + 1
        self._found: tuple[int, int, str] | None = None  # the last line looked up

    def _line(self, line: int) -> tuple[int, str]:
        """(start offset, text without its newline) of a line that exists."""
        if self._found is None or self._found[0] != line:
            start = line_start(self.text, line)
            end = self.text.find("\n", start)
            self._found = (line, start, self.text[start : end if end >= 0 else len(self.text)])
        return self._found[1], self._found[2]

    def line(self, line: int) -> str:
        return self._line(line)[1]

    def to_daemon(self, position: types.Position) -> tuple[int, int]:
        """The editor's position as a 0-based (line, column in code points), clamped."""
        line = min(position.line, self.count - 1)
        text = self.line(line)
        # Clamp in the client's units first: the codec's own clamping assumes that the line
        # still ends with its newline.
        character = min(position.character, self.codec.client_num_units(text))
        server = self.codec.position_from_client_units(
            [text], types.Position(line=0, character=character)
        )
        return line, min(server.character, len(text.rstrip("\r")))

    def to_client(self, line: int, column: int) -> types.Position:
        if line >= self.count:
            return types.Position(line=self.count, character=0)
        units = self.codec.client_num_units(self.line(line)[:column])
        return types.Position(line=line, character=units)

    def offset(self, line: int, column: int) -> int:
        """The code point offset of (line, column) in the text."""
        return self._line(line)[0] + column


def to_daemon(document: TextDocument, position: types.Position) -> tuple[int, int]:
    """The editor's position as a 0-based (line, column in code points), clamped to the text."""
    return DocumentLines(document).to_daemon(position)


def to_client(document: TextDocument, line: int, column: int) -> types.Position:
    return DocumentLines(document).to_client(line, column)


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
