"""Repairs the parser itself points at: the cheapest candidates of a fix.
Each hint becomes a candidate document, accepted only if the whole file then parses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from daemon.checks.syntax import Diagnostic
from daemon.indentation import indent_of
from daemon.repair.layout import code_end

_CLOSER = {"(": ")", "[": "]", "{": "}"}
_NEVER_CLOSED = re.compile(r"'([(\[{])' was never closed")
_UNMATCHED = re.compile(r"unmatched '([)\]}])'")
_MISMATCHED = re.compile(
    r"closing parenthesis '([)\]}])' does not match opening parenthesis '([(\[{])'$"
)


def _replace_line(lines: list[str], index: int, new: str) -> str:
    return "\n".join([*lines[:index], new, *lines[index + 1 :]])


def _insert(lines: list[str], line: int, column: int, text: str) -> str:
    target = lines[line]
    return _replace_line(lines, line, target[:column] + text + target[column:])


def hint_candidates(language: str, text: str, problems: list[Diagnostic]) -> list[str]:
    """Candidate documents from the parser's own hints, most specific first, without repeats.

    A parser often knows exactly what is missing: tree-sitter inserts a MISSING ``)`` node,
    Python says "expected ':'" or "'(' was never closed"."""
    seen: set[str] = set()
    found: list[str] = []
    for candidate in _all_hints(language, text, problems):
        if candidate != text and candidate not in seen:
            seen.add(candidate)
            found.append(candidate)
    return found


def _all_hints(language: str, text: str, problems: list[Diagnostic]) -> Iterator[str]:
    lines = text.split("\n")
    inserts = [p for p in problems if p.insert and p.line < len(lines)]
    if inserts:
        # Every missing token at once (a missing brace and the semicolon after it), then each.
        combined = lines[:]
        for problem in sorted(inserts, key=lambda p: (p.line, p.column), reverse=True):
            assert problem.insert is not None
            target = combined[problem.line]
            combined[problem.line] = (
                target[: problem.column] + problem.insert + target[problem.column :]
            )
        yield "\n".join(combined)
        for problem in inserts:
            assert problem.insert is not None
            yield _insert(lines, problem.line, problem.column, problem.insert)
    for problem in problems:
        if problem.line >= len(lines):
            continue
        if language == "python":
            yield from _python_hints(lines, problem)
        elif not problem.insert:
            yield from _delete_stray(lines, problem)


def _delete_stray(lines: list[str], problem: Diagnostic) -> Iterator[str]:
    """An unexpected short token on one line: try the document without it."""
    if problem.end_line != problem.line:
        return
    line = lines[problem.line]
    stray = line[problem.column : problem.end_column]
    if 0 < len(stray.strip()) <= 3:
        yield _replace_line(
            lines, problem.line, line[: problem.column] + line[problem.end_column :]
        )


def _python_hints(lines: list[str], problem: Diagnostic) -> Iterator[str]:
    message = problem.message
    index, column = problem.line, problem.column
    line = lines[index]
    if message.startswith("expected ':'"):
        yield _insert(lines, index, min(column, len(line)), ":")
        yield _insert(lines, index, code_end("python", line), ":")
    elif match := _NEVER_CLOSED.search(message):
        closer = _CLOSER[match.group(1)]
        for offset in range(0, 4):
            target = index + offset
            if target >= len(lines) or (offset and not lines[target].strip()):
                break
            yield _insert(lines, target, code_end("python", lines[target]), closer)
    elif match := _UNMATCHED.search(message):
        if line[column : column + 1] == match.group(1):
            yield _replace_line(lines, index, line[:column] + line[column + 1 :])
    elif match := _MISMATCHED.search(message):
        # ``[a, b)``: the bracket opened on this line lost its closer before this one.
        if line[column : column + 1] == match.group(1):
            yield _insert(lines, index, column, _CLOSER[match.group(2)])
    elif message.startswith("unterminated string literal"):
        quote = line[column : column + 1]
        if quote in ("'", '"'):
            yield _insert(
                lines, index, code_end("python", line) if "#" not in line else len(line), quote
            )
    elif message.startswith("unexpected indent"):
        yield from _reindent(lines, index, _enclosing_indents(lines, index, include_same=True))
    elif message.startswith("unindent does not match"):
        yield from _reindent(lines, index, _enclosing_indents(lines, index, include_same=False))
    elif message.startswith("expected an indented block"):
        previous = _previous_code(lines, index)
        unit = (
            "\t" if previous is not None and indent_of(lines[previous]).startswith("\t") else "    "
        )
        base = indent_of(lines[previous]) if previous is not None else ""
        yield _replace_line(lines, index, base + unit + line.lstrip(" \t"))
    elif "Perhaps you forgot a comma" in message and problem.end_line == index:
        segment = line[column : problem.end_column]
        for offset, char in enumerate(segment):
            if char == " " and offset and segment[offset - 1] != " ":
                yield _insert(lines, index, column + offset, ",")
    elif "Maybe you meant '=='" in message:
        equals = line.find("=", column)
        if equals >= 0:
            yield _insert(lines, index, equals, "=")
    elif message.startswith("invalid syntax"):
        yield from _delete_stray(lines, problem)


def _previous_code(lines: list[str], index: int) -> int | None:
    for candidate in range(index - 1, -1, -1):
        if lines[candidate].strip() and not lines[candidate].lstrip().startswith("#"):
            return candidate
    return None


def _enclosing_indents(lines: list[str], index: int, include_same: bool) -> list[str]:
    """Indentation levels a line may take, from the lines above it, nearest first."""
    levels: list[str] = []
    current = len(indent_of(lines[index]).expandtabs(4))
    for candidate in range(index - 1, -1, -1):
        if not lines[candidate].strip() or lines[candidate].lstrip().startswith("#"):
            continue
        indent = indent_of(lines[candidate])
        width = len(indent.expandtabs(4))
        if (width < current or (include_same and width <= current)) and indent not in levels:
            levels.append(indent)
        if width == 0:
            break
    return levels


def _reindent(lines: list[str], index: int, levels: list[str]) -> Iterator[str]:
    body = lines[index].lstrip(" \t")
    for level in levels:
        yield _replace_line(lines, index, level + body)
