"""A rough lexer for broken code: tokens and brackets, with strings and comments skipped.

A repair needs to see a broken file's structure where a real parser gives up: which brackets
are open, where each one is closed, which tokens a candidate adds. This scanner knows only what
every supported language shares (brackets; quotes ``'``, ``"`` and, where the language has
them, backticks and Python's triple quotes; line and block comments) and never fails: an
unterminated string ends at its line's end.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from daemon.language import LanguageInfo, language_info

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {v: k for k, v in OPENERS.items()}

# Rust and C-family ' is a char literal or a lifetime: short, so a lone ' ends at its line.
_TOKEN = re.compile(r"\w+|==|!=|<=|>=|=>|->|::|&&|\|\||\S")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Bracket:
    """One bracket: its character, 0-based line and column."""

    char: str
    line: int
    column: int


@dataclass
class Structure:
    """The brackets of a text: matched pairs, openers never closed, closers never opened."""

    pairs: list[tuple[Bracket, Bracket]]
    unclosed: list[Bracket]
    unopened: list[Bracket]


@dataclass(frozen=True)
class Token:
    text: str
    line: int
    column: int
    kind: str  # "word", "string", "punct"


def _comments(info: LanguageInfo | None) -> tuple[str | None, tuple[str, str] | None]:
    """The language's line comment and block comment (C's, for one assist does not know)."""
    if info is None:
        return "//", ("/*", "*/")
    return info.line_comment, info.block_comment


@functools.lru_cache(maxsize=32)
def scan(language: str, text: str) -> tuple[list[Token], Structure]:
    """Tokens (comments dropped, each string one token) and the bracket structure of ``text``.

    Remembered for the last few texts (ranking a round's candidates scans the same document
    and each candidate several times): the result is shared, so callers must not change it."""
    tokens: list[Token] = []
    stack: list[Bracket] = []
    pairs: list[tuple[Bracket, Bracket]] = []
    unopened: list[Bracket] = []
    info = language_info(language)
    comment, block = _comments(info)
    lines = text.split("\n")
    line_no, col = 0, 0
    while line_no < len(lines):
        line = lines[line_no]
        if col >= len(line):
            line_no, col = line_no + 1, 0
            continue
        char = line[col]
        if char.isspace():
            spaces = _SPACES.match(line, col)
            col = spaces.end() if spaces else col + 1
            continue
        if block and line.startswith(block[0], col):  # before the line comment: Lua's --[[
            line_no, col = _skip_to(lines, line_no, col + len(block[0]), block[1])
            continue
        if comment and line.startswith(comment, col):
            line_no, col = line_no + 1, 0
            continue
        if char in "'\"`":
            start_line, start_col = line_no, col
            line_no, col, body = _string(info, lines, line_no, col)
            tokens.append(Token(body, start_line, start_col, "string"))
            continue
        match = _TOKEN.match(line, col)
        assert match is not None  # \S matches any non-space character
        piece = match.group(0)
        kind = "word" if piece[0].isalnum() or piece[0] == "_" else "punct"
        tokens.append(Token(piece, line_no, col, kind))
        if piece in OPENERS:
            stack.append(Bracket(piece, line_no, col))
        elif piece in CLOSERS:
            closer = Bracket(piece, line_no, col)
            if stack and stack[-1].char == CLOSERS[piece]:
                pairs.append((stack.pop(), closer))
            else:
                unopened.append(closer)
        col = match.end()
    return tokens, Structure(pairs, stack, unopened)


def _skip_to(lines: list[str], line_no: int, col: int, end: str) -> tuple[int, int]:
    while line_no < len(lines):
        found = lines[line_no].find(end, col)
        if found >= 0:
            return line_no, found + len(end)
        line_no, col = line_no + 1, 0
    return line_no, 0


def _string(
    info: LanguageInfo | None, lines: list[str], line_no: int, col: int
) -> tuple[int, int, str]:
    """Skip the string that starts at (line_no, col); return where it ends and its text."""
    line = lines[line_no]
    quote = line[col]
    backticks = info.backticks if info else "none"
    if info and info.triple_quoted and line.startswith(quote * 3, col):
        end_line, end_col = _skip_to(lines, line_no, col + 3, quote * 3)
        last = min(end_line, len(lines) - 1)
        end = (last, end_col if end_line < len(lines) else len(lines[last]))
        return end_line, end_col, _between(lines, (line_no, col), end)
    spans_lines = quote == "`" and backticks != "none"  # a template or a raw string
    escapes = not (quote == "`" and backticks == "raw")
    index = col + 1
    current = line_no
    while current < len(lines):
        text = lines[current]
        while index < len(text):
            if escapes and text[index] == "\\":
                index += 2
                continue
            if text[index] == quote:
                return current, index + 1, _between(lines, (line_no, col), (current, index + 1))
            index += 1
        if not spans_lines:
            break
        current, index = current + 1, 0
    # Unterminated: it ends with its line (or, for a multi-line kind, the file).
    end_line = min(current, len(lines) - 1)
    return end_line, len(lines[end_line]), lines[line_no][col:]


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text from ``start`` to ``end`` (line, column), across lines."""
    if start[0] == end[0]:
        return lines[start[0]][start[1] : end[1]]
    middle = lines[start[0] + 1 : end[0]]
    return "\n".join([lines[start[0]][start[1] :], *middle, lines[end[0]][: end[1]]])
