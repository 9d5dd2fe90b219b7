"""The deep path's budgets, sized to a programmer's patience from the model's measured speed.
The body, and the errors pass when it fits, get the tokens that fit before the target time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from daemon.engine.speed import Speed

# A body is given at least this many tokens, however slow the machine: fewer cannot hold one.
MIN_BODY_TOKENS = 48
# The errors pass rewrites the body with checks added: expect it this much longer.
ERRORS_GROWTH = 1.5
ERRORS_EXTRA_TOKENS = 16
# The errors pass is planned on this share of the time left: the measured speed is an
# average, and a pass that runs past the target makes the final answer late (the pass's job
# ends at the target all the same, cut off and not offered).
ERRORS_TIME_SHARE = 0.9


# A request's prompt may take this share of its time to be read; the rest is for writing.
PROMPT_SHARE = 0.5
# A window is never cut below this many tokens to fit the time: fewer say too little.
MIN_WINDOW_TOKENS = 256
# A cut window is a whole number of these: the measured speed moves from one request to the
# next, and the same place asked again should get the same window (and so the same cache key).
WINDOW_STEP_TOKENS = 128


@dataclass(frozen=True)
class ErrorsPlan:
    """Whether the errors pass fits, its token budget, and why (for the stage's reason)."""

    fits: bool
    max_tokens: int
    reason: str


def fresh_tokens(previous: Sequence[int], prompt: Sequence[int]) -> int:
    """Tokens of ``prompt`` the model must evaluate after it evaluated ``previous``."""
    shared = 0
    for old, new in zip(previous, prompt, strict=False):
        if old != new:
            break
        shared += 1
    return len(prompt) - shared


# A whole body should be on screen within the deep path's target time (``deep_target_ms``, or the
# request's own deadline). How many tokens fit in that time depends on the machine, so the budgets
# are computed per request from the engine's measured prompt and decode speed: the body gets the
# tokens that fit before the target (never fewer than a short body needs), and the errors pass
# runs only when its expected cost fits in what is left. The target is a budget, not a wall: a
# body it cuts short is finished afterwards (``daemon.answers.completion``), since a whole body
# late beats none.
def body_tokens(speed: Speed, *, prompt_tokens: int, left_s: float, ceiling: int) -> int:
    """Tokens for the body: what the model writes in ``left_s`` after reading its prompt,
    at most ``ceiling`` and at least a short body's worth."""
    writing = left_s - speed.prompt_seconds(prompt_tokens)
    floor = min(MIN_BODY_TOKENS, ceiling)
    return max(floor, min(ceiling, speed.tokens_within(writing)))


def errors_plan(
    speed: Speed, *, fresh_prompt_tokens: int, body_tokens_used: int, left_s: float, ceiling: int
) -> ErrorsPlan:
    """Run the errors pass only when reading its prompt and rewriting the body fit in
    ``ERRORS_TIME_SHARE`` of ``left_s``; its budget is what fits there, at most ``ceiling``."""
    expected = int(body_tokens_used * ERRORS_GROWTH) + ERRORS_EXTRA_TOKENS
    reading = speed.prompt_seconds(fresh_prompt_tokens)
    needed = reading + speed.decode_seconds(expected)
    usable = ERRORS_TIME_SHARE * left_s
    if needed > usable:
        return ErrorsPlan(
            False,
            0,
            f"no time was left for the errors stage (it needs about {needed:.1f} s, "
            f"{max(0.0, left_s):.1f} s were left)",
        )
    tokens = min(ceiling, speed.tokens_within(usable - reading))
    return ErrorsPlan(True, max(1, tokens), "fits")


def window_within(
    speed: Speed,
    *,
    prompt_tokens: int,
    cached_tokens: Callable[[], int],
    left_s: float,
    budget: int,
) -> int | None:
    """A smaller prompt budget when reading what the model does not hold yet of a
    ``prompt_tokens`` prompt would take more than ``PROMPT_SHARE`` of ``left_s``; None when
    the prompt fits its time as it is (or cannot be cut below ``MIN_WINDOW_TOKENS``). The
    budget is rounded down to ``WINDOW_STEP_TOKENS``.
    ``cached_tokens`` (how many the model holds) is asked only when a cold read would not
    fit: on a fast machine or a short prompt, never."""
    allowed = PROMPT_SHARE * left_s
    if speed.prompt_seconds(prompt_tokens) <= allowed:
        return None
    if speed.prompt_seconds(prompt_tokens - cached_tokens()) <= allowed:
        return None
    readable = int(allowed * speed.prompt_tps)
    fitted = max(MIN_WINDOW_TOKENS, readable - readable % WINDOW_STEP_TOKENS)
    return fitted if fitted < min(budget, prompt_tokens) else None
