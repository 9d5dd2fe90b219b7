"""Several fast-path answers from one prompt, each fitted to the gap, ranked and gated.
The gate is the model's confidence in the first line (``min_confidence``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from daemon.answers.gap import Trimmed
from daemon.checks import lint
from daemon.checks.headers import leaves_header_out
from daemon.checks.methods import missing_instance
from daemon.cursor import Cursor
from daemon.engine.jobs import Continuation

# Acceptances needed before the gate moves for a user.
GATE_MIN_EVENTS = 10
# How far the threshold moves at the extremes: x0.5 for a user who accepts everything, x1.5
# for one who accepts nothing; x1 at an even rate.
GATE_SPREAD = 0.5
_UNDEFINED = re.compile(r"Undefined name `([^`]+)`")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
CALL_DID_NOT_FIT = "its call did not fit the callee's signature"
NO_INSTANCE = "its method takes no `self`"
NO_HEADER = "the deeper code below it still has no header"
# The start of a fault for the names a candidate leaves undefined.
UNDEFINED = "undefined name"


@dataclass(frozen=True)
class Candidate:
    """One continuation, fitted to the gap, with what the checks found."""

    member: int  # 0: the model's greedy continuation; then the others, in the engine's order
    written: str  # as the model wrote it
    trimmed: Trimmed
    logprob: float  # of the first line, its ending included
    tokens: int  # the first line's tokens
    faults: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.trimmed.text

    @property
    def verified(self) -> bool:
        return self.trimmed.verdict is None or self.trimmed.verdict.ok

    @property
    def confidence(self) -> float:
        """The model's probability of the first line (1.0 when the engine gave none)."""
        return math.exp(self.logprob)


def first_line_logprob(continuation: Continuation) -> tuple[float, int]:
    """The log-probability of a continuation's first line with the token that ends it (the
    newline, or whatever ended the text), and how many tokens that is."""
    text = continuation.text
    end = text.find("\n")
    limit = len(text) if end < 0 else end
    total, count = 0.0, 0
    for logprob, token_end in zip(
        continuation.token_logprobs, continuation.token_ends, strict=False
    ):
        total += logprob
        count += 1
        if token_end > limit:
            break
    return total, count


def candidate(
    member: int,
    continuation: Continuation,
    trimmed: Trimmed,
    language: str | None = None,
    cursor: Cursor | None = None,
) -> Candidate:
    """The continuation with the faults the checks find in it, inserted at ``cursor`` in a
    document of ``language``."""
    logprob, tokens = first_line_logprob(continuation)
    faults: list[str] = []
    if not (trimmed.verdict is None or trimmed.verdict.ok):
        faults.append(trimmed.verdict.reason or "it does not verify")
    if "fit_call_arguments" in trimmed.fired:
        faults.append(CALL_DID_NOT_FIT)
    if language == "python" and cursor and trimmed.text:
        if missing_instance(cursor, trimmed.text):
            faults.append(NO_INSTANCE)
        if leaves_header_out(cursor, trimmed.text):
            faults.append(NO_HEADER)
    return Candidate(member, continuation.text, trimmed, logprob, tokens, tuple(faults))


def undefined_names(text: str) -> frozenset[str] | None:
    """The names ruff's F821 finds undefined in a Python document; None without ruff."""
    found = lint.undefined_names(text)
    if found is None:
        return None
    names = set()
    for diagnostic in found:
        if diagnostic.code != lint.UNDEFINED_NAME:  # a syntax error of a text cut short
            continue
        match = _UNDEFINED.search(diagnostic.message)
        names.add(match.group(1) if match else diagnostic.message)
    return frozenset(names)


def with_new_names(candidates: Sequence[Candidate], prefix: str, suffix: str) -> list[Candidate]:
    """The candidates, each with a fault for the names it leaves undefined that the document
    without it does not name anywhere (Python; unchanged without ruff). The document without
    the answer is compared by its words, not by ruff's findings: cut at the cursor, it most
    often does not parse, and ruff then finds no undefined names in it to compare with."""
    named = set(_IDENTIFIER.findall(prefix + suffix))
    checked = []
    for each in candidates:
        after = undefined_names(prefix + each.text + suffix) if each.text else frozenset()
        if after is None:
            return list(candidates)
        new = sorted(after - named)
        if new:
            fault = f"{UNDEFINED} " + ", ".join(f"`{name}`" for name in new)
            each = replace(each, faults=(*each.faults, fault))
        checked.append(each)
    return checked


def undefined_fault(faults: Sequence[str]) -> str | None:
    """The fault that holds an answer back whatever its confidence: a new undefined name."""
    return next((f for f in faults if f.startswith(UNDEFINED)), None)


def _rank_key(each: Candidate) -> tuple[int, int, int, int, int, int, float]:
    return (
        0 if each.verified else 1,
        sum(1 for f in each.faults if f.startswith(UNDEFINED)),
        1 if NO_INSTANCE in each.faults else 0,
        1 if NO_HEADER in each.faults else 0,
        1 if CALL_DID_NOT_FIT in each.faults else 0,
        0 if each.member == 0 else 1,
        -each.logprob,
    )


# The ranking, best first: an answer that verifies (the file parses where it parsed); in Python,
# one that brings no new undefined name (ruff's F821 with the answer in place, where ruff is
# installed), and a method defined in a class body with its instance (``self``) before one with an
# empty parameter list (daemon/checks/methods.py); on an empty line above deeper code that lost
# its header, one that writes a header for it (daemon/checks/headers.py); one whose call to a
# workspace function bound to its signature as the model wrote it, before one the call-fitting
# rule had to cut; then the model's own choice: its greedy continuation, then the others by
# their first line's probability.
#
# The greedy choice stays ahead of the probabilities on purpose: on the real-code benchmark
# (tests/bench/bench_realcode.py) the greedy line is the author's more often than a more probable
# other line, which is usually shorter (a line's probability falls with its length).
def ranked(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Best first, without empty answers and without a text an earlier one has."""
    seen: set[str] = set()
    kept = []
    for each in sorted(candidates, key=_rank_key):
        key = each.text.rstrip()
        if not key.strip() or key in seen:
            continue
        seen.add(key)
        kept.append(each)
    return kept


def threshold_for(base: float, acceptance: float | None, events: int) -> float:
    """The gate's threshold for a user with this acceptance rate over ``events`` answers."""
    if acceptance is None or events < GATE_MIN_EVENTS or base <= 0:
        return base
    factor = 1 + GATE_SPREAD * (1 - 2 * acceptance)  # 1.5 at 0%, 1 at 50%, 0.5 at 100%
    return min(1.0, base * factor)


def held_back(confidence: float | None, threshold: float) -> bool:
    """Whether the gate holds an answer back (an answer of unknown confidence is shown)."""
    return confidence is not None and confidence < threshold


def withheld_for_fault(fault: str) -> str:
    return f"withheld: the answer brings an {fault} (a workspace check)"


def withheld_reason(confidence: float, threshold: float) -> str:
    return (
        f"withheld: the model gives this line {confidence:.0%}, below the {threshold:.0%} "
        "threshold (min_confidence)"
    )
