"""The router: decide per request between the fast path and the deep path, with budgets.
The fast path finishes a line or writes the next short one; the deep path, a whole body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from daemon.answers.gap import Shape, gap_shape
from daemon.cursor import Cursor
from daemon.protocol import RouteKind
from daemon.settings import Settings

# Python block openers whose body starts on the next line.
_PY_HEADER = re.compile(r"^\s*(async\s+def|def|class)\b.*:\s*(#.*)?$")
_BRACE_LANGUAGES = frozenset(
    {
        "javascript",
        "javascriptreact",
        "typescript",
        "typescriptreact",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "kotlin",
        "swift",
        "scala",
        "dart",
        "php",
    }
)


@dataclass(frozen=True)
class Route:
    """Fast or deep, why, and the budgets. The fast path is one pass with a small token and time
    budget: finishing a line or writing the next short line. The deep path is staged (skeleton,
    logic, error handling, final) with a larger budget: a whole body after a signature or
    docstring, or a repair. Every budget is a setting; a request may state its own, within the
    daemon's limits."""

    kind: RouteKind
    reason: str
    max_tokens: int
    deadline_ms: int
    # How much to write at the cursor (on the deep path: the lines of the body).
    shape: Shape
    # The indentation of the body a deep completion writes ("" on the fast path).
    body_indent: str = ""
    # Fast mode (a user who accepts most answers): the deep path without its errors pass.
    skip_errors: bool = False

    @property
    def stages(self) -> tuple[str, ...]:
        if self.kind == "deep" and not self.skip_errors:
            return ("skeleton", "logic", "errors", "final")
        return ("skeleton", "logic", "final")


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _previous_nonblank(lines: list[str], before: int) -> tuple[int, str] | None:
    for index in range(before - 1, -1, -1):
        if lines[index].strip():
            return index, lines[index]
    return None


def _next_nonblank(lines: list[str], after: int) -> str | None:
    for index in range(after + 1, len(lines)):
        if lines[index].strip():
            return lines[index]
    return None


def _python_docstring_end(lines: list[str], end: int) -> int | None:
    """If ``lines[end]`` closes a docstring that directly follows a def, the def's line index."""
    closing = lines[end].rstrip()
    if not (closing.endswith('"""') or closing.endswith("'''")):
        return None
    quote = closing[-3:]
    start = end
    if closing.strip().count(quote) < 2 or closing.strip() == quote:
        start = end - 1
        while start >= 0 and quote not in lines[start]:
            start -= 1
    if start <= 0:
        return None
    header = _previous_nonblank(lines, start)
    if header and _PY_HEADER.match(header[1]):
        return header[0]
    return None


def empty_body_at(cursor: Cursor, language: str | None) -> str | None:
    """The body indentation when the cursor starts an empty body after a signature, else None."""
    lines, line = cursor.lines, cursor.line
    before, after = cursor.before, cursor.after
    if before.strip() or after.strip():
        return None
    previous = _previous_nonblank(lines, line)
    if previous is None:
        return None
    index, prev_line = previous
    following = _next_nonblank(lines, line)
    if language == "python":
        opener = index if _PY_HEADER.match(prev_line) else _python_docstring_end(lines, index)
        if opener is None:
            return None
        header_indent = _indent_of(lines[opener])
        if following is not None and len(_indent_of(following)) > len(header_indent):
            return None  # the body already has code below the cursor
        return before if len(before) > len(header_indent) else header_indent + "    "
    if language in _BRACE_LANGUAGES and prev_line.rstrip().endswith("{"):
        if following is not None and not following.strip().startswith("}"):
            return None
        header_indent = _indent_of(prev_line)
        unit = "\t" if header_indent.startswith("\t") else "    "
        return before if len(before) > len(header_indent) else header_indent + unit
    return None


def decide_route(
    settings: Settings,
    cursor: Cursor,
    language: str | None,
    mode: str = "auto",
    max_tokens: int | None = None,
    deadline_ms: int | None = None,
) -> Route:
    """Fast or deep, why, and the budgets (the request's own, when it states them)."""
    body_indent = empty_body_at(cursor, language)
    shape = gap_shape(cursor, language)
    if mode == "deep" or (mode == "auto" and body_indent is not None):
        kind: RouteKind = "deep"
        if mode == "deep" and body_indent is None:
            reason = "the request asked for the deep path"
            body_indent = _indent_of(cursor.before)
        else:
            reason = "an empty body after a signature: write the whole body"
        tokens, deadline = settings.deep_max_tokens, settings.deep_deadline_ms
        body = body_indent or ""
        shape = replace(shape, kind="lines", indent=body, floor=body)
    else:
        kind = "fast"
        if mode == "fast":
            reason = "the request asked for the fast path"
        elif cursor.after.strip():
            reason = "the cursor is inside a line: finish it"
        elif shape.kind == "line":
            reason = "a line inside brackets the code below goes on with: finish the line"
        elif cursor.before.strip():
            reason = "a statement is under way: finish it"
        elif shape.kind == "statement":
            reason = "an empty line above code of its block: write one statement"
        else:
            reason = "a new line at the end of a block: write its next lines"
        tokens, deadline = settings.fast_max_tokens, settings.fast_deadline_ms
        body_indent = ""
    # A client that states its own budget knows what it wants (the service caps it by limits).
    if max_tokens is not None:
        tokens = max_tokens
    if deadline_ms is not None:
        deadline = deadline_ms
    return Route(kind, reason, tokens, deadline, shape, body_indent or "")
