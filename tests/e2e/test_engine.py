"""The engine on the real model, in this process: budgets, cancel, KV reuse, suppression."""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
import time
from collections.abc import Iterator

import llama_cpp
import pytest

from daemon.answers.comments import comment_tokens
from daemon.answers.placeholder import placeholder_tokens
from daemon.engine import step_plan
from daemon.engine.jobs import Budget, Finished, PromptEvaluated, TokenText
from daemon.engine.kv_states import SequenceStates
from daemon.engine.report import LocalFigures
from daemon.engine.scheduler import Priority, Scheduler
from daemon.engine.worker import Engine
from daemon.settings import BRANCH_BELOW, load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model
from tests.e2e.documents import NUMBERS


@pytest.fixture(scope="module")
def model(engine_model: LoadedModel) -> LoadedModel:
    return engine_model


@pytest.fixture
def engine(model: LoadedModel) -> Iterator[Engine]:
    eng = Engine(model, Scheduler(4, 4), SequenceStates(64 * 1024 * 1024), chunk_tokens=32)
    eng.start()
    yield eng
    eng.close()


def run(engine: Engine, tokens: list[int], budget: Budget, stops=(), on_token=None, **kw):
    events: queue.Queue = queue.Queue()

    def sink(event):
        events.put(event)
        if on_token and isinstance(event, TokenText):
            on_token(job)

    job = engine.submit(tokens, budget, sink=sink, stop_strings=stops, **kw)
    seen = []
    while True:
        event = events.get(timeout=60)
        seen.append(event)
        if isinstance(event, Finished):
            return job, seen


def prompt(model: LoadedModel, text: str) -> list[int]:
    return [model.bos_token, *model.tokenize_text(text)]  # type: ignore[list-item]


def budget(max_tokens: int = 16, seconds: float = 60.0) -> Budget:
    return Budget(max_tokens=max_tokens, deadline=time.perf_counter() + seconds)


def test_facts_of_the_embedded_model(model):
    facts = model.facts
    assert facts.architecture == "qwen2"
    assert facts.prompt_format == "qwen2.5-coder"
    # Qwen2.5-Coder has the three FIM tokens its format names.
    assert facts.fim_tokens == {
        "prefix": model.special_token("<|fim_prefix|>"),
        "suffix": model.special_token("<|fim_suffix|>"),
        "middle": model.special_token("<|fim_middle|>"),
    }
    assert None not in facts.fim_tokens.values()
    assert model.special_token("<|endoftext|>") in facts.eog_tokens
    assert model.special_token("<|im_end|>") in facts.eog_tokens
    assert facts.suppressed_tokens == []  # and no reasoning tokens
    assert facts.backend == "CPU" and facts.n_gpu_layers == 0
    assert facts.flash_attn == "auto"
    assert model.llm.context_params.flash_attn_type == llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO


@pytest.mark.parametrize(
    ("setting", "wanted"),
    [
        ("on", llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED),
        ("off", llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED),
        ("auto", llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO),
    ],
)
def test_flash_attention_follows_the_setting(setting, wanted):
    """A single-sequence model (the context ``Llama`` makes is kept, or replaced for "auto")
    gets the flash attention asked for, and the engine answers on it."""
    settings = load_settings()
    loaded = LoadedModel(
        resolve_model(None, settings.cache_dir, settings.model),
        n_ctx=512,
        n_batch=128,
        n_threads=None,
        n_gpu_layers=-1,
        prompt_format=None,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        flash_attn=setting,
    )
    try:
        assert loaded.llm.context_params.flash_attn_type == wanted
        assert loaded.facts.flash_attn == setting
        eng = Engine(loaded, Scheduler(2, 2), SequenceStates(0))
        eng.start()
        try:
            _, events = run(eng, prompt(loaded, NUMBERS), budget(max_tokens=6))
        finally:
            eng.close()
        assert events[-1].reason == "length" and events[-1].text.strip()
    finally:
        loaded.close()


def test_max_tokens_is_enforced(engine, model):
    _, events = run(engine, prompt(model, NUMBERS), budget(max_tokens=7))
    done = events[-1]
    assert done.reason == "length" and done.tokens == 7
    assert done.text == "".join(e.text for e in events if isinstance(e, TokenText))


