"""Scoring tokens with the model: the log-probability of each token given the tokens before it.

This is how the model judges text (which of several verified repairs it finds most likely).
The engine's worker evaluates the unscored part of a sequence in chunks through llama.cpp's
low-level batch API, asking for logits at every position of those chunks only: the context is
not switched to keeping logits for every token, which would cost memory on every job. Each
row of logits, as log-probabilities, gives the probability of the token that follows its
position. ``Llama.input_ids`` and ``Llama.n_tokens`` are kept as ``Llama.eval`` keeps them, so
later jobs reuse the prefix as usual. Chunks start at multiples of ``ROW_GROUP``, which makes
scores independent of how much of the prefix was reused. Used only from the engine's worker
thread.
"""

from __future__ import annotations

from collections.abc import Sequence

import llama_cpp
import numpy as np
from llama_cpp import Llama

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


def chunk_size(chunk_tokens: int, n_batch: int) -> int:
    """The scoring chunk: at most ``chunk_tokens`` and one batch, a multiple of ``ROW_GROUP``."""
    size = min(chunk_tokens, n_batch)
    return max(ROW_GROUP, size - size % ROW_GROUP)


def decode_with_logits(llm: Llama, chunk: Sequence[int]) -> np.ndarray:
    """Evaluate ``chunk`` after the live tokens, with logits for every one of its positions.

    Returns them as an (len(chunk), n_vocab) view of the context's buffer, valid until the next
    decode. ``chunk`` must fit one batch (``llm.n_batch`` tokens)."""
    n_past = llm.n_tokens
    llm._ctx.kv_cache_seq_rm(-1, n_past, -1)  # as Llama.eval does: nothing live past n_tokens
    llm._batch.set_batch(batch=chunk, n_past=n_past, logits_all=True)
    llm._ctx.decode(llm._batch)
    llm.input_ids[n_past : n_past + len(chunk)] = chunk
    llm.n_tokens = n_past + len(chunk)
    pointer = llama_cpp.llama_get_logits(llm._ctx.ctx)
    return np.ctypeslib.as_array(pointer, shape=(len(chunk), llm.n_vocab()))


def score_chunk(llm: Llama, tokens: Sequence[int], start: int, end: int, first: int) -> list[float]:
    """Evaluate ``tokens[start:end]`` (``start`` is ``llm.n_tokens``) and return the
    log-probabilities of the tokens they predict from index ``first`` on: the row of position
    ``p`` predicts ``tokens[p + 1]``."""
    logits = decode_with_logits(llm, tokens[start:end])
    skip = max(0, first - (start + 1))  # rows predicting tokens that are context, or done
    return token_logprobs(logits[skip:], tokens[start + 1 + skip : end + 1]).tolist()
