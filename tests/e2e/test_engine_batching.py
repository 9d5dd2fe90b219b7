"""The engine decoding several jobs together on the real model: the same greedy answers as
alone, continuous batching, KV kept per document and reused after an edit anywhere."""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Iterator

import pytest

from daemon.engine.jobs import Budget, Continuation, Finished, PromptEvaluated, TokenText
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from models.loaded import LoadedModel
from tests.e2e.documents import LOAD_CONFIG, NUMBERS

DOCUMENTS = (
    "def fibonacci(n):\n    ",
    "class Stack:\n    def __init__(self):\n        ",
    "import os\n\n\ndef list_files(path):\n    ",
    "def add(a, b):\n    return",
)

# A file of about 600 tokens whose top, middle and end get edited.
LONG_FILE = (
    LOAD_CONFIG
    + "\n\n"
    + "".join(
        f"def scale_{i}(values: list[float], factor: float = {i}.5) -> list[float]:\n"
        f'    """Multiply every value by the factor {i}."""\n'
        f"    return [value * factor for value in values]\n\n\n"
        for i in range(12)
    )
    + "def total(values):\n    "
)


@pytest.fixture
def engine(engine_model: LoadedModel) -> Iterator[Engine]:
    eng = Engine(engine_model, Scheduler(16, 16), SequenceStates(0), chunk_tokens=64, parallel=4)
    eng.start()
    yield eng
    eng.close()


def tokens_of(model: LoadedModel, text: str) -> list[int]:
    return [model.bos_token, *model.tokenize_text(text)]  # type: ignore[list-item]


def budget(max_tokens: int = 24) -> Budget:
    return Budget(max_tokens=max_tokens, deadline=time.perf_counter() + 300, logprobs=True)


# Decoding in a batch of several sequences is not bit-identical to decoding alone: on a CPU
# without AVX-512 the batched matrix kernels round differently, and a token's log-probability
# moves by up to about 0.1 nats. Greedy answers therefore agree token for token until the
# model faces a near tie, where the two ways may pick different tokens of about the same
# probability. Those bounds are what "the same answer" means here; a broken batch (another
# sequence's KV read, a wrong position) moves log-probabilities by whole nats.
ROUNDING_NATS = 0.25
TIE_NATS = 0.2
TIE_PROBABILITY = math.log(0.6)  # two tokens both within TIE_NATS cannot both be above it


def pieces(answer: Continuation) -> list[str]:
    """Each generated token's text."""
    starts = (0, *answer.token_ends)
    return [answer.text[a:b] for a, b in zip(starts, answer.token_ends, strict=False)]


def assert_same_answer(together: Continuation, alone: Continuation) -> None:
    """The answer decoded in a batch is the one decoded alone, up to the kernels' rounding:
    the same tokens with about the same log-probabilities, except that from a near tie on
    the two may go different ways."""
    mine, theirs = pieces(together), pieces(alone)
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        la, lb = together.token_logprobs[i], alone.token_logprobs[i]
        if a != b:
            assert abs(la - lb) < TIE_NATS and max(la, lb) < TIE_PROBABILITY, (
                f"token {i}: {a!r} ({la:.3f}) in the batch, {b!r} ({lb:.3f}) alone"
            )
            return
        assert abs(la - lb) < ROUNDING_NATS, f"token {i} {a!r}: {la:.3f} vs {lb:.3f}"
    assert together.text == alone.text and together.reason == alone.reason


def submit(engine: Engine, tokens: list[int], n: int = 24, **kw) -> tuple[object, queue.Queue]:
    events: queue.Queue = queue.Queue()
    job = engine.submit(tokens, budget(n), sink=events.put, **kw)
    return job, events


def wait(events: queue.Queue) -> list:
    seen = []
    while True:
        seen.append(events.get(timeout=300))
        if isinstance(seen[-1], Finished):
            return seen


def answer(engine: Engine, tokens: list[int], n: int = 24, **kw) -> list:
    return wait(submit(engine, tokens, n, **kw)[1])


def reused(events: list) -> int:
    return next(e.reused_tokens for e in events if isinstance(e, PromptEvaluated))


