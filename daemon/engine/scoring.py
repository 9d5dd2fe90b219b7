"""Scoring tokens with the model: the log-probability of each token given the tokens before it.
This is how the model judges text (which of several verified repairs it finds most likely).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Rows of logits turned into float64 at a time: bounds the memory a chunk needs.
_ROWS = 16

# llama.cpp's CPU kernels (the repacked quantized matrix products) take a batch's rows in
# groups of this many from its first row; a row's result depends slightly (about 1e-2 in a
# log-probability) on the group it fell in. Scoring starts every chunk at a multiple of it, so
# the same tokens score the same whether their prefix was reused or evaluated cold.
ROW_GROUP = 4


def token_logprobs(logits: np.ndarray, targets: Sequence[int]) -> np.ndarray:
    """The natural-log probability of ``targets[i]`` under the softmax of ``logits[i]``.

    ``logits`` is an (n, n_vocab) array; the log-softmax is computed in float64."""
    if len(logits) != len(targets):
        raise ValueError(f"{len(logits)} rows of logits for {len(targets)} tokens")
    ids = np.asarray(targets, dtype=np.intp)
    picked = np.empty(len(ids), dtype=np.float64)
    for start in range(0, len(ids), _ROWS):
        rows = np.asarray(logits[start : start + _ROWS], dtype=np.float64)
        chosen = rows[np.arange(len(rows)), ids[start : start + _ROWS]]
        picked[start : start + _ROWS] = chosen - _logsumexp(rows)
    return picked


def _logsumexp(rows: np.ndarray) -> np.ndarray:
    top = rows.max(axis=1)
    return top + np.log(np.exp(rows - top[:, None]).sum(axis=1))


# The engine's worker evaluates the unscored part of a sequence in chunks of its batches, asking
# for logits at every position of those chunks only: the context is not switched to keeping
# logits for every token, which would cost memory on every job. Each row of logits, as
# log-probabilities, gives the probability of the token that follows its position. Chunks start
# at multiples of ROW_GROUP, in the sequence and in the batch, which makes scores independent of
# how much of the prefix was reused and of what else was decoded with them.
def chunk_size(chunk_tokens: int, n_batch: int) -> int:
    """The scoring chunk: at most ``chunk_tokens`` and one batch, a multiple of ``ROW_GROUP``."""
    size = min(chunk_tokens, n_batch)
    return max(ROW_GROUP, size - size % ROW_GROUP)


def chunk_logprobs(
    logits: np.ndarray, tokens: Sequence[int], start: int, stop: int, first: int
) -> list[float]:
    """The log-probabilities that the rows of ``tokens[start:stop]`` (evaluated with logits
    for every position) give the tokens they predict, from index ``first`` on: the row of
    position ``p`` predicts ``tokens[p + 1]``."""
    skip = max(0, first - (start + 1))  # rows predicting tokens that are context, or done
    return token_logprobs(logits[skip : stop - start], tokens[start + 1 + skip : stop + 1]).tolist()
