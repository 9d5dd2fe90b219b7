"""The engine's step planner on jobs that are plain names: priorities, pre-emption, chunking,
the order of the batch, gaps read aside, scoring chunks, and fairness between prompts."""

from __future__ import annotations

from daemon.engine.scheduler import Priority
from daemon.engine.scoring import ROW_GROUP
from daemon.engine.step_plan import (
    TYPING_S,
    YIELDING_CHUNK,
    GapChunk,
    NextToken,
    PromptChunk,
    Ready,
    ScoreChunk,
    chunk_for,
    most_urgent,
    plan_step,
)


def reading(name: str, seq: int, start: int, end: int, length: int | None = None) -> Ready[str]:
    return Ready(name, seq, False, False, (start, end), end if length is None else length)


def writing(name: str, seq: int) -> Ready[str]:
    return Ready(name, seq, False, True, None, 10)


def scoring(name: str, seq: int, start: int, end: int) -> Ready[str]:
    return Ready(name, seq, True, False, (start, end), end)


def test_the_most_urgent_jobs_run_and_the_others_wait():
    tier, runs = most_urgent([Priority.BACKGROUND, Priority.INTERACTIVE, Priority.INTERACTIVE])
    assert tier == Priority.INTERACTIVE
    assert runs == [False, True, True]
    assert most_urgent([Priority.REPAIR, Priority.BACKGROUND]) == (
        Priority.REPAIR,
        [True, False],
    )


def test_a_less_urgent_job_reads_short_chunks_while_completions_come():
    assert chunk_for(Priority.INTERACTIVE, 128, 0.0) == 128
    assert chunk_for(Priority.REPAIR, 128, TYPING_S / 2) == YIELDING_CHUNK
    assert chunk_for(Priority.REPAIR, 128, TYPING_S + 1) == 128
    assert chunk_for(Priority.BACKGROUND, 4, 0.0) == 4  # never more than the setting


def test_tokens_and_prompt_chunks_come_in_sequence_order():
    ready = [reading("b", 2, 0, 100), writing("c", 3), writing("a", 1)]
    plan = plan_step(ready, chunk=64, room=512, turn=0, scratch=None)
    assert [item.seq for item in plan.items] == [1, 2, 3]
    assert plan.items[0] == NextToken("a", 1)
    assert plan.items[1] == PromptChunk("b", 2, 0, 64, last=False)


def test_a_prompt_is_read_in_chunks_and_its_last_gives_logits():
    first = plan_step([reading("a", 0, 0, 100)], chunk=64, room=512, turn=0, scratch=None)
    assert first.items == [PromptChunk("a", 0, 0, 64, last=False)]
    rest = plan_step([reading("a", 0, 64, 100)], chunk=64, room=512, turn=0, scratch=None)
    assert rest.items == [PromptChunk("a", 0, 64, 100, last=True)]


def test_the_chunk_is_shared_by_the_prompts_of_one_step():
    ready = [reading("a", 0, 0, 100), reading("b", 1, 0, 100)]
    plan = plan_step(ready, chunk=64, room=512, turn=-1, scratch=None)
    assert plan.items == [PromptChunk("a", 0, 0, 64, last=False)]


def test_prompts_take_turns_from_step_to_step():
    ready = [reading("a", 0, 0, 100), reading("b", 1, 0, 100)]
    turn, firsts = 0, []
    for _ in range(4):
        plan = plan_step(ready, chunk=32, room=512, turn=turn, scratch=None)
        turn = plan.turn
        firsts.append(plan.items[0].job)
    assert firsts == ["b", "a", "b", "a"]


def test_the_batch_room_bounds_tokens_and_prompts():
    ready = [writing("a", 0), writing("b", 1), writing("c", 2), reading("d", 3, 0, 100)]
    plan = plan_step(ready, chunk=64, room=2, turn=0, scratch=None)
    assert plan.items == [NextToken("a", 0), NextToken("b", 1)]
    plan = plan_step(ready, chunk=64, room=5, turn=0, scratch=None)
    assert plan.items[-1] == PromptChunk("d", 3, 0, 2, last=False)


def test_a_gap_before_moved_chunks_is_read_whole_in_the_scratch_sequence():
    ready = [reading("a", 0, 10, 20, length=100)]
    plan = plan_step(ready, chunk=64, room=512, turn=0, scratch=7)
    assert plan.items == [GapChunk("a", 7, 10, 20)]
    # Without a scratch sequence, or larger than the step's chunk, it waits.
    assert plan_step(ready, chunk=64, room=512, turn=0, scratch=None).items == []
    assert plan_step(ready, chunk=8, room=512, turn=0, scratch=7).items == []


def test_one_gap_a_step():
    ready = [reading("a", 0, 10, 20, length=100), reading("b", 1, 5, 9, length=50)]
    plan = plan_step(ready, chunk=64, room=512, turn=-1, scratch=7)
    assert [type(item) for item in plan.items] == [GapChunk]


def test_scoring_chunks_come_first_on_row_group_boundaries():
    ready = [writing("w", 0), scoring("s", 1, 0, 2 * ROW_GROUP + 1), scoring("t", 2, 0, 40)]
    plan = plan_step(ready, chunk=64, room=512, turn=0, scratch=None)
    first = plan.items[0]
    assert first == ScoreChunk("s", 1, 0, 2 * ROW_GROUP + 1)
    # The first chunk ends off a boundary: the second scoring job waits for the next step.
    assert [item.job for item in plan.items] == ["s", "w"]
    aligned = [scoring("s", 1, 0, 2 * ROW_GROUP), scoring("t", 2, 0, 40)]
    plan = plan_step(aligned, chunk=64, room=512, turn=0, scratch=None)
    assert plan.items == [ScoreChunk("s", 1, 0, 2 * ROW_GROUP), ScoreChunk("t", 2, 0, 40)]


def test_a_scoring_chunk_is_a_multiple_of_the_row_group_within_the_chunk():
    plan = plan_step([scoring("s", 0, 0, 100)], chunk=30, room=512, turn=0, scratch=None)
    (item,) = plan.items
    assert isinstance(item, ScoreChunk)
    assert (item.stop - item.start) % ROW_GROUP == 0 and item.stop - item.start <= 30