def cold_answer(engine: Engine, tokens: list[int], n: int = 24) -> Continuation:
    """The answer with every sequence of the KV cache emptied first: nothing is reused."""
    engine.slots.clear()
    events = answer(engine, tokens, n)
    assert reused(events) == 0
    return events[-1].own


def test_jobs_decoded_together_answer_as_they_do_alone(engine, engine_model):
    prompts = [tokens_of(engine_model, text) for text in DOCUMENTS]
    alone = [answer(engine, p)[-1].own for p in prompts]
    engine.slots.clear()
    steps_before = engine.stats.batched_steps
    pending = [submit(engine, p)[1] for p in prompts]
    together = [wait(events)[-1].own for events in pending]
    for mine, theirs in zip(together, alone, strict=True):
        assert_same_answer(mine, theirs)
    assert engine.stats.batched_steps > steps_before  # they really shared decode steps


def test_a_long_prompt_does_not_freeze_a_generating_job(engine, engine_model):
    short = tokens_of(engine_model, DOCUMENTS[0])
    long = tokens_of(engine_model, LONG_FILE)
    order: list[str] = []
    lock = threading.Lock()

    def note(name: str):
        def sink(event):
            with lock:
                if isinstance(event, TokenText):
                    order.append(f"{name} token")
                elif isinstance(event, PromptEvaluated):
                    order.append(f"{name} prompt")
                elif isinstance(event, Finished):
                    order.append(f"{name} end")
                    done[name].set()

        return sink

    done = {"short": threading.Event(), "long": threading.Event()}
    engine.submit(short, budget(48), sink=note("short"))
    while not any(e == "short token" for e in order):
        time.sleep(0.005)
    engine.submit(long, budget(4), sink=note("long"))
    assert done["short"].wait(300) and done["long"].wait(300)
    # The long prompt (about ten chunks) was evaluated while the short job kept writing.
    long_started = order.index("long prompt")
    assert "short token" in order[order.index("short token") + 1 : long_started]


def test_cancelling_one_job_leaves_the_others_unchanged(engine, engine_model):
    prompts = [tokens_of(engine_model, text) for text in DOCUMENTS[:3]]
    alone = [answer(engine, p)[-1].own for p in prompts]
    engine.slots.clear()
    jobs = [submit(engine, p) for p in prompts]
    jobs[1][0].cancel()  # type: ignore[attr-defined]
    ends = [wait(events)[-1] for _, events in jobs]
    assert ends[1].reason == "cancelled"
    assert_same_answer(ends[0].own, alone[0])
    assert_same_answer(ends[2].own, alone[2])


def test_each_document_keeps_its_prompt_evaluated(engine, engine_model):
    first = tokens_of(engine_model, "# one\n" + LONG_FILE)
    second = tokens_of(engine_model, "# two\n" + NUMBERS)
    answer(engine, first, 2)
    answer(engine, second, 2)
    # Back to the first document: its slot still holds it, nothing was saved or restored.
    again = answer(engine, first + engine_model.tokenize_text("return"), 2)
    assert reused(again) >= len(first) - 1


def test_a_prompt_read_without_writing_is_held_for_the_next_job(engine, engine_model):
    """A job with no tokens to write (a window's warm-up) reads its prompt and ends; the
    engine says it holds that prompt, and the next job on it reads only what is new."""
    document = tokens_of(engine_model, "# warm\n" + LONG_FILE)
    assert engine.cached_prefix(document) < 8
    events = answer(engine, document, 0)
    assert events[-1].reason == "length" and events[-1].tokens == 0
    assert engine.cached_prefix(document) == len(document)
    following = document + engine_model.tokenize_text("return")
    assert reused(answer(engine, following, 2)) >= len(document) - 1


@pytest.fixture(params=["streams", "unified"])
def any_engine(request, engine_model, unified_model) -> Iterator[Engine]:
    """An engine on each kind of KV cache: a stream per sequence, and one shared by all."""
    model = engine_model if request.param == "streams" else unified_model
    eng = Engine(model, Scheduler(16, 16), SequenceStates(0), chunk_tokens=64, parallel=4)
    eng.start()
    yield eng
    eng.close()