def test_cancel_stops_within_one_token(engine, model):
    job, events = run(
        engine, prompt(model, NUMBERS), budget(max_tokens=200), on_token=lambda j: j.cancel()
    )
    done = events[-1]
    assert done.reason == "cancelled"
    assert done.tokens <= 2
    assert job.cancelled


def test_a_passed_deadline_stops_before_generating(engine, model):
    spent = Budget(max_tokens=50, deadline=time.perf_counter() - 1)
    _, events = run(engine, prompt(model, NUMBERS), spent)
    assert events[-1].reason == "deadline" and events[-1].tokens == 0


def test_deadline_stops_a_long_generation(engine, model):
    tokens = prompt(model, NUMBERS)
    run(engine, tokens, budget(max_tokens=1))  # the prompt is in the KV cache from here on
    _, events = run(engine, tokens, budget(max_tokens=500, seconds=0.5))
    assert events[-1].reason == "deadline"
    assert events[-1].tokens < 500


def test_kv_prefix_is_reused_across_jobs(engine, model):
    base = prompt(model, NUMBERS)
    run(engine, base, budget(max_tokens=2))
    _, second = run(engine, base + model.tokenize_text("40,\n    "), budget(max_tokens=2))
    evaluated = next(e for e in second if isinstance(e, PromptEvaluated))
    assert evaluated.reused_tokens >= len(base) - 1


def test_stop_strings_end_the_answer_before_the_stop(engine, model):
    _, events = run(engine, prompt(model, NUMBERS), budget(max_tokens=60), stops=("\n",))
    done = events[-1]
    assert done.reason == "stop"
    assert "\n" not in done.text and done.text.strip().rstrip(",").isdigit()


def test_suppressed_tokens_are_never_sampled(model):
    tokens = prompt(model, NUMBERS)
    plain = Engine(model)
    plain.start()
    try:
        _, events = run(plain, tokens, budget(max_tokens=1))
        first_piece = events[-1].text
    finally:
        plain.close()
    favourite = model.tokenize_text(first_piece)[0]
    # A vocabulary with a reasoning marker gets it suppressed the same way (a logit bias).
    model.facts.suppressed_tokens = [favourite]
    try:
        biased = Engine(model)
        biased.start()
        _, events = run(biased, tokens, budget(max_tokens=1))
        biased.close()
    finally:
        model.facts.suppressed_tokens = []
    assert events[-1].text != first_piece


def test_a_jobs_banned_tokens_are_never_sampled_and_other_jobs_keep_them(engine, model):
    tokens = prompt(model, NUMBERS)
    _, events = run(engine, tokens, budget(max_tokens=1))
    first_piece = events[-1].text
    favourite = model.tokenize_text(first_piece)[0]
    banned = dataclasses.replace(budget(max_tokens=1), banned=(favourite,))
    _, events = run(engine, tokens, banned)
    assert events[-1].reason == "length" and events[-1].text != first_piece
    # The ban is the job's own: the next job without one writes the favourite again.
    _, events = run(engine, tokens, budget(max_tokens=1))
    assert events[-1].text == first_piece


def test_the_tokens_that_open_a_comment_and_spell_pass(model):
    openers = model.tokens_starting_with("#")
    assert model.tokenize_text("#")[0] in openers and model.tokenize_text(" #")[0] in openers
    assert all(model.piece(t).lstrip(b" \t\r\n").startswith(b"#") for t in openers)
    banned = placeholder_tokens(model, "python")
    assert model.tokenize_text(" pass")[0] in banned and set(openers) <= set(banned)
    assert model.tokenize_text(" return")[0] not in banned


def test_a_body_written_with_the_comment_tokens_forbidden_has_no_comment(engine, model):
    """The real vocabulary's comment openers are the ones the model writes: asked to go on
    with a commented body, it writes a comment, and with them forbidden, code."""
    text = (
        "def total(items):\n    # Start from zero\n    total = 0\n    # Add each item\n"
        "    for item in items:\n        total += item\n    "
    )
    tokens = prompt(model, text)
    _, events = run(engine, tokens, budget(max_tokens=8))
    assert events[-1].text.lstrip().startswith("#")
    quiet = dataclasses.replace(budget(max_tokens=8), banned=comment_tokens(model, "python"))
    _, events = run(engine, tokens, quiet)
    assert events[-1].text.strip() and "#" not in events[-1].text


