"""Placeholder bodies (``# Your code here`` and ``pass``) and the tokens that spell them."""

from __future__ import annotations

import pytest

from daemon.answers.placeholder import is_placeholder, placeholder_tokens
from tests.unit.fake_vocab import CharVocab


@pytest.mark.parametrize(
    ("language", "body"),
    [
        ("python", "# Your code here\n    pass\n"),
        ("python", "    # Your implementation goes here\n    pass\n\n"),
        ("python", "pass"),
        ("python", "..."),
        ("python", '"""To do."""\n    ...\n'),
        ("python", "raise NotImplementedError\n"),
        ("python", 'raise NotImplementedError("later")\n'),
        ("python", "# TODO: write this\n"),
        ("rust", "todo!()\n"),
        ("rust", '// later\n    unimplemented!("soon")\n'),
        ("javascript", "// Your code here\n"),
        ("javascript", 'throw new Error("not implemented");\n'),
        ("typescript", "/* fill in */\n"),
        ("go", 'panic("not implemented")\n'),
        ("java", 'throw new UnsupportedOperationException("not implemented");\n'),
        ("csharp", "throw new NotImplementedException();\n"),
        ("kotlin", 'TODO("not implemented")\n'),
        ("cpp", 'throw std::logic_error("not implemented");\n'),
    ],
)
def test_placeholders_are_recognised(language, body):
    assert is_placeholder(language, body)


@pytest.mark.parametrize(
    ("language", "body"),
    [
        ("python", "return a + b\n"),
        ("python", "# add them\n    return a + b\n"),
        ("python", "try:\n        run()\n    except OSError:\n        pass\n"),
        ("python", "for item in items:\n        pass\n    return items\n"),
        ("python", "raise ValueError('negative')\n"),
        ("python", ""),
        ("python", "\n   \n"),
        ("rust", "a + b\n"),
        ("javascript", "return a + b; // the sum\n"),
        ("javascript", 'throw new Error("negative input");\n'),
        ("go", 'panic("unreachable")\n'),
        (None, "x = 1\n"),
    ],
)
def test_code_is_not_a_placeholder(language, body):
    assert not is_placeholder(language, body)


class WordVocab(CharVocab):
    """Characters, except the words given, which are one token each."""

    def __init__(self, words: dict[str, int]) -> None:
        super().__init__()
        self.words = words

    def tokenize_text(self, text: str) -> list[int]:
        return [self.words[text]] if text in self.words else super().tokenize_text(text)


HASH = 1000 + ord("#")  # the comment marker's token in these character vocabularies


def test_placeholder_tokens_are_the_single_token_spellings_and_the_comment_openers():
    vocab = WordVocab({"pass": 7, " pass": 8, "...": 9})
    assert placeholder_tokens(vocab, "python") == (7, 8, 9, HASH)
    assert placeholder_tokens(vocab, "py") == (7, 8, 9, HASH)  # an alias of Python


def test_no_placeholder_tokens_without_single_token_spellings_or_a_known_language():
    assert placeholder_tokens(CharVocab(), "python") == ()
    vocab = WordVocab({"pass": 7})
    assert placeholder_tokens(vocab, "javascript") == ()
    assert placeholder_tokens(vocab, None) == ()
    assert placeholder_tokens(vocab, "klingon") == ()
