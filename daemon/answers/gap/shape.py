"""The shape of the gap at the cursor: how much a completion should write there."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from daemon.answers.gap.calls import open_brackets
from daemon.cursor import Cursor
from daemon.indentation import indent_of, width
from daemon.lexer import CLOSERS, rules

ShapeKind = Literal["line", "statement", "lines"]

_DEFAULT_UNIT = "    "
# A Python line that ends a header (and opens a block): a colon, a comment may follow.
_PY_HEADER_END = re.compile(r":\s*(#.*)?$")
# Any language: a line that ends with an opening bracket (a comment may follow).
_BRACKET_OPENER = re.compile(r"[{(\[]\s*(//.*|#.*|/\*.*\*/)?$")


# Read from the code around the cursor, before the model runs. ``line``: the cursor is inside a
# line with text after it, so finish that line; so too at the end of a line inside brackets that
# the code below goes on inside (Python: the rest of the call or literal is already written below).
# ``statement``: the cursor is on an empty line with code below at the block's indentation; the
# programmer inserts one statement there (one line, or the block that line opens), not the rest of
# the function. ``lines``: the cursor ends a block (the code below is less indented, or there is
# none), or a statement is under way at the end of its line; the next lines of the block.
# Indentation widths count a tab as four columns, as daemon.answers.blocks does.
@dataclass(frozen=True)
class Shape:
    """How much to write at the cursor, and the indentation the answer's lines take."""

    kind: ShapeKind
    # The block's indentation at the cursor: where the answer's lines sit.
    indent: str
    # The least indentation the first line may take: below ``indent`` only where a block ends
    # at the cursor and the first line may belong to an enclosing one.
    floor: str
    # What the cursor's line holds before the cursor (the answer's first line continues it).
    typed: str
    # One level of indentation in this file ("    ", "  " or "\t").
    unit: str
    # The indentation of the next line of code below the cursor (None: there is none). Code
    # below that is deeper than the answer's first line is the body of the block it opens.
    below: str | None = None
    # Most lines of the answer, counting the cursor's own line (None: no bound).
    max_lines: int | None = None

    @property
    def on_empty_line(self) -> bool:
        """Whether the cursor's line holds nothing but indentation before the cursor."""
        return self.kind != "line" and not self.typed.strip()


def blank_lead(lines: Sequence[str], shape: Shape) -> int:
    """How many of the answer's first ``lines`` are blank lines the gap skips: on an empty
    line the model's leading line breaks are not a line of the answer (elsewhere none are).
    ``len(lines)`` when every line is blank."""
    lead = 0
    if shape.on_empty_line:
        while lead < len(lines) and not lines[lead].strip():
            lead += 1
    return lead


def indent_unit(lines: list[str]) -> str:
    """One level of indentation in these lines: a tab when most indented lines start with one,
    else the most common step between the indentation of consecutive lines."""
    tabs = spaces = 0
    steps: Counter[int] = Counter()
    previous = 0
    for line in lines:
        if not line.strip():
            continue
        lead = indent_of(line)
        if lead.startswith("\t"):
            tabs += 1
        elif lead:
            spaces += 1
        current = width(lead)
        if current > previous:
            steps[current - previous] += 1
        previous = current
    if tabs > spaces:
        return "\t"
    usual = [step for step, _ in steps.most_common() if 2 <= step <= 8]
    return " " * usual[0] if usual else _DEFAULT_UNIT


def comment_mark(language: str | None) -> str | None:
    """What starts a line comment in ``language`` (``#`` where it is not given, as for Python;
    ``//`` for one assist does not know; None for one without line comments, such as CSS)."""
    return rules(language).line_comment


def ends_python_header(line: str) -> bool:
    """Whether the Python ``line`` ends a header (``def``, ``if``, ``else``...): its code
    ends with a colon, a comment may follow."""
    return bool(_PY_HEADER_END.search(line.rstrip()))


def opens_block(line: str, language: str | None) -> bool:
    """Whether ``line`` opens a block (or a bracket) whose body follows on the next lines."""
    if language == "python" and ends_python_header(line):
        return True
    return bool(_BRACKET_OPENER.search(line.rstrip()))


def _nonblank(lines: list[str], start: int, step: int) -> str | None:
    index = start
    while 0 <= index < len(lines):
        if lines[index].strip():
            return lines[index]
        index += step
    return None


def _goes_on_below(cursor: Cursor, following: str, language: str | None) -> bool:
    """Python: whether the cursor, at the end of a line, is inside brackets that the code below
    goes on inside: the next line closes one of them, or the cursor's line is itself inside
    brackets opened above and the next line is as indented (the next argument or item). The
    programmer is finishing one line of a construct whose rest is already written."""
    if language != "python":
        return False
    opened = open_brackets(cursor.prefix)
    if opened is None or opened[0] == 0:
        return False
    if following.strip()[0] in CLOSERS:
        return True
    return opened[1] > 0 and width(indent_of(following)) >= width(indent_of(cursor.line_text))


def gap_shape(cursor: Cursor, language: str | None) -> Shape:
    """Decide how much to write at ``cursor`` from the code around it."""
    lines = cursor.lines
    before, after = cursor.before, cursor.after.rstrip("\r")
    unit = indent_unit(lines)
    line_indent = indent_of(cursor.line_text)
    if after.strip():
        return Shape("line", line_indent, line_indent, before, unit, None)
    following = _nonblank(lines, cursor.line + 1, 1)
    below = indent_of(following) if following is not None else None
    if before.strip():
        kind: ShapeKind = "lines"
        if following is not None and _goes_on_below(cursor, following, language):
            kind = "line"
        return Shape(kind, line_indent, line_indent, before, unit, below)
    previous = _nonblank(lines, cursor.line - 1, -1)
    opener = previous is not None and opens_block(previous, language)
    if before:
        indent = before
    elif previous is None:
        indent = ""
    elif opener:
        indent = indent_of(previous) + unit
    else:
        indent = indent_of(previous)
    if following is not None and width(indent_of(following)) >= width(indent):
        # Only a header whose body is the code below may sit less indented than ``indent``.
        floor = indent if before or opener else ""
        return Shape("statement", indent, floor, before, unit, below)
    # The block ends here: the first line may also take an enclosing block's indentation,
    # down to the code below, unless indentation is already typed or the line opens a body.
    floor = indent
    if not (before or opener):
        floor = below or ""
    return Shape("lines", indent, floor, before, unit, below)
