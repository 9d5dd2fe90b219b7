"""A first line no later line can mend: Python's parser refuses the document cut after it."""

from __future__ import annotations

from collections.abc import Sequence

from daemon.answers.gap.shape import Shape, blank_lead
from daemon.checks.syntax import python_cut_error
from daemon.checks.verify import Verdict
from daemon.cursor import Cursor

# The rule's name, as ``trim_to_gap`` and the engine's ``until`` report it.
BROKEN_LINE = "drop_broken_line"
# Errors other rules may mend on the way (a closer too many, a comma the code below does not
# take): the engine's ``until`` leaves them to ``trim_to_gap``, which judges after those rules.
_MENDED_LATER = ("unmatched ", "closing parenthesis ")


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
    if error is None or error.line != cursor.line + lead:
        return None
    if not final and error.message.startswith(_MENDED_LATER):
        return None
    return f"its first line does not parse (line {error.line + 1}: {error.message})"


def refusal(why: str) -> Verdict:
    """The verdict on an answer ``broken_first_line`` refused."""
    return Verdict(False, f"the answer failed verification ({why})")
