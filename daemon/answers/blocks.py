"""Where a generated block ends, and the frame of a body before the model writes it.
A base model goes on past a function's end: the answer ends on the first line that leaves it."""

from __future__ import annotations

from daemon.engine.jobs import Until
from daemon.indentation import indent_of, width
from daemon.language import DEFAULT_HANDLING, language_info
from daemon.lexer import brackets


def _width(line: str) -> int:
    return width(indent_of(line))


def continuing(until: Until, written: str) -> Until:
    """``until`` for an answer that continues ``written`` (a body cut short and finished by
    a second job): the whole is judged, the cut given in the continuation's own offsets."""

    def judge(text: str) -> int | None:
        cut = until(written + text)
        return None if cut is None else max(0, cut - len(written))

    return judge


def block_end(base_indent: str, *, language: str | None, max_lines: int | None = None) -> Until:
    """An ``until`` for the engine: the answer ends before the first line that leaves the block.

    The answer starts at the cursor, so its first line continues the cursor's line and is not
    judged. Later non-blank lines less indented than ``base_indent`` leave the block, as does a
    closing bracket (outside strings and comments) that was not opened inside the answer.
    Trailing blank lines are dropped.
    """
    base = _width(base_indent)

    def until(text: str) -> int | None:
        lines = text.split("\n")[:-1]  # only complete lines
        depth = 0
        offset = 0
        for index, line in enumerate(lines):
            if index > 0 and line.strip() and _width(line) < base:
                return _trim_blank(text, offset)
            depth += brackets(line, language)[0]
            if depth < 0 and index > 0 and _width(line) < base:
                return _trim_blank(text, offset)
            offset += len(line) + 1
            if max_lines is not None and index + 1 >= max_lines:
                return _trim_blank(text, offset)
        return None

    return until


def _trim_blank(text: str, end: int) -> int:
    """Move ``end`` back over trailing blank lines (keeping the newline of the last code line)."""
    kept = text[:end].rstrip(" \t\n")
    return len(kept) + 1 if len(kept) < end else end


def body_placeholder(language: str | None) -> str:
    """The statement a skeleton puts in a body the model has not written yet."""
    info = language_info(language)
    return info.placeholder if info else "..."


def from_line_start(written: str, before_cursor: str, body_indent: str) -> str:
    """What to insert at the cursor for ``written``, text a model wrote from the start of the
    cursor's line (``line_start``): the whitespace already before the cursor is not typed
    again, and a first line the model indented differently starts at ``body_indent``."""
    first, newline, rest = written.partition("\n")
    code = first.lstrip(" \t")
    if not code:
        return written[len(before_cursor) :] if written.startswith(before_cursor) else written
    return lead_in(before_cursor, body_indent) + code + newline + rest


def lead_in(before_cursor: str, body_indent: str) -> str:
    """Indentation still to insert so the body starts at ``body_indent``."""
    if body_indent.startswith(before_cursor):
        return body_indent[len(before_cursor) :]
    return ""


def steering_comment(language: str | None, body_indent: str) -> str:
    """A comment line that asks a base model for validation and error handling first."""
    info = language_info(language)
    text = "Validate the arguments and handle errors first, then do the work."
    if info is None or (info.line_comment is None and info.block_comment is None):
        return ""
    if info.line_comment:
        return f"{info.line_comment} {text}\n{body_indent}"
    assert info.block_comment is not None
    start, end = info.block_comment
    return f"{start} {text} {end}\n{body_indent}"


def handling_markers(language: str | None, text: str) -> int:
    """How many error-handling or validation constructs ``text`` holds."""
    info = language_info(language)
    return len((info.handling if info else DEFAULT_HANDLING).findall(text))
