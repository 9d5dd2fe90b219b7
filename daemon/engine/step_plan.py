"""The engine's step planner: which jobs run this step, and the typed work items of the batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from daemon.engine.scheduler import Priority
from daemon.engine.scoring import ROW_GROUP, chunk_size

T = TypeVar("T")

# While completions come (one ran in the last ``TYPING_S`` seconds), the steps of less urgent
# jobs read at most ``YIELDING_CHUNK`` prompt tokens: a completion that arrives meanwhile
# waits for one short step, not a long one.
TYPING_S = 2.0
YIELDING_CHUNK = 8


@dataclass(frozen=True)
class Ready(Generic[T]):
    """What the planner knows of a running job: its sequence, whether it scores a text, has a
    sampled token to decode, the first stretch of its prompt still to read (``gap``), and its
    prompt's length."""

    job: T
    seq: int
    scoring: bool
    has_token: bool
    gap: tuple[int, int] | None
    prompt_length: int


@dataclass(frozen=True)
class ScoreChunk(Generic[T]):
    """Prompt tokens ``[start, stop)`` read with a row of logits each, to score them."""

    job: T
    seq: int
    start: int
    stop: int


@dataclass(frozen=True)
class NextToken(Generic[T]):
    """The job's sampled token, decoded to sample the next."""

    job: T
    seq: int


@dataclass(frozen=True)
class PromptChunk(Generic[T]):
    """Prompt tokens ``[start, stop)`` read into the job's sequence; ``last``: the prompt
    ends there, so its last row's logits give the first token."""

    job: T
    seq: int
    start: int
    stop: int
    last: bool


@dataclass(frozen=True)
class GapChunk(Generic[T]):
    """An edited stretch ``[start, stop)`` before moved KV, read aside in the scratch
    sequence ``seq`` and then joined to the job's own."""

    job: T
    seq: int
    start: int
    stop: int


StepItem = ScoreChunk[T] | NextToken[T] | PromptChunk[T] | GapChunk[T]


@dataclass(frozen=True)
class StepPlan(Generic[T]):
    items: list[StepItem[T]]
    turn: int  # where the next step's round of prompt chunks starts


def most_urgent(priorities: Sequence[Priority]) -> tuple[Priority, list[bool]]:
    """The most urgent priority among running jobs, and for each whether it runs this step
    (the others wait in their slots)."""
    tier = min(priorities)
    return tier, [priority == tier for priority in priorities]


def chunk_for(tier: Priority, chunk_tokens: int, since_interactive_s: float) -> int:
    """The prompt tokens a job reads in one step: all of ``chunk_tokens``, but few while
    completions come and a less urgent job runs."""
    if tier != Priority.INTERACTIVE and since_interactive_s < TYPING_S:
        return min(chunk_tokens, YIELDING_CHUNK)
    return chunk_tokens


def plan_step(
    ready: Sequence[Ready[T]], *, chunk: int, room: int, turn: int, scratch: int | None
) -> StepPlan[T]:
    """This step's batch for the jobs that run (``ready``, in their order): scoring chunks
    first, then each job's next token and the prompt chunks there is room for, at most
    ``chunk`` prompt tokens in all, in increasing sequence order (llama.cpp decodes
    consecutive sequences in one pass only when they come in that order). ``room``: the
    batch's size; ``turn``: where the round of prompt chunks starts, for fairness;
    ``scratch``: the sequence a gap is read in (at most one a step), if there is one."""
    items: list[StepItem[T]] = list(_scoring(ready, chunk, room))
    room -= sum(item.stop - item.start for item in items if isinstance(item, ScoreChunk))
    planned: list[StepItem[T]] = []
    for each in ready:
        if each.has_token and len(planned) < room:
            planned.append(NextToken(each.job, each.seq))
    room -= len(planned)
    prompts = [r for r in ready if not r.scoring and not r.has_token and r.gap is not None]
    if prompts:
        turn = (turn + 1) % len(prompts)
        prompts = prompts[turn:] + prompts[:turn]
    budget = chunk
    scratch_used = False
    for each in prompts:
        if budget <= 0 or room <= 0:
            break
        assert each.gap is not None
        start, end = each.gap
        if end < each.prompt_length:  # a gap before moved chunks: evaluated aside
            size = end - start
            if scratch_used or scratch is None or size > min(budget, room):
                continue
            planned.append(GapChunk(each.job, scratch, start, end))
            scratch_used = True
        else:
            size = min(end, start + min(budget, room)) - start
            stop = start + size
            planned.append(PromptChunk(each.job, each.seq, start, stop, stop == end))
        budget -= size
        room -= size
    planned.sort(key=lambda item: item.seq)
    return StepPlan(items + planned, turn)


def _scoring(ready: Sequence[Ready[T]], chunk: int, room: int) -> list[ScoreChunk[T]]:
    """The scoring chunks, each starting at a multiple of ``ROW_GROUP`` in the batch, so a
    token's score does not depend on what else was decoded with it."""
    chunks: list[ScoreChunk[T]] = []
    filled = 0
    for each in ready:
        if not each.scoring or each.gap is None or filled % ROW_GROUP:
            continue
        size = chunk_size(chunk, room - filled) if room - filled >= ROW_GROUP else 0
        if size <= 0:
            break
        start, end = each.gap
        stop = min(start + size, end)
        chunks.append(ScoreChunk(each.job, each.seq, start, stop))
        filled += stop - start
    return chunks
