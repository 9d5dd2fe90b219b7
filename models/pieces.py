"""The tokens whose bytes agree with a text: the constraint of token healing.
Token healing ends a prompt before its last token and lets the model write that token whole.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

import numpy as np

# Longer than any token's bytes: a bound for the range of pieces that start with a text.
_PAST_ANY_PIECE = b"\xff" * 1024
_BLANKS = (b" ", b"\t")


# A prompt that ends inside a token (``self.co``, an indentation, ``x = ``) ends on a token the
# model rarely saw there; token healing ends the prompt before that token and lets the model write
# it whole, choosing only among the tokens whose bytes start with the text left out or are the
# first part of it.
class PieceIndex:
    """A vocabulary's pieces (each token's bytes), sorted, for prefix lookups."""

    def __init__(self, pieces: Sequence[bytes], excluded: Iterable[int] = ()) -> None:
        skip = set(excluded)
        order = sorted(
            (piece, token) for token, piece in enumerate(pieces) if piece and token not in skip
        )
        self._pieces = [piece for piece, _ in order]
        self._tokens = np.array([token for _, token in order], dtype=np.int64)
        self._exact: dict[bytes, list[int]] = {}
        for piece, token in order:
            self._exact.setdefault(piece, []).append(token)
        self._after_blanks: np.ndarray | None = None

    def after_blanks(self) -> np.ndarray:
        """The tokens that do not begin with a blank: what may follow a text that ends in
        blanks, once it is written."""
        if self._after_blanks is None:
            kept = [piece[:1] not in _BLANKS for piece in self._pieces]
            self._after_blanks = self._tokens[np.array(kept, dtype=bool)]
        return self._after_blanks

    def agreeing(self, text: bytes, *, to_code: bool = False) -> np.ndarray:
        """The tokens that can begin ``text``: those whose bytes start with it, and those whose
        bytes are a shorter, non-empty start of it (the rest of ``text`` then comes next). A
        text that ends in blanks is where the code starts: a token that adds more blanks to
        it does not agree (an indentation is as the editor made it). With ``to_code`` (what
        is left of an indentation), no token of white space alone ends it: the token that
        writes its last blank writes code too (`` return``), as the tokenizer cuts an indented
        line; where no token does (a vocabulary without tab-and-word tokens), as without."""
        if not text:
            return self._tokens.copy()
        low = bisect_left(self._pieces, text)
        high = bisect_left(self._pieces, text + _PAST_ANY_PIECE)
        longer = self._tokens[low:high]
        shorter = [t for size in range(1, len(text)) for t in self._exact.get(text[:size], ())]
        if text[-1:] in _BLANKS:
            after = len(text)
            pieces = self._pieces[low:high]
            kept = np.array([p[after : after + 1] not in _BLANKS for p in pieces], dtype=bool)
            if to_code:
                with_code = kept & np.array([bool(p[after:].strip()) for p in pieces], dtype=bool)
                if with_code.any() or shorter:
                    kept = with_code
            longer = longer[kept]
        return np.concatenate([longer, np.array(shorter, dtype=np.int64)])
