"""Drop the comments an answer writes after the code on a line (``  # call f``)."""

from __future__ import annotations

from collections import deque

from daemon.cursor import Cursor
from daemon.lexer import lex, rules

# A word the lexer reads as code only where the text before it is code.
_PROBE = "assist_probe_"


def _line_starts_in_code(cursor: Cursor, language: str | None) -> bool:
    """Whether the cursor's line starts outside a string and a comment that began above it."""
    above = cursor.prefix[: len(cursor.prefix) - len(cursor.before)]
    last = deque(lex(language, f"{above}{_PROBE}"), maxlen=1)
    return bool(last) and last[0].kind == "word" and last[0].text == _PROBE


# On the real-code benchmark's 306 lines (tests/bench/bench_realcode.py), the bare model ended a
# line of code with a comment of its own 5 times and assist 3 times (``  # indicates that this
# thread has finished``, ``  # type: ignore[not-iterable]``); not once was it the author's. A
# comment the model invents is one the programmer deletes, and a directive it invents (a type
# checker's ignore, a linter's) silences a check nobody asked to silence. So where a line of the
# answer holds code and then a line comment, the comment is dropped with the blanks before it; a
# line that is only a comment stays, and so does a comment begun before the cursor.
def drop_trailing_comments(answer: str, cursor: Cursor, language: str | None) -> str:
    """The answer without the line comments it writes after code on a line."""
    if not answer or rules(language).line_comment is None:
        return answer
    before = cursor.before
    code_on: set[int] = set()
    cuts: dict[int, int] = {}
    for token in lex(language, before + answer, comments=True):
        if token.kind != "comment":
            code_on.add(token.line + token.text.count("\n"))  # a string's last line too
            code_on.add(token.line)
        elif token.line in code_on and (token.line or token.column >= len(before)):
            cuts[token.line] = token.column
    if not cuts or not _line_starts_in_code(cursor, language):
        return answer
    lines = (before + answer).split("\n")
    for index, column in cuts.items():
        kept = lines[index][:column].rstrip()
        lines[index] = kept if index or len(kept) >= len(before) else before
    return "\n".join(lines)[len(before) :]
