"""The tokens that open a comment in a language, for answers that must not write one.
The deep path's body and a body asked for again after a placeholder are written without them.
"""

from __future__ import annotations

from typing import Protocol

from daemon.language import language_info


class Tokenizer(Protocol):
    def tokenize_text(self, text: str) -> list[int]: ...

    def tokens_starting_with(self, text: str) -> tuple[int, ...]: ...


def comment_markers(language: str | None) -> tuple[str, ...]:
    """What opens a comment in ``language``: its line comment and its block comment's
    opening; none for a language assist does not know."""
    info = language_info(language)
    if info is None:
        return ()
    opening = info.block_comment[0] if info.block_comment else None
    return tuple(marker for marker in (info.line_comment, opening) if marker)


# Asked for a whole body, a small model narrates: a comment over most lines (``# Initialize an
# empty list to store the result``), in a body the docstring above already explains, and on two
# CPU cores every token is time the programmer waits. So the deep path's body is written with
# these tokens forbidden (``deep_comments`` off, the default), and so is a body asked for again
# after a placeholder (``daemon.answers.placeholder``). Strings are not affected unless a token
# inside one starts with the marker.
def comment_tokens(vocab: Tokenizer, language: str | None) -> tuple[int, ...]:
    """Every token whose text, after the white space it may begin with, opens a comment of
    ``language`` (``#``, `` #``, ``    #``, ``##``...)."""
    found: dict[int, None] = {}
    for marker in comment_markers(language):
        found.update(dict.fromkeys(vocab.tokens_starting_with(marker)))
    return tuple(found)
