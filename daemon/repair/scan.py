"""The structure of broken code: its tokens and which brackets match, read by the shared lexer."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from daemon.lexer import CLOSERS, OPENERS, Token, lex


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


@functools.lru_cache(maxsize=32)
def scan(language: str, text: str) -> tuple[list[Token], Structure]:
    """Tokens (comments dropped, each string one token) and the bracket structure of ``text``.

    Remembered for the last few texts (ranking a round's candidates scans the same document
    and each candidate several times): the result is shared, so callers must not change it."""
    tokens = list(lex(language, text))
    stack: list[Bracket] = []
    pairs: list[tuple[Bracket, Bracket]] = []
    unopened: list[Bracket] = []
    for token in tokens:
        if token.kind != "punct":
            continue
        if token.text in OPENERS:
            stack.append(Bracket(token.text, token.line, token.column))
        elif token.text in CLOSERS:
            closer = Bracket(token.text, token.line, token.column)
            if stack and stack[-1].char == CLOSERS[token.text]:
                pairs.append((stack.pop(), closer))
            else:
                unopened.append(closer)
    return tokens, Structure(pairs, stack, unopened)
