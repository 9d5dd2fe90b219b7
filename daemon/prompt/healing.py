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
