"""Scoring without a model: the log-softmax and token selection, which logits predict which
token, the ``Scored`` result and the scripted backend's scores."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from daemon.engine.scheduler import Priority
from daemon.engine.scoring import ROW_GROUP, chunk_logprobs, chunk_size, token_logprobs
from daemon.pipeline.backend import Scored
from tests.unit.scripted_backend import ScriptedBackend, in_turn


def reference(logits: np.ndarray, targets: list[int]) -> list[float]:
    """The log-softmax written out, one row at a time."""
    out = []
    for row, target in zip(logits.astype(np.float64), targets, strict=True):
        total = sum(math.exp(x) for x in row)
        out.append(row[target] - math.log(total))
    return out


def test_logprobs_are_the_log_softmax_of_each_row_at_its_token():
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(40, 50)).astype(np.float32)  # more rows than one block
    targets = [int(t) for t in rng.integers(0, 50, size=40)]
    assert token_logprobs(logits, targets) == pytest.approx(reference(logits, targets), abs=1e-9)


def test_uniform_logits_give_minus_log_of_the_vocabulary():
    logits = np.full((3, 8), 5.0, dtype=np.float32)
    assert token_logprobs(logits, [0, 3, 7]) == pytest.approx([-math.log(8)] * 3)


def test_huge_logits_stay_finite():
    # exp(1000) overflows even in float64: only a shifted log-sum-exp copes.
    logits = np.array([[1e4, 0.0, -1e4], [1e3, 1e3, 0.0]], dtype=np.float32)
    picked = token_logprobs(logits, [0, 1])
    assert np.all(np.isfinite(picked))
    assert picked == pytest.approx([0.0, -math.log(2)])


def test_probabilities_of_a_row_sum_to_one():
    rng = np.random.default_rng(3)
    row = rng.normal(scale=10.0, size=(1, 30)).astype(np.float32)
    rows = np.repeat(row, 30, axis=0)
    assert np.exp(token_logprobs(rows, list(range(30)))).sum() == pytest.approx(1.0)


def test_rows_and_tokens_must_pair_up():
    with pytest.raises(ValueError):
        token_logprobs(np.zeros((2, 4), dtype=np.float32), [1])


def test_chunks_are_a_multiple_of_the_row_group_and_fit_a_batch():
    assert chunk_size(128, 512) == 128
    assert chunk_size(130, 512) == 128
    assert chunk_size(128, 50) == 48
    assert chunk_size(2, 512) == ROW_GROUP


def perfect_rows(start: int, stop: int, n_vocab: int) -> np.ndarray:
    """Logits that put all the weight on the token at the next position (tokens are their
    positions), so a score of about 0 means the rows were paired with the right tokens."""
    rows = np.zeros((stop - start, n_vocab), dtype=np.float32)
    for i in range(stop - start):
        rows[i, start + i + 1] = 60.0
    return rows


@pytest.mark.parametrize(("start", "first"), [(0, 1), (0, 5), (4, 5), (8, 20)])
def test_each_row_scores_the_token_after_its_position(start, first):
    tokens = list(range(30))
    picked = chunk_logprobs(perfect_rows(start, 29, n_vocab=40), tokens, start, 29, first)
    assert len(picked) == 29 - (first - 1)  # tokens first..29
    assert max(abs(p) for p in picked) < 1e-6


def test_scored_totals_and_means():
    scored = Scored([-1.0, -2.0, -3.0], prompt_tokens=10, reused_tokens=6)
    assert scored.total == pytest.approx(-6.0)
    assert scored.mean == pytest.approx(-2.0)
    assert Scored([], 1, 0).mean == 0.0


async def test_the_scripted_backend_scores_every_token_minus_one_by_default():
    backend = ScriptedBackend(in_turn("unused"))
    admission = backend.admit(Priority.REPAIR, "alice")
    scored = await backend.score(
        [1, 2, 3, 4, 5], 2, admission=admission, deadline=time.perf_counter() + 60
    )
    assert scored is not None and scored.logprobs == [-1.0, -1.0, -1.0]
    assert scored.prompt_tokens == 5
    run = backend.scores[0]
    assert (run.tokens, run.score_from, run.priority, run.user) == (
        [1, 2, 3, 4, 5],
        2,
        Priority.REPAIR,
        "alice",
    )


async def test_the_scripted_backend_takes_a_scorer_and_honours_the_deadline():
    backend = ScriptedBackend(in_turn("unused"), scorer=lambda t, k: [-0.5] * (len(t) - k))
    admission = backend.admit(Priority.REPAIR, "alice")
    scored = await backend.score(
        [1, 2, 3], 1, admission=admission, deadline=time.perf_counter() + 60
    )
    assert scored is not None and scored.mean == pytest.approx(-0.5)
    late = await backend.score([1, 2, 3], 1, admission=admission, deadline=time.perf_counter() - 1)
    assert late is None
