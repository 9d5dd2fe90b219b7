"""A first line no later line can mend: Python's parser refuses the document cut after it.
A number alone on a line of its own is refused the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence

from daemon.answers.gap.calls import open_brackets
from daemon.answers.gap.shape import Shape, blank_lead
from daemon.checks.syntax import python_cut_error
from daemon.checks.verify import Verdict
from daemon.cursor import Cursor

# The rule's name, as ``trim_to_gap`` and the engine's ``until`` report it.
BROKEN_LINE = "drop_broken_line"
# Errors other rules may mend on the way (a closer too many, a comma the code below does not
# take): the engine's ``until`` leaves them to ``trim_to_gap``, which judges after those rules.
_MENDED_LATER = ("unmatched ", "closing parenthesis ")
# A number literal (with its sign), the whole of a line.
_NUMBER = re.compile(
    r"[-+]?(?:0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?j?)"
)


# A Python line ends its statement unless a bracket, a string or a backslash carries it on. The
# document cut after the answer's first line then shows an error on that line that nothing
# written after it can mend: a line of prose where code goes (``1. The host is not valid.``), or a
# line break where the statement being typed is unfinished (``from x import a, b,`` followed by
# the next line). Nothing after the cursor on its line, or the rest of the line would follow the
# answer's end instead; the parser alone judges (a ``nonlocal`` may be bound below).
def broken_first_line(
    lines: Sequence[str],
    cursor: Cursor,
    language: str | None,
    shape: Shape,
    *,
    final: bool = True,
) -> str | None:
    """Why the answer's first line (its first non-blank one on an empty line) cannot stand, or
    None when it can or cannot be judged. ``final``: the answer's text is the trimmed one (else
    the errors the trimming rules may mend are not judged)."""
    if language != "python" or cursor.after.strip():
        return None
    lead = blank_lead(lines, shape)
    if lead and lead == len(lines):
        return None
    first = lines[lead] if lead < len(lines) else ""
    if not final and first.rstrip().endswith(","):
        return None  # drop_stray_comma may take the comma off
    error = python_cut_error(cursor.prefix + "\n".join(lines[: lead + 1]))
    if error is not None and error.line == cursor.line + lead:
        if not final and error.message.startswith(_MENDED_LATER):
            return None
        return f"its first line does not parse (line {error.line + 1}: {error.message})"
    if shape.on_empty_line and _number_statement(first, cursor):
        return "its first line is a number alone, a statement that does nothing"
    return None


# In the standard library and the six packages of the real-code benchmark, none of 101,440
# statements is a number alone; on a new line the model writes one where it has nothing better
# (``0``, ``1007``, the ``3.11`` of the header's Python version).
def _number_statement(line: str, cursor: Cursor) -> bool:
    """Whether ``line``, written on the cursor's empty line, is a number alone outside any
    bracket: a statement of its own."""
    if _NUMBER.fullmatch(line.strip()) is None:
        return False
    opened = open_brackets(cursor.prefix)
    return opened is not None and opened[0] == 0


def refusal(why: str) -> Verdict:
    """The verdict on an answer ``broken_first_line`` refused."""
    return Verdict(False, f"the answer failed verification ({why})")
