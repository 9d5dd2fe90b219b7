"""Python code below the cursor that has lost its header: the line at the cursor must open it.
On an empty line with deeper code below that the parser refuses (an unexpected indent), an
answer that leaves that code refused is no answer for the gap: a block lacks its ``if``,
``with``, ``def`` or ``except`` there."""

from __future__ import annotations

import functools

from daemon.checks.syntax import check_syntax
from daemon.cursor import Cursor
from daemon.indentation import indent_of, width

# The parser's word for a line deeper than its block allows.
_INDENT = "unexpected indent"


def _code_below(cursor: Cursor) -> int | None:
    """The index of the first line below the cursor that holds code, when it is deeper than
    the cursor's line; None otherwise (or when there is none)."""
    columns = width(indent_of(cursor.line_text))
    for index in range(cursor.line + 1, len(cursor.lines)):
        text = cursor.lines[index]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return index if width(indent_of(text)) > columns else None
    return None


@functools.lru_cache(maxsize=8)
def _refused_at(text: str) -> tuple[int, str] | None:
    """The line and message of the parser's first error in a Python ``text`` (None: it parses).
    Remembered: every candidate of one request is judged against the same document."""
    found = check_syntax("python", text)
    return (found[0].line, found[0].message) if found else None


def leaves_header_out(cursor: Cursor, inserted: str) -> bool:
    """Whether ``inserted`` at ``cursor`` (an empty line) leaves the deeper code below it
    refused as an unexpected indent, as the document without it is: the header that code
    needs is not what the answer wrote."""
    if cursor.line_text.strip() or not inserted.strip():
        return False
    below = _code_below(cursor)
    if below is None or _refused_at(cursor.prefix + cursor.suffix) != (below, _INDENT):
        return False
    shifted = below + inserted.count("\n")
    return _refused_at(cursor.prefix + inserted + cursor.suffix) == (shifted, _INDENT)
