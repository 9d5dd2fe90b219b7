"""The tokens that open a comment: read per language from its comment markers."""

from __future__ import annotations

import pytest

from daemon.answers.comments import comment_markers, comment_tokens


class MarkerVocab:
    """A vocabulary in which each comment marker opens the tokens it is given."""

    def __init__(self, openers: dict[str, tuple[int, ...]]) -> None:
        self.openers = openers
        self.asked: list[str] = []

    def tokenize_text(self, text: str) -> list[int]:
        return [ord(ch) for ch in text]

    def tokens_starting_with(self, text: str) -> tuple[int, ...]:
        self.asked.append(text)
        return self.openers.get(text, ())


@pytest.mark.parametrize(
    ("language", "markers"),
    [
        ("python", ("#",)),
        ("py", ("#",)),  # an alias
        ("typescript", ("//", "/*")),
        ("lua", ("--", "--[[")),
        ("ocaml", ("(*",)),  # no line comment
        ("klingon", ()),
        (None, ()),
    ],
)
def test_the_markers_that_open_a_comment(language, markers):
    assert comment_markers(language) == markers


def test_comment_tokens_join_the_markers_openers_once_each_in_order():
    vocab = MarkerVocab({"//": (5, 6, 7), "/*": (7, 8)})  # "/**" style: 7 opens both
    assert comment_tokens(vocab, "javascript") == (5, 6, 7, 8)
    assert vocab.asked == ["//", "/*"]


def test_no_comment_tokens_for_a_language_assist_does_not_know():
    vocab = MarkerVocab({"#": (1,)})
    assert comment_tokens(vocab, "klingon") == ()
    assert comment_tokens(vocab, None) == ()
    assert vocab.asked == []  # the vocabulary is not read for nothing
