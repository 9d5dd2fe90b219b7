"""Candidates decoded together: one evaluated prompt, several continuations."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from daemon.engine.answer_text import AnswerText
from daemon.engine.jobs import Continuation
from daemon.settings import BRANCH_BELOW

# A first token the model gives less than this share is not worth a sequence.
MIN_SHARE = 0.005
_MIN_LOGPROB = math.log(MIN_SHARE)


def branches_here(answer: AnswerText, logprob: float, below: float = BRANCH_BELOW) -> bool:
    """Whether the candidates branch at the token just chosen (with ``logprob``) for
    ``answer``: a token the model gives less than the share ``below`` (the
    ``candidates_branch_below`` setting, where it is unsure what comes next; 1 branches at the
    first such token whatever its share), that chooses what the answer writes (past the blanks
    of its lead, which only blanks can write), while its first line is being written."""
    if answer.first_choice is None and not answer.choosing:
        return False
    if "\n" in answer.text or "\n" in answer.pending:
        return False
    return below >= 1.0 or logprob < math.log(below)


def log_softmax_of(row: np.ndarray, token: int) -> float:
    """The natural-log probability of ``token`` under the softmax of one row of logits."""
    top = float(row.max())
    return float(row[token]) - top - math.log(float(np.exp(row - top).sum()))


def first_tokens(
    row: np.ndarray, taken: int, count: int, excluded: Iterable[int] = ()
) -> list[tuple[int, float]]:
    """The ``count`` most likely first tokens other than ``taken`` (and ``excluded``: end of
    text, banned tokens), most likely first, with their log-probabilities; those under
    ``MIN_SHARE`` are left out."""
    if count <= 0:
        return []
    skip = {taken, *excluded}
    wanted = min(len(row), count + len(skip))
    best = np.argpartition(-row, wanted - 1)[:wanted]
    best = best[np.argsort(-row[best], kind="stable")]
    top = float(row.max())
    norm = top + math.log(float(np.exp(row - top).sum()))
    found = []
    for token in best:
        token = int(token)
        if token in skip:
            continue
        logprob = float(row[token]) - norm
        if logprob < _MIN_LOGPROB:
            break
        found.append((token, logprob))
        if len(found) == count:
            break
    return found


# The job takes the most likely token at each step. At the first token of its first line that the
# model is unsure of (it gives it less than BRANCH_BELOW; the first token it chooses, past the
# blanks of a lead, where that one is unsure), each other candidate starts from the next most
# likely token there (given at least MIN_SHARE), in a sequence of its own holding a copy of the
# KV so far, and goes on greedily, all in the same batches: three candidates cost one prompt and
# one batched decode, not three. Where the model is sure of its first token, alternatives to it
# are lines it gives little chance; the candidates then differ where the line is in doubt (which
# attribute, which argument). A line the model is sure of throughout gets no others. A
# candidate whose text becomes the job's own text so far, at a token boundary of both, is
# dropped (greedy from there it would write the same). Once the job's own text has ended, the
# others get worker.BRANCH_GRACE_TOKENS more tokens to end theirs, then are dropped. A Fork keeps
# one job's candidates together: the job's Finished is sent when the last of them ends, with
# the others as its alternatives.
class Fork:
    """The candidates of one job: member 0 is the job's own, the others its branches in the
    order of their probability where they branched. ``close`` records a member's continuation and
    says whether all have ended."""

    def __init__(self) -> None:
        self.members = 1  # the job's own
        self.open = 1
        self.ended: dict[int, tuple[Continuation, bool]] = {}

    def branch(self) -> int:
        """A new member; returns its index."""
        index = self.members
        self.members += 1
        self.open += 1
        return index

    def close(self, member: int, continuation: Continuation, duplicate: bool = False) -> bool:
        """Record that ``member`` ended (``duplicate``: dropped, having reached the job's own
        text or run late); True when every member has."""
        self.ended[member] = (continuation, duplicate)
        self.open -= 1
        return self.open == 0

    @property
    def own(self) -> Continuation:
        return self.ended[0][0]

    def alternatives(self) -> tuple[Continuation, ...]:
        """The branches that ended with text of their own, in order."""
        return tuple(
            continuation
            for member, (continuation, duplicate) in sorted(self.ended.items())
            if member and not duplicate
        )


def same_path(own_text: str, own_ends: list[int], text: str) -> bool:
    """Whether a branch's ``text`` is the job's own text up to a token boundary of it (the
    branch then writes what the job writes)."""
    return bool(text) and len(text) in own_ends and own_text.startswith(text)
