"""The helpers of candidates decoded together: where a fork branches, the tokens it starts
from, a branch that reached the job's own text, and the members of one fork."""

from __future__ import annotations

import math

import numpy as np
import pytest

from daemon.engine.answer_text import AnswerText
from daemon.engine.fork import (
    MIN_SHARE,
    Fork,
    branches_here,
    first_tokens,
    log_softmax_of,
    same_path,
)
from daemon.engine.jobs import Continuation
from daemon.settings import BRANCH_BELOW

UNSURE = math.log(BRANCH_BELOW * 0.9)
SURE = math.log(min(1.0, BRANCH_BELOW * 1.1))


def logits(*probabilities: float) -> np.ndarray:
    return np.log(np.array(probabilities, dtype=np.float32))


def test_log_softmax_of_a_row():
    row = logits(0.5, 0.25, 0.25)
    assert log_softmax_of(row, 0) == pytest.approx(math.log(0.5), abs=1e-6)
    assert log_softmax_of(row + 7.0, 1) == pytest.approx(math.log(0.25), abs=1e-6)


def test_first_tokens_are_the_next_most_likely_most_likely_first():
    row = logits(0.1, 0.5, 0.05, 0.3, 0.05)
    found = first_tokens(row, taken=1, count=2)
    assert [token for token, _ in found] == [3, 0]
    assert found[0][1] == pytest.approx(math.log(0.3), abs=1e-6)


def test_excluded_and_unlikely_tokens_never_start_a_branch():
    rare = MIN_SHARE / 2
    row = logits(0.6, 0.3, 0.1 - rare, rare)
    assert [t for t, _ in first_tokens(row, taken=0, count=3, excluded=(1,))] == [2]
    assert first_tokens(row, taken=0, count=0) == []


def test_a_branch_on_the_jobs_own_path_is_recognised_at_a_token_boundary():
    assert same_path("return x", [6, 8], "return")
    assert not same_path("return x", [6, 8], "retu")  # not where a token of the job ends
    assert not same_path("return x", [6, 8], "yield ")
    assert not same_path("return x", [6, 8], "")


def test_a_fork_ends_when_every_member_has_and_drops_duplicates():
    fork = Fork()
    first, second = fork.branch(), fork.branch()
    assert (first, second) == (1, 2)
    assert not fork.close(2, Continuation("b", "stop", 1))
    assert not fork.close(1, Continuation("a", "stop", 1), duplicate=True)
    assert fork.close(0, Continuation("own", "stop", 1))
    assert fork.own.text == "own"
    assert [c.text for c in fork.alternatives()] == ["b"]


def test_a_fork_branches_at_the_first_token_the_model_is_unsure_of():
    answer = AnswerText((), None, None)
    assert branches_here(answer, UNSURE)  # the first token, in doubt
    assert not branches_here(answer, SURE)
    answer.add(1, b"self")  # sure of it: the next token in doubt is where it branches
    assert branches_here(answer, UNSURE) and not branches_here(answer, SURE)


def test_the_share_under_which_a_fork_branches_is_the_settings():
    answer = AnswerText((), None, None)
    assert branches_here(answer, math.log(0.85), below=0.9)
    assert not branches_here(answer, math.log(0.95), below=0.9)
    # 1: at the first token that chooses what the answer writes, however sure of it
    assert branches_here(answer, math.log(0.999), below=1.0)
    assert branches_here(answer, 0.0, below=1.0)
    answer.add(1, b"x = 1\n")
    assert not branches_here(answer, math.log(0.5), below=1.0)


def test_no_branch_once_the_first_line_is_written():
    answer = AnswerText((), None, None)
    answer.add(1, b"x = 1\n")
    assert not branches_here(answer, UNSURE)


def test_no_branch_among_the_blanks_of_an_indentation_lead():
    """How an indentation splits into tokens of blanks is no choice; the token that writes
    code past it is."""
    answer = AnswerText((), None, None, lead="        ")
    assert not branches_here(answer, UNSURE)
    answer.add(1, b"      ")
    assert not branches_here(answer, UNSURE)  # two blanks left: blanks alone may write them
    answer.add(2, b" ")
    assert branches_here(answer, UNSURE)  # one blank left: the token that writes it writes code