def test_a_shared_prefix_is_copied_between_sequences(any_engine, engine_model):
    engine = any_engine
    base = tokens_of(engine_model, LONG_FILE)
    alone = answer(engine, base + engine_model.tokenize_text("result = 0\n"), 8)[-1].text
    engine.slots.clear()
    answer(engine, base, 2)
    copies = engine.slots.stats.copied
    # Two prompts that share the file and differ at the end run together: the second copies
    # the prefix from the first's sequence instead of evaluating it.
    a = submit(engine, base + engine_model.tokenize_text("return sum(values)\n"), 2)[1]
    b = submit(engine, base + engine_model.tokenize_text("result = 0\n"), 2)[1]
    assert reused(wait(a)) >= len(base) - 1
    copied = wait(b)
    assert reused(copied) >= len(base) - 1
    assert engine.slots.stats.copied > copies
    assert alone.startswith(copied[-1].text)
    # The copied KV is the donor's: the answer is the one evaluated from scratch.
    assert answer(engine, base + engine_model.tokenize_text("result = 0\n"), 8)[-1].text == alone


def test_documents_in_scattered_slots_are_moved_together_and_keep_their_kv(engine, engine_model):
    """Jobs whose documents sit in non-consecutive streams are moved into consecutive ones
    before they are decoded together; every document keeps its KV through the exchanges,
    and every answer is the one evaluated from scratch."""
    prompts = [
        tokens_of(engine_model, f"# document {i}\n" + text) for i, text in enumerate(DOCUMENTS)
    ]
    cold = [cold_answer(engine, p, 12) for p in prompts]
    engine.slots.clear()
    for p in prompts:  # one document per slot
        answer(engine, p, 0)
    held = {engine.slots.slots[i].seq: list(engine.slots.slots[i].tokens) for i in range(4)}
    assert sorted(len(t) for t in held.values()) == sorted(len(p) for p in prompts)
    swapped = engine.slots.stats.swapped
    # The first and third documents at once: streams 0 and 2 (or wherever they are) are
    # not neighbours, so one of them is exchanged with a neighbour first.
    first, third = submit(engine, prompts[0], 12)[1], submit(engine, prompts[2], 12)[1]
    a, c = wait(first), wait(third)
    assert engine.slots.stats.swapped > swapped
    assert reused(a) == len(prompts[0]) - 1 and reused(c) == len(prompts[2]) - 1
    assert_same_answer(a[-1].own, cold[0])
    assert_same_answer(c[-1].own, cold[2])
    # The documents that were exchanged but not decoded kept their KV too.
    for i in (1, 3):
        events = answer(engine, prompts[i], 12)
        assert reused(events) == len(prompts[i]) - 1
        assert_same_answer(events[-1].own, cold[i])


EDITS = [
    pytest.param(lambda text: "import sys\n" + text, id="import-added-at-the-top"),
    pytest.param(
        lambda text: text.replace("factor 5.", "factor five."), id="line-changed-in-the-middle"
    ),
    pytest.param(
        lambda text: text.replace('    """Multiply every value by the factor 3."""\n', ""),
        id="line-deleted",
    ),
]


def edited(engine: Engine, model: LoadedModel, edit) -> tuple[list[int], list[int], list]:
    """The file's tokens before and after ``edit``, and the events of answering after it
    once the file before it was evaluated."""
    before = tokens_of(model, LONG_FILE)
    after = tokens_of(model, edit(LONG_FILE))
    assert after != before
    answer(engine, before, 2)
    return before, after, answer(engine, after, 24)


@pytest.mark.parametrize("edit", EDITS)
def test_by_default_an_edit_keeps_the_prefix_and_the_answer_is_the_cold_one(
    engine, engine_model, edit
):
    before, after, events = edited(engine, engine_model, edit)
    prefix = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    # The prefix is kept (one of a couple of tokens is not worth a document's sequence).
    assert reused(events) == prefix or (prefix < 32 and reused(events) == 0)
    assert engine.stats.prompt_tokens_moved == 0
    assert_same_answer(events[-1].own, cold_answer(engine, after))


