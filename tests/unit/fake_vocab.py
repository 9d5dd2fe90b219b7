"""A tiny deterministic vocabulary for unit tests of prompt formats and prompt cutting.

Text tokenizes to one token per character (ids from 1000 up, by code point), so token counts
equal character counts and expected sequences can be written by hand.
"""

from __future__ import annotations


class CharVocab:
    def __init__(self, specials: dict[str, int] | None = None, bos: int | None = 1) -> None:
        self.specials = specials or {}
        self._bos = bos

    def tokenize_text(self, text: str) -> list[int]:
        return [1000 + ord(ch) for ch in text]

    def tokens_starting_with(self, text: str) -> tuple[int, ...]:
        """A token is one character: only a one-character ``text`` starts one."""
        return (1000 + ord(text),) if len(text) == 1 else ()

    def special_token(self, piece: str) -> int | None:
        return self.specials.get(piece)

    @property
    def bos_token(self) -> int | None:
        return self._bos


def chars(text: str) -> list[int]:
    return [1000 + ord(ch) for ch in text]