def test_long_whitespace_pieces_round_trip(model):
    text = "def f():\n" + " " * 40 + "return 1\n" + "\t" * 12 + "x\n"
    pieces = b"".join(model.piece(t) for t in model.tokenize_text(text))
    assert pieces.decode() == text


def test_a_saved_state_is_restored_when_switching_back(engine, model):
    first = prompt(model, "# file one\n" + NUMBERS)
    run(engine, first, budget(max_tokens=1))
    # As many other files as the KV cache has sequences: the first one's gives way, saved.
    for n in range(len(engine.slots)):
        other = "".join(f"item_{n}_{i} = {i}\n" for i in range(40))
        run(engine, prompt(model, f"# file {n}\n" + other), budget(max_tokens=1))
    _, events = run(engine, first + model.tokenize_text("40,\n"), budget(max_tokens=1))
    evaluated = next(e for e in events if isinstance(e, PromptEvaluated))
    assert evaluated.reused_tokens >= len(first) - 1
    assert engine.states.stats.restored >= 1


def test_a_repair_yields_to_a_completion_and_resumes_unchanged(engine, model):
    tokens = prompt(model, NUMBERS)
    # Deadlines a loaded machine still meets: the comparison needs both runs to reach 40 tokens.
    _, alone = run(engine, tokens, budget(max_tokens=40, seconds=600), priority=Priority.REPAIR)
    assert alone[-1].reason == "length"
    expected = alone[-1].text

    started = threading.Event()
    repair_events: queue.Queue = queue.Queue()

    def repair_sink(event):
        repair_events.put(event)
        if isinstance(event, TokenText):
            started.set()

    repair = engine.submit(
        tokens, budget(max_tokens=40, seconds=600), sink=repair_sink, priority=Priority.REPAIR
    )
    assert started.wait(60)
    _, interactive = run(engine, prompt(model, "def add(a, b):\n    "), budget(max_tokens=4))
    assert interactive[-1].reason in ("stop", "length")
    while not isinstance(done := repair_events.get(timeout=60), Finished):
        pass
    assert repair.yields >= 1
    assert engine.stats.yielded >= 1
    # The resumed repair wrote exactly what it writes without interruption.
    assert done.text == expected and done.tokens == alone[-1].tokens


def test_while_completions_come_a_repair_reads_its_prompt_in_short_steps(
    engine, model, monkeypatch
):
    """A completion waits for the step under way: while completions come, the steps of a
    repair are short; once they stop coming, a repair's steps read whole chunks again."""
    monkeypatch.setattr(step_plan, "TYPING_S", 600.0)  # however slow this machine is
    tokens = prompt(model, NUMBERS)
    assert len(tokens) > 4 * engine.chunk_tokens
    run(engine, prompt(model, "def add(a, b):\n    "), budget(max_tokens=2))
    engine.slots.clear()
    steps = engine.stats.steps
    run(engine, tokens, budget(max_tokens=1, seconds=600), priority=Priority.REPAIR)
    short_steps = engine.stats.steps - steps
    assert short_steps >= len(tokens) // step_plan.YIELDING_CHUNK
    engine.stepper.interactive_at = float("-inf")  # no completion for a while
    engine.slots.clear()
    steps = engine.stats.steps
    run(engine, tokens, budget(max_tokens=1, seconds=600), priority=Priority.REPAIR)
    assert engine.stats.steps - steps <= len(tokens) // engine.chunk_tokens + 2


def test_the_prompt_formats_stop_pieces_end_generation(model, monkeypatch):
    """A format's stop piece that is not a token of the vocabulary is a stop string of every
    job: the answer ends before it."""
    tokens = prompt(model, "def add(a, b):\n    return")
    free_engine = Engine(model)
    free_engine.start()
    try:
        _, free = run(free_engine, tokens, budget(max_tokens=12))
    finally:
        free_engine.close()
    written = free[-1].text
    assert len(written.strip()) >= 4, written
    piece = written.strip()[2:4]
    monkeypatch.setattr(model, "facts", dataclasses.replace(model.facts, stop_strings=[piece]))
    stopping = Engine(model)
    stopping.start()
    try:
        _, stopped = run(stopping, tokens, budget(max_tokens=12))
    finally:
        stopping.close()
    assert stopped[-1].reason == "stop"
    assert stopped[-1].text == written[: written.index(piece)]


