"""Token healing: the prompt ends before the cursor's last token, which the model writes whole."""

from __future__ import annotations

from models.families import Vocabulary

# A last token longer than this many characters is not looked for (a run of blanks is one).
MAX_HEALED_CHARS = 32


# A prompt cut at the cursor ends on a token cut where code is rarely cut (``self.co`` for
# ``self.console``, an indentation, the blank after ``=``). Only a line that ends in a word or in
# blanks is healed: after an opening bracket healing lost lines on the real-code benchmark
# (tests/bench/realcode/layouts.py: 4 of 20 against 7 of 20), where inside a word and on a new line
# it gained (7 against 4, and 4 against 2).
def healed_tail(vocab: Vocabulary, line: str) -> str:
    """The end of ``line`` (the cursor's line up to the cursor) that its last token covers,
    or "" when the line ends otherwise than in a word or blanks, or no token ends it alone."""
    if not line or not (line[-1].isalnum() or line[-1] == "_" or line[-1].isspace()):
        return ""
    tokens = vocab.tokenize_text(line)
    for size in range(1, min(len(line), MAX_HEALED_CHARS) + 1):
        tail = line[-size:]
        if vocab.tokenize_text(tail) == tokens[-1:]:
            return tail if vocab.tokenize_text(line[:-size]) == tokens[:-1] else ""
    return ""


# An indentation healed at the start of a statement: on the real-code benchmark's 102 new lines,
# a model free to end it with a token of blanks alone wrote no code after it in 12 (``0``,
# ``1007``, ``1. The host is not a valid host.``, nothing): a tokenizer gives the last blank of an
# indented line to the word after it, and after blanks alone the model is where it saw numbers and
# lists. Made to write the last blank with what follows it, it wrote no number, list or empty line
# in any (8 comments), and as many lines were the author's, 15 (assist's prompt alone, greedy, no
# post-processing). A line that goes on the expression above it (after a comma, an opening bracket
# other than a brace, an operator or a backslash) is left free: a number may begin it (``    4,``
# in a list), and no token writes blanks and a digit together.
_CONTINUES = tuple(",([+-*/%=<>&|^~!?\\")


def heals_a_statement(before: str, healed: str) -> bool:
    """Whether ``healed`` (the lead the prompt leaves out) is the whole indentation of a line
    that begins a statement: blanks, nothing before them on the line, and the last line of
    code above not one that an expression goes on from. There the token that writes its last
    blank must write code too (the engine's ``to_code``)."""
    if not healed or healed.strip(" \t"):
        return False
    if not before.endswith("\n") and before:
        return False
    above = before.rstrip()
    return not above.endswith(_CONTINUES)
