"""Scoring with the real model, in this process: the log-probability of given tokens in their
context, with the KV prefix reused or not, and what a scoring job leaves for the next job."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.engine.jobs import Budget, EngineEvent, Finished, Job, PromptEvaluated
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Priority, Scheduler
from daemon.engine.scoring import ROW_GROUP
from daemon.engine.worker import Engine
from daemon.pipeline.runtime import Runtime
from daemon.store.result_cache import ResultCache
from models.loaded import LoadedModel
from tests.e2e.documents import LOAD_CONFIG, NUMBERS

# Scores of the same tokens in the same context agree this closely however they were evaluated.
TOLERANCE = 1e-3
# ... and this closely when other sequences shared the KV cache while they were evaluated.
SHARED_CACHE_TOLERANCE = 0.05


@pytest.fixture(scope="module")
def model(engine_model: LoadedModel) -> LoadedModel:
    return engine_model


def started(model: LoadedModel) -> Engine:
    """A fresh engine: its start-up leaves the context empty, so its first job runs cold."""
    eng = Engine(model, Scheduler(4, 4), SequenceStates(64 * 1024 * 1024), chunk_tokens=32)
    eng.start()
    return eng


@pytest.fixture
def engine(model: LoadedModel) -> Iterator[Engine]:
    eng = started(model)
    yield eng
    eng.close()


def wait_for_end(events: queue.Queue) -> list:
    seen = []
    while True:
        seen.append(events.get(timeout=300))
        if isinstance(seen[-1], Finished):
            return seen


def score(
    engine: Engine, tokens: list[int], score_from: int, seconds: float = 300.0, **kw
) -> tuple[Job, list]:
    events: queue.Queue = queue.Queue()
    deadline = time.perf_counter() + seconds
    job = engine.score(tokens, score_from, sink=events.put, deadline=deadline, **kw)
    return job, wait_for_end(events)


def logprobs(engine: Engine, tokens: list[int], score_from: int) -> tuple[list[float], int]:
    """The scores of ``tokens[score_from:]``, and how many tokens the job found live."""
    _, events = score(engine, tokens, score_from)
    done = events[-1]
    assert done.reason == "scored", done
    assert done.logprobs is not None and len(done.logprobs) == len(tokens) - score_from
    evaluated = next(e for e in events if isinstance(e, PromptEvaluated))
    return list(done.logprobs), evaluated.reused_tokens


def generate(engine: Engine, tokens: list[int], max_tokens: int) -> tuple[str, int]:
    """Greedy text after ``tokens``, and how many prompt tokens the job found live."""
    events: queue.Queue = queue.Queue()
    budget = Budget(max_tokens=max_tokens, deadline=time.perf_counter() + 300)
    engine.submit(tokens, budget, sink=events.put)
    seen = wait_for_end(events)
    evaluated = next(e for e in seen if isinstance(e, PromptEvaluated))
    return seen[-1].text, evaluated.reused_tokens


def prompt(model: LoadedModel, text: str) -> list[int]:
    return [model.bos_token, *model.tokenize_text(text)]  # type: ignore[list-item]


def close_enough(a: list[float], b: list[float], tolerance: float = TOLERANCE) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def test_scores_are_the_same_cold_and_with_the_prefix_reused(engine, model):
    wanted_end = model.tokenize_text("with open(path) as handle:\n        return json")
    other_end = model.tokenize_text("return json.loads(path.read_text())\n")
    for cut in range(4):  # contexts of every length modulo ROW_GROUP
        # A first line of its own: no prefix of an earlier round applies, the first score is cold.
        whole = prompt(model, f"{'ABCD'[cut]}_ROUND = {cut}\n{LOAD_CONFIG}")
        context = whole[: len(whole) - cut]
        wanted = context + wanted_end
        cold, reused_cold = logprobs(engine, wanted, len(context))
        assert reused_cold == 0
        logprobs(engine, context + other_end, len(context))  # the context is live from here on
        warm, reused_warm = logprobs(engine, wanted, len(context))
        # The context but its last token (whose logits predict the first scored token), cut
        # to a multiple of ROW_GROUP.
        assert reused_warm == (len(context) - 1) // ROW_GROUP * ROW_GROUP > 0
        assert close_enough(cold, warm), (cut, cold, warm)
        assert all(lp <= 0.0 for lp in cold)


def test_a_score_of_the_whole_sequence_matches_its_parts(engine, model):
    """Chunk boundaries and where scoring starts do not change the scores."""
    tokens = prompt(model, NUMBERS)
    whole, _ = logprobs(engine, tokens, 1)
    tail, _ = logprobs(engine, tokens, len(tokens) - 50)
    assert close_enough(whole[-50:], tail)


def test_the_greedy_token_scores_highest_among_alternatives(engine, model):
    context = prompt(model, "def add(a, b):\n    return")
    text, _ = generate(engine, context, max_tokens=1)
    greedy = model.tokenize_text(text)
    assert len(greedy) == 1, text
    pieces = (" b", " None", " (", " sum", " 0")
    others = [t for p in pieces if len(ids := model.tokenize_text(p)) == 1 for t in ids]
    others = [t for t in dict.fromkeys(others) if t != greedy[0]]
    assert len(others) >= 3
    scores = {t: logprobs(engine, [*context, t], len(context))[0][0] for t in [*greedy, *others]}
    assert max(scores, key=lambda t: scores[t]) == greedy[0], scores


def test_a_natural_continuation_scores_higher_than_a_scrambled_one(engine, model):
    context = prompt(model, "# Small arithmetic helpers.\n\n")
    natural = model.tokenize_text("def add(a, b):\n    return a + b\n")
    scrambled = model.tokenize_text("def add(a, b):\n    return a b +\n")
    good, _ = logprobs(engine, context + natural, len(context))
    bad, _ = logprobs(engine, context + scrambled, len(context))
    assert sum(good) / len(good) > sum(bad) / len(bad)


def test_generation_after_scoring_matches_a_fresh_engine(model):
    """A scoring job leaves the live tokens and the KV cache in step: the next generation
    reuses exactly the shared prefix and writes what it writes on a fresh engine."""
    wanted = prompt(model, LOAD_CONFIG)
    fresh = started(model)
    try:
        expected, _ = generate(fresh, wanted, max_tokens=8)
    finally:
        fresh.close()
    shared = len(wanted) - 6
    diverging = wanted[:shared] + model.tokenize_text("raise NotImplementedError\n")
    longer = wanted + model.tokenize_text("return {}\n")
    engine = started(model)
    try:
        logprobs(engine, diverging, shared + 1)
        after_diverging, reused = generate(engine, wanted, max_tokens=8)
        assert reused == shared
        logprobs(engine, longer, len(wanted))
        after_longer, reused = generate(engine, wanted, max_tokens=8)
        assert reused == len(wanted) - 1  # a generation job keeps all but the last token
    finally:
        engine.close()
    assert after_diverging == expected
    assert after_longer == expected


def test_a_passed_deadline_ends_scoring_without_scores(engine, model):
    tokens = prompt(model, LOAD_CONFIG)
    _, events = score(engine, tokens, 1, seconds=-1.0)
    assert [type(e) for e in events] == [Finished]
    assert events[-1].reason == "deadline" and events[-1].logprobs is None


def test_a_short_deadline_stops_a_long_scoring(engine, model):
    tokens = prompt(model, NUMBERS * 3)
    _, events = score(engine, tokens, 1, seconds=0.3)
    assert events[-1].reason == "deadline" and events[-1].logprobs is None
    assert engine.stats.deadline >= 1


def test_cancel_ends_scoring_between_chunks_and_the_engine_goes_on(engine, model):
    tokens = prompt(model, NUMBERS * 3)
    events: queue.Queue = queue.Queue()
    job = engine.score(tokens, 1, sink=events.put, deadline=time.perf_counter() + 300)
    while job not in engine.scheduler.running:
        time.sleep(0.01)
    job.cancel()
    done = wait_for_end(events)[-1]
    assert done.reason == "cancelled" and done.logprobs is None
    # What the cancelled job left live is consistent: a later score agrees with a cold one.
    short = prompt(model, NUMBERS)
    after, _ = logprobs(engine, short, len(short) - 20)
    cold = started(model)
    try:
        expected, reused = logprobs(cold, short, len(short) - 20)
        assert reused == 0
    finally:
        cold.close()
    assert close_enough(after, expected)


def test_a_scoring_repair_yields_to_a_completion_and_resumes_unchanged(engine, model):
    tokens = prompt(model, NUMBERS)
    # Expected: a fresh engine's scores, from the same (first) sequence of an empty cache.
    fresh = started(model)
    try:
        alone, _ = logprobs(fresh, tokens, 1)
    finally:
        fresh.close()
    events: queue.Queue = queue.Queue()
    job = engine.score(
        tokens,
        1,
        sink=events.put,
        deadline=time.perf_counter() + 300,
        priority=Priority.REPAIR,
    )
    assert job.scoring is not None
    while not job.scoring.logprobs:  # scoring, past its first chunk
        time.sleep(0.005)
    interrupted = threading.Event()

    def completion_sink(event: EngineEvent) -> None:
        if isinstance(event, Finished):
            interrupted.set()

    completion = Budget(max_tokens=2, deadline=time.perf_counter() + 300)
    engine.submit(prompt(model, "def add(a, b):\n    "), completion, sink=completion_sink)
    done = wait_for_end(events)[-1]
    assert interrupted.is_set()
    assert done.reason == "scored" and job.yields >= 1
    # The chunks after the pause ran with the completion's KV in the same unified cache:
    # llama.cpp then attends over more cells, and the sums come out a little differently.
    assert close_enough(list(done.logprobs), alone, SHARED_CACHE_TOLERANCE)


def test_score_from_must_leave_context_and_something_to_score(engine, model):
    tokens = prompt(model, "x = 1\n")
    for score_from in (0, len(tokens)):
        with pytest.raises(ValueError):
            engine.score(tokens, score_from, sink=lambda e: None, deadline=time.perf_counter())


async def test_the_runtime_scores_over_the_engine(engine, model, tmp_path: Path):
    runtime = Runtime(model, engine, ResultCache(tmp_path / "cache.sqlite3"))
    admission = runtime.admit(Priority.REPAIR, "scorer")
    context = prompt(model, LOAD_CONFIG)
    tokens = context + model.tokenize_text("return json.loads(path.read_text())\n")
    try:
        scored = await runtime.score(
            tokens, len(context), admission=admission, deadline=time.perf_counter() + 300
        )
        late = await runtime.score(
            tokens, len(context), admission=admission, deadline=time.perf_counter() - 1
        )
    finally:
        admission.release()
        runtime.close()
    assert scored is not None and late is None
    assert len(scored.logprobs) == len(tokens) - len(context)
    assert scored.prompt_tokens == len(tokens) and scored.reused_tokens == 0
    assert scored.total == pytest.approx(sum(scored.logprobs))
    assert scored.mean == pytest.approx(scored.total / len(scored.logprobs))
    assert scored.times is not None and scored.times.finished_at is not None