def test_the_cost_of_decoding_candidates_together_is_measured_at_start(engine, model):
    assert engine.fork_cost is not None and engine.fork_cost > 0
    assert engine.forks == (engine.fork_cost <= engine.fork_cost_limit)
    assert engine.report().figures.fork_cost == round(engine.fork_cost, 2)


def test_the_engines_report_counts_its_jobs_and_its_saved_states(engine, model):
    _, events = run(engine, prompt(model, NUMBERS), budget(max_tokens=8))
    report = engine.report()
    figures = report.figures
    assert isinstance(figures, LocalFigures) and figures.as_json()["kind"] == "local"
    assert figures.jobs == 1 and figures.tokens_generated == events[-1].tokens
    assert figures.kv_slots == len(engine.slots) and figures.busy == 0
    assert report.queue.as_json()["queued_interactive"] == 0
    states = engine.states
    assert report.saved_states.kv_states == len(states)
    assert report.saved_states.kv_state_bytes == states.bytes
    assert engine.kind == "local" and engine.backends() == []


def test_no_candidates_where_they_cost_more_than_the_limit(engine, model):
    engine.fork_cost_limit = engine.fork_cost / 2  # as on a CPU whose batches cost
    tokens = prompt(model, "def area(width, height):\n    return ")
    budget = Budget(max_tokens=12, deadline=time.perf_counter() + 60, candidates=3)
    _, seen = run(engine, tokens, budget, stops=("\n",))
    assert seen[-1].alternatives == () and seen[-1].own is not None
    assert engine.stats.branches == 0


def test_candidates_come_from_one_prompt_and_leave_the_greedy_answer_as_it_was(engine, model):
    engine.fork_cost_limit = 0  # wherever there is room, whatever they cost here
    tokens = prompt(
        model,
        'import os\n\n\ndef list_python_files(root):\n    """Return the .py files under root."""\n'
        "    result = []\n    for dirpath, dirnames, filenames in os.",
    )
    alone = Budget(max_tokens=16, deadline=time.perf_counter() + 60)
    _, seen = run(engine, tokens, alone, stops=("\n",))
    greedy = seen[-1]
    budget = Budget(max_tokens=16, deadline=time.perf_counter() + 60, candidates=3)
    _, seen = run(engine, tokens, budget, stops=("\n",))
    finished = seen[-1]
    assert isinstance(finished, Finished) and finished.reason == "stop"
    assert finished.text == greedy.text  # the job's own continuation is still greedy
    streamed = "".join(e.text for e in seen if isinstance(e, TokenText))
    assert streamed == finished.text  # only the job's own text streams
    own = finished.own
    assert own is not None and own.text == finished.text
    assert len(own.token_logprobs) == len(own.token_ends) == own.tokens
    assert all(lp <= 0 for lp in own.token_logprobs) and own.token_ends[-1] == len(own.text)
    assert 1 <= len(finished.alternatives) <= 2
    texts = {own.text}
    for other in finished.alternatives:
        assert other.text not in texts  # each one writes something else
        texts.add(other.text)
        assert len(other.token_logprobs) == other.tokens >= 1
    assert engine.stats.branches >= len(finished.alternatives)


def test_candidates_branch_where_the_model_is_first_unsure_of_its_line(engine, model):
    """Past a first token the model is sure of (`` *`` after ``return width``), the others
    branch at the first token it is not sure of, and share the line up to there."""
    engine.fork_cost_limit = 0  # wherever there is room, whatever they cost here
    tokens = prompt(model, "def area(width, height):\n    return width")
    budget = Budget(max_tokens=12, deadline=time.perf_counter() + 60, candidates=3)
    _, seen = run(engine, tokens, budget, stops=("\n",))
    finished = seen[-1]
    own = finished.own
    assert isinstance(finished, Finished) and own is not None, finished
    unsure = [i for i, lp in enumerate(own.token_logprobs) if math.exp(lp) < BRANCH_BELOW]
    assert unsure and unsure[0] >= 1, own  # sure of its first token
    shared = own.text[: own.token_ends[unsure[0] - 1]]
    assert shared.strip() and finished.alternatives
    at = unsure[0]
    for other in finished.alternatives:
        assert other.text.startswith(shared) and len(other.token_logprobs) == other.tokens
        # Up to the branch, a branch's tokens are the job's own; there, a less likely one.
        assert other.token_logprobs[:at] == own.token_logprobs[:at]
        assert other.token_logprobs[at] < own.token_logprobs[at]


