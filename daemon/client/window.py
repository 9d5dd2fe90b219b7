"""The part of a large document a completion request sends: a window around the cursor.
Whole lines around the cursor (three quarters before it), or characters for a minified line."""

from __future__ import annotations

from dataclasses import dataclass

# Characters sent at most: far more than any prompt holds, far less than the request limit
# (even at four bytes a character).
WINDOW_CHARS = 256 * 1024


@dataclass(frozen=True)
class Window:
    text: str
    line: int  # the cursor's 0-based line inside ``text``
    column: int  # the cursor's column inside ``text``, in code points
    first_line: int  # the document's line that is the window's first


def window_around(text: str, line: int, column: int, limit: int = WINDOW_CHARS) -> Window:
    """The window of ``text`` around (line, column); the whole text when it fits ``limit``."""
    if len(text) <= limit:
        return Window(text, line, column, 0)
    lines = text.split("\n")
    if line >= len(lines):
        return Window(text, line, column, 0)  # the daemon says what is wrong with the position
    current = lines[line]
    if len(current) > limit // 2:
        start = max(0, column - limit * 3 // 8)
        piece = current[start : column + limit // 8]
        return Window(piece, 0, min(column - start, len(piece)), line)
    room = limit - len(current)
    before_room = room * 3 // 4
    first = line
    while first > 0 and len(lines[first - 1]) + 1 <= before_room:
        first -= 1
        before_room -= len(lines[first]) + 1
    after_room = room - (room * 3 // 4 - before_room)
    last = line
    while last + 1 < len(lines) and len(lines[last + 1]) + 1 <= after_room:
        last += 1
        after_room -= len(lines[last]) + 1
    return Window("\n".join(lines[first : last + 1]), line - first, column, first)