@pytest.mark.parametrize("cache", ["engine_model", "unified_model"])
@pytest.mark.parametrize("edit", EDITS)
def test_with_reuse_after_edit_the_chunks_below_the_edit_are_kept(request, cache, edit):
    """In a KV stream per sequence (edited lines evaluated in the spare stream and joined
    in) as in one unified cache (evaluated in a scratch sequence sharing the cells)."""
    model = request.getfixturevalue(cache)
    moving = Engine(
        model, Scheduler(4, 4), SequenceStates(0), chunk_tokens=64, reuse_after_edit=True
    )
    moving.start()
    try:
        assert moving.slots.scratch is not None  # the embedded model's cache can be joined
        assert moving.summary().endswith("the chunks below an edit kept")
        before, after, events = edited(moving, model, edit)
        prefix = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
        assert reused(events) >= len(after) - 40  # far more than the prefix before the edit
        assert reused(events) > prefix + 200
        assert moving.stats.prompt_tokens_moved > 0
        # The moved chunks' KV predates the edit, so the answer may differ from a cold one's
        # (it does for two of these edits); it is still a whole answer from the model.
        assert events[-1].reason in ("stop", "length") and events[-1].text.strip()
        # What the cache holds afterwards is consistent: the same prompt again answers the same.
        assert answer(moving, after, 24)[-1].text == events[-1].text
    finally:
        moving.close()


def test_an_edit_joined_in_while_other_documents_are_answered_changes_no_answer(engine_model):
    """With a stream per sequence the edited lines are evaluated in the spare stream, the one
    slots are also exchanged through: an edited file answered together with others gets the
    answer it gets alone, and so do the others."""
    moving = Engine(
        engine_model,
        Scheduler(8, 8),
        SequenceStates(0),
        chunk_tokens=64,
        parallel=4,
        reuse_after_edit=True,
    )
    moving.start()
    try:
        edit = EDITS[0].values[0]
        before, after, alone = edited(moving, engine_model, edit)
        others = [tokens_of(engine_model, f"# other {i}\n" + DOCUMENTS[i]) for i in (1, 3)]
        others_alone = [cold_answer(moving, p, 12) for p in others]
        moving.slots.clear()
        answer(moving, before, 2)
        for p in others:  # each other document in a slot of its own, in between
            answer(moving, p, 0)
        steps = moving.stats.batched_steps
        sent = [submit(moving, after, 24)[1]] + [submit(moving, p, 12)[1] for p in others]
        results = [wait(events) for events in sent]
        assert reused(results[0]) > len(after) - 40  # the chunks below the edit were kept
        assert_same_answer(results[0][-1].own, alone[-1].own)
        for result, other_alone in zip(results[1:], others_alone, strict=True):
            assert_same_answer(result[-1].own, other_alone)
        assert moving.stats.batched_steps > steps  # they were decoded together
    finally:
        moving.close()


def test_a_job_that_fails_to_start_ends_with_an_error_and_the_engine_goes_on(
    engine, engine_model, monkeypatch
):
    prompt = tokens_of(engine_model, DOCUMENTS[0])
    expected = answer(engine, prompt)[-1].text
    claim = engine.slots.claim
    calls = []

    def fails_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise KeyError(96)  # as a saved state evicted under the claim once did
        return claim(*args, **kwargs)

    monkeypatch.setattr(engine.slots, "claim", fails_once)
    failed = answer(engine, tokens_of(engine_model, DOCUMENTS[1]))[-1]
    assert failed.reason == "error" and "96" in (failed.error or "")
    # The engine still runs; the slots it emptied are read again and answer as before.
    again = answer(engine, prompt)
    assert reused(again) == 0 and again[-1].text == expected
    assert not any(slot.busy for slot in engine.slots.slots)


def test_a_round_that_fails_outside_any_job_ends_the_running_jobs_and_the_engine_goes_on(
    engine, engine_model, monkeypatch
):
    prompt = tokens_of(engine_model, DOCUMENTS[2])
    expected = answer(engine, prompt)[-1].text
    admit = engine._admit
    calls = []

    def fails_once():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the scheduler broke")
        admit()

    monkeypatch.setattr(engine, "_admit", fails_once)
    failed = answer(engine, tokens_of(engine_model, DOCUMENTS[3]))[-1]
    assert failed.reason == "error" and "scheduler broke" in (failed.error or "")
    again = answer(engine, prompt)
    assert reused(again) == 0 and again[-1].text == expected
