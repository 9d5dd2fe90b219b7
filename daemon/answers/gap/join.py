"""Join a call the answer writes one argument per line onto the cursor's line.
Only when the joined line fits the line length, as the project's formatter would leave it.
"""

from __future__ import annotations

from daemon.cursor import Cursor
from daemon.lexer import CLOSERS, OPENERS, bracket_depths, brackets, first_closer

# Black's and ruff's default line length, for a workspace that does not say.
DEFAULT_LINE_LENGTH = 88
# Lines of the answer searched for the bracket that closes the cursor's.
MAX_JOINED_LINES = 12


# Typing ``echo(`` at the end of a line, a small code model often answers the way the calls around
# it are laid out: the arguments on the lines below, one per line, and the closing bracket on a
# line of its own. That is the layout a formatter (black, ruff format) gives a call too long for
# its line; a call that fits joins onto one line, and so does the author who typed the opening
# bracket and goes on typing. Left alone, the answer's first line is empty or a dangling argument,
# and the ghost text shows the call broken where the project's formatter would not.
#
# The lines up to the bracket that closes the one open at the cursor are joined onto the cursor's
# line when the joined line fits the line length, and the comma before that bracket that only the
# exploded layout wanted is dropped. Python only, where a newline inside brackets means nothing; an
# answer with a comment, a triple-quoted string or a line continuation in the part to join is left
# as written.
def join_exploded_call(
    answer: str, cursor: Cursor, language: str | None, line_length: int | None = None
) -> str:
    """The answer with the bracket open at the cursor closed on the cursor's line, when the
    answer closes it on a later line and the joined line fits ``line_length``."""
    before = cursor.before
    if language != "python" or cursor.after.strip() or brackets(before, language)[0] <= 0:
        return answer
    lines = answer.split("\n")
    found = _closing_line(lines[:MAX_JOINED_LINES], language)
    if found is None:
        return answer
    count = found + 1
    part = lines[:count]
    if any(mark in line for line in part for mark in ("#", '"""', "'''")) or any(
        line.rstrip().endswith("\\") for line in part
    ):
        return answer
    joined = _join([part[0].rstrip()] + [line.strip() for line in part[1:]])
    joined = _without_final_comma(joined, before.rstrip(), language)
    limit = line_length or DEFAULT_LINE_LENGTH
    if len(before) + len(joined) > limit:
        return answer
    return "\n".join([joined, *lines[count:]])


def _closing_line(lines: list[str], language: str) -> int | None:
    """The index of the first line that closes the bracket open before the first one; None
    when the first line closes it (nothing to join) or none of ``lines`` does."""
    depth = 0
    for index, line in enumerate(lines):
        inner = 0  # the depth after the line's last bracket, counted from its start
        for _, inner in bracket_depths(line, language):
            if depth + inner < 0:
                return index or None
        depth += inner
    return None


def _join(pieces: list[str]) -> str:
    """Pieces of code joined with a space, none after an opening bracket or before a closer."""
    joined = ""
    for piece in pieces:
        if not piece:
            continue
        if not joined or joined[-1] in OPENERS or piece[0] in CLOSERS:
            joined += piece
        else:
            joined += " " + piece
    return joined


def _without_final_comma(joined: str, typed: str, language: str) -> str:
    """``joined`` without a comma right before the bracket that closes the cursor's, unless
    that bracket is a bare parenthesis, where the comma may make a one-element tuple."""
    close = first_closer(joined, language)
    if close is None:
        return joined
    head = joined[:close].rstrip()
    if not head.endswith(","):
        return joined
    at = _innermost_opener(typed, language)
    opener = typed[at] if at is not None else ""
    name = typed[at - 1 : at] if at else ""
    called = opener == "(" and (name.isalnum() or name in ("_", ")", "]"))
    if opener != "(" or called:
        return head[:-1] + joined[close:]
    return joined


def _innermost_opener(typed: str, language: str) -> int | None:
    """The index in ``typed`` of the innermost bracket still open at its end."""
    scanned = list(bracket_depths(typed, language))
    final = scanned[-1][1] if scanned else 0
    found: int | None = None
    for index, depth in scanned:
        if depth == final and typed[index] in OPENERS:
            found = index
    return found
