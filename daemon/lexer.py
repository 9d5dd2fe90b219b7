"""One rough lexer for code in every language: words, punctuation, brackets, whole strings.
Comments are dropped unless asked for; the gap rules and the repair rules both read code
through it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from daemon.language import LanguageInfo, language_info

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {v: k for k, v in OPENERS.items()}

TokenKind = Literal["word", "string", "punct", "comment"]

_TOKEN = re.compile(r"\w+|==|!=|<=|>=|=>|->|::|&&|\|\||\S")
_SPACES = re.compile(r"\s+")
# Where ``'`` opens no string (Rust), it is a char literal only when one character (or one
# escape) and a closing quote follow; else it is a lifetime's mark.
_CHAR = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.)|[^\\'])'")
# A language assist does not know is read with C's comments and every quote.
_UNKNOWN = LanguageInfo("", "", "//", ("/*", "*/"), None)


@dataclass(frozen=True)
class Token:
    """A word, a piece of punctuation, a whole string, or a line comment (only where asked
    for), at its 0-based line and column. ``closed`` is False for a string whose closing
    quote never came."""

    text: str
    line: int
    column: int
    kind: TokenKind
    closed: bool = True


def rules(language: str | None) -> LanguageInfo:
    """The language facts the lexer reads: Python's where no language is given, C-like ones
    for a language assist does not know."""
    info = language_info("python" if language is None else language)
    return info or _UNKNOWN


def lex(language: str | None, text: str, *, comments: bool = False) -> Iterator[Token]:
    """The tokens of ``text``. It never fails: a string left open ends with its line (a kind
    that spans lines, with the text), a block comment left open with the text. With
    ``comments``, each line comment is a token too (from its marker to the line's end)."""
    info = rules(language)
    comment, block = info.line_comment, info.block_comment
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
            if comments:
                yield Token(line[col:], line_no, col, "comment")
            line_no, col = line_no + 1, 0
            continue
        if char in info.quotes or (char == "'" and _CHAR.match(line, col)):
            start_line, start_col = line_no, col
            line_no, col, body, closed = _string(info, lines, line_no, col)
            yield Token(body, start_line, start_col, "string", closed)
            continue
        match = _TOKEN.match(line, col)
        assert match is not None  # \S matches any non-space character
        piece = match.group(0)
        yield Token(
            piece, line_no, col, "word" if piece[0].isalnum() or piece[0] == "_" else "punct"
        )
        col = match.end()


def _skip_to(lines: list[str], line_no: int, col: int, end: str) -> tuple[int, int]:
    while line_no < len(lines):
        found = lines[line_no].find(end, col)
        if found >= 0:
            return line_no, found + len(end)
        line_no, col = line_no + 1, 0
    return line_no, 0


def _string(
    info: LanguageInfo, lines: list[str], line_no: int, col: int
) -> tuple[int, int, str, bool]:
    """Skip the string that starts at (line_no, col): where it ends, its text, and whether its
    closing quote came."""
    line = lines[line_no]
    quote = line[col]
    if info.triple_quoted and line.startswith(quote * 3, col):
        end_line, end_col = _skip_to(lines, line_no, col + 3, quote * 3)
        closed = end_line < len(lines)
        last = min(end_line, len(lines) - 1)
        end = (last, end_col if closed else len(lines[last]))
        return end_line, end_col, _between(lines, (line_no, col), end), closed
    spans_lines = quote == "`" and info.backticks != "none"  # a template or a raw string
    escapes = not (quote == "`" and info.backticks == "raw")
    index = col + 1
    current = line_no
    while current < len(lines):
        text = lines[current]
        while index < len(text):
            if escapes and text[index] == "\\":
                index += 2
                continue
            if text[index] == quote:
                end = (current, index + 1)
                return current, index + 1, _between(lines, (line_no, col), end), True
            index += 1
        if not spans_lines:
            break
        current, index = current + 1, 0
    end_line = min(current, len(lines) - 1)
    return end_line, len(lines[end_line]), _between(lines, (line_no, col), (end_line, None)), False


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int | None]) -> str:
    """The text from ``start`` to ``end`` (line, column; None for the line's end)."""
    if start[0] == end[0]:
        return lines[start[0]][start[1] : end[1]]
    middle = lines[start[0] + 1 : end[0]]
    return "\n".join([lines[start[0]][start[1] :], *middle, lines[end[0]][: end[1]]])


def bracket_depths(line: str, language: str | None) -> Iterator[tuple[int, int]]:
    """(column, depth after it) of each bracket of ``line`` outside strings and comments, the
    depth counted from the line's start."""
    depth = 0
    for token in lex(language, line):
        if token.text in OPENERS:
            depth += 1
            yield token.column, depth
        elif token.text in CLOSERS:
            depth -= 1
            yield token.column, depth


def first_closer(line: str, language: str | None) -> int | None:
    """The column in ``line`` of the first bracket that closes one opened before the line
    (outside strings and comments); None when none does."""
    return next((column for column, depth in bracket_depths(line, language) if depth < 0), None)


@functools.lru_cache(maxsize=1024)
def brackets(line: str, language: str | None) -> tuple[int, int]:
    """(net change of bracket depth over ``line``, lowest depth reached relative to its start),
    outside strings and comments. Remembered: the engine asks again for each token's text."""
    depth = low = 0
    for _, depth in bracket_depths(line, language):
        low = min(low, depth)
    return depth, low