def test_a_lead_is_written_first_and_never_shown(engine, model):
    """Token healing: the prompt ends before ``wa``; the model writes it within its first
    tokens, and the answer is what comes after it."""
    tokens = prompt(
        model,
        'import os\n\n\ndef list_python_files(root):\n    """Return the .py files under root."""\n'
        "    result = []\n    for dirpath, dirnames, filenames in os.",
    )
    budget = Budget(max_tokens=16, deadline=time.perf_counter() + 60, lead="wa")
    _, seen = run(engine, tokens, budget, stops=("\n",))
    finished = seen[-1]
    assert isinstance(finished, Finished) and finished.reason == "stop"
    streamed = "".join(e.text for e in seen if isinstance(e, TokenText))
    assert streamed == finished.text and finished.text.startswith("lk(")


def test_an_indentation_lead_and_candidates_that_all_agree_with_it(engine, model):
    engine.fork_cost_limit = 0  # wherever there is room, whatever they cost here
    tokens = prompt(model, "def area(width, height):\n")
    lead = "    "
    budget = Budget(
        max_tokens=12, deadline=time.perf_counter() + 60, candidates=3, lead=lead, logprobs=True
    )
    _, seen = run(engine, tokens, budget, stops=("\n",))
    finished = seen[-1]
    assert isinstance(finished, Finished) and finished.reason == "stop", finished
    assert finished.text.strip() and not finished.text.startswith(" ")
    own = finished.own
    assert own is not None and all(lp <= 0 for lp in own.token_logprobs)
    # The indentation's last blank is written with the code (`` return``), as the tokenizer
    # cuts an indented line: no token of blanks alone ends it.
    assert own.first_token is not None and model.piece(own.first_token).startswith(b" ")
    # The candidates branch where the code starts, past the indentation (not where the
    # indentation's blanks could split into tokens otherwise), so each writes other code; each
    # agrees with the indentation (one that does not would have ended its job with an error).
    assert finished.alternatives
    for other in finished.alternatives:
        assert other.reason in ("stop", "length") and other.text.strip() != finished.text.strip()
        assert not other.text.startswith(" ")


def test_an_indentation_the_model_would_not_choose_still_ends_in_code(engine, model):
    """Eight blanks where the model expects none: free to, it writes them a blank at a time
    and then no code; made to write the last blank with what follows, it writes code."""
    tokens = prompt(model, "x = 1\n")
    budget = Budget(
        max_tokens=8,
        deadline=time.perf_counter() + 60,
        lead="        ",
        lead_to_code=True,
        logprobs=True,
    )
    _, seen = run(engine, tokens, budget, stops=("\n",))
    finished = seen[-1]
    assert isinstance(finished, Finished), finished
    own = finished.own
    assert own is not None and own.first_token is not None
    assert model.piece(own.first_token).startswith(b" ")
    assert finished.text[:1].isalpha() or finished.text[:1] in "_#@(['\"", finished.text


def test_an_answer_barred_from_its_first_token_begins_with_another(engine, model):
    tokens = prompt(model, "def area(width, height):\n    return ")
    alone = Budget(max_tokens=8, deadline=time.perf_counter() + 60, logprobs=True)
    _, seen = run(engine, tokens, alone, stops=("\n",))
    first = seen[-1].own
    assert first is not None and first.first_token is not None
    barred = dataclasses.replace(alone, not_first=(first.first_token,))
    _, seen = run(engine, tokens, barred, stops=("\n",))
    second = seen[-1].own
    assert second is not None and second.first_token not in (None, first.first_token)
    assert second.text != first.text and second.token_logprobs[0] < first.token_logprobs[0]


def test_a_job_that_asks_for_candidates_anyway_gets_them_where_they_cost_more(engine, model):
    engine.fork_cost_limit = engine.fork_cost / 2  # as on a CPU whose batches cost
    tokens = prompt(model, "def area(width, height):\n    return ")
    budget = Budget(
        max_tokens=12, deadline=time.perf_counter() + 60, candidates=3, fork_anyway=True
    )
    _, seen = run(engine, tokens, budget, stops=("\n",))
    assert seen[-1].alternatives and engine.stats.branches >= 1
