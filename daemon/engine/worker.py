"""The engine: one worker thread owns the llama.cpp context and runs one generation at a time.

Its interface is deliberately narrow: submit a token prompt with a budget, the place in the
queue its request was admitted to (or a priority and user, to take a place of its own) and a
sink for events; get a ``Job`` back that can be cancelled. Jobs wait in the ``Scheduler``. The
model's own stop strings (its prompt format's end pieces) end every answer. The worker reuses
the KV prefix left by the previous job, or restores a saved state of an earlier prompt
(``SequenceStates``), evaluates the rest of the prompt in chunks (a cancel or a deadline is
seen between chunks), then samples token by token, checking the cancel flag, the deadline,
``max_tokens`` and a request to yield before every token. A job that yields to a more urgent
one is put back and later resumes where it stopped. Events go to the sink from the worker
thread.

A scoring job (``score``) runs through the same queue and checks: it keeps the live prefix up
to the token before the first scored one, evaluates the rest in chunks with logits for every
position (``daemon.engine.scoring``), and ends with each scored token's log-probability.
"""

from __future__ import annotations

import codecs
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from llama_cpp import _internals

from daemon.engine.jobs import (
    Budget,
    Finished,
    Job,
    Progress,
    PromptEvaluated,
    Scoring,
    Sink,
    TokenText,
    Until,
)
from daemon.engine.kv_states import MIN_GAIN, MIN_TOKENS, SequenceStates, common_prefix
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.scoring import ROW_GROUP, chunk_size, score_chunk
from daemon.engine.speed import SpeedMeter
from daemon.errors import ShuttingDown
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# Evaluated and decoded once at start-up, to warm the model up and to measure its speed.
_WARM_UP_TEXT = (
    "import json\n\n\ndef load_config(path: str) -> dict:\n"
    '    """Read a JSON config file and return its settings as a dict."""\n'
    "    with open(path, encoding='utf-8') as handle:\n"
    "        return json.load(handle)\n\n\ndef main() -> None:\n"
)
_WARM_UP_DECODES = 8


@dataclass
class EngineStats:
    jobs: int = 0
    cancelled: int = 0
    deadline: int = 0
    errors: int = 0
    yielded: int = 0
    tokens_generated: int = 0
    tokens_scored: int = 0
    prompt_tokens_evaluated: int = 0
    prompt_tokens_reused: int = 0
    last_job_tokens: int = 0
    last_job_reason: str | None = None


class _Yielded(Exception):
    """A job gave way to a more urgent one; it goes back to the scheduler."""


class Engine:
    def __init__(
        self,
        model: LoadedModel,
        scheduler: Scheduler | None = None,
        states: SequenceStates | None = None,
        chunk_tokens: int = 128,
    ) -> None:
        self.model = model
        self.scheduler = scheduler if scheduler is not None else Scheduler()
        # Not `states or ...`: an empty SequenceStates is falsy (it has a length).
        self.states = states if states is not None else SequenceStates(0)
        self.chunk_tokens = chunk_tokens
        self._thread: threading.Thread | None = None
        self._closed = False
        self.busy = False
        self.stats = EngineStats()
        self.speed = SpeedMeter()
        self.ready = threading.Event()
        facts = model.facts
        self._stop_tokens = frozenset(facts.stop_tokens)
        self._suppressed = {t: float("-inf") for t in facts.suppressed_tokens}
        self._format_stops = tuple(facts.stop_strings)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="assist-engine", daemon=True)
        self._thread.start()
        self.ready.wait()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for pending in self.scheduler.drain():
            assert isinstance(pending, Job)
            pending.cancel()
            pending.end(Finished("cancelled", 0, ""))
        if self._thread is not None:
            self._thread.join(timeout=30)

    @property
    def queue_depth(self) -> int:
        return self.scheduler.depth

    # -- submitting ------------------------------------------------------------------------
    def submit(
        self,
        tokens: Sequence[int],
        budget: Budget,
        *,
        sink: Sink,
        stop_strings: Sequence[str] = (),
        until: Until | None = None,
        admission: Admission | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = "local",
    ) -> Job:
        """Queue a generation. With ``until``, text is released a whole line at a time and
        ``until`` decides after each line whether the answer is complete. With an
        ``admission`` the job runs in its request's place, at its priority and for its user;
        without one it takes a place of its own or is refused (``Busy``). The model's own stop
        strings (its prompt format's end pieces) always end the answer."""
        if self._closed:
            raise ShuttingDown("the engine is shutting down", retry_after=5)
        stops = dict.fromkeys(s for s in (*stop_strings, *self._format_stops) if s)
        job = Job(
            list(tokens),
            budget,
            tuple(stops),
            sink,
            until=until,
            priority=admission.priority if admission else priority,
            user=admission.user if admission else user,
            admission=admission,
        )
        self.scheduler.submit(job)
        return job

    def score(
        self,
        tokens: Sequence[int],
        score_from: int,
        *,
        sink: Sink,
        deadline: float,
        admission: Admission | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = "local",
    ) -> Job:
        """Queue a scoring job: the natural-log probability of each of ``tokens[score_from:]``
        given every token before it. It ends with a ``Finished`` of reason "scored" carrying
        them (after a ``PromptEvaluated`` with the tokens it reused), or "cancelled" or
        "deadline" (``deadline`` is a ``time.perf_counter()`` value) without them."""
        if not 1 <= score_from < len(tokens):
            raise ValueError(f"score_from {score_from} is not within 1..{len(tokens) - 1}")
        if self._closed:
            raise ShuttingDown("the engine is shutting down", retry_after=5)
        job = Job(
            list(tokens),
            Budget(max_tokens=0, deadline=deadline),
            (),
            sink,
            priority=admission.priority if admission else priority,
            user=admission.user if admission else user,
            admission=admission,
            scoring=Scoring(score_from),
        )
        self.scheduler.submit(job)
        return job

    def withdraw(self, job: Job) -> None:
        """Cancel a job; one still waiting leaves the queue at once (its place goes to others)."""
        job.cancel()
        if self.scheduler.remove(job):
            self.stats.cancelled += 1
            job.end(Finished("cancelled", 0, ""))

    # -- the worker ------------------------------------------------------------------------
    def _work(self) -> None:
        try:
            self._warm_up()
        finally:
            self.ready.set()
        while True:
            job = self.scheduler.next_job()
            if job is None:
                return
            assert isinstance(job, Job)
            self.busy = True
            started = time.perf_counter()
            try:
                self._run(job)
            except _Yielded:
                self.stats.yielded += 1
                job.yields += 1
                self.scheduler.finished(job, time.perf_counter() - started)
                self.scheduler.submit(job, front=True)
                continue
            except Exception as exc:  # the worker must survive anything one job does
                log.exception("generation failed")
                self._reset_context()
                self.stats.errors += 1
                job.end(Finished("error", 0, "", error=str(exc)))
            finally:
                self.busy = False
            self.scheduler.finished(job, time.perf_counter() - started)

    def _warm_up(self) -> None:
        """A short prompt and a few decodes: the first real request does not pay for lazy
        initialisation, and the speed meter starts from this machine's figures."""
        llm = self.model.llm
        start = [self.model.bos_token] if self.model.bos_token is not None else []
        tokens = start + self.model.tokenize_text(_WARM_UP_TEXT)
        llm.eval(tokens[:8])  # lazy initialisation, not timed
        began = time.perf_counter()
        llm.eval(tokens[8:])
        self.speed.record_prompt(len(tokens) - 8, time.perf_counter() - began)
        sampler = _internals.LlamaSampler()
        sampler.add_greedy()
        began = time.perf_counter()
        for _ in range(_WARM_UP_DECODES):
            token = sampler.sample(llm._ctx, -1)
            llm.eval([token])
        self.speed.record_decode(_WARM_UP_DECODES, time.perf_counter() - began)
        self._reset_context()

    def _reset_context(self) -> None:
        llm = self.model.llm
        llm.n_tokens = 0
        llm._ctx.kv_cache_clear()

    def _make_sampler(self, budget: Budget) -> _internals.LlamaSampler:
        sampler = _internals.LlamaSampler()
        if self._suppressed:
            sampler.add_logit_bias(self.model.n_vocab, self._suppressed)
        if budget.temperature <= 0.0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(budget.top_k)
            sampler.add_top_p(budget.top_p, 1)
            sampler.add_temp(budget.temperature)
            sampler.add_dist(budget.seed)
        return sampler

    def _interrupted(self, job: Job) -> str | None:
        if job.cancelled:
            return "cancelled"
        if time.perf_counter() >= job.budget.deadline:
            return "deadline"
        return None

    def _finish(
        self,
        job: Job,
        reason: str,
        tokens: int,
        text: str,
        logprobs: tuple[float, ...] | None = None,
    ) -> None:
        stats = self.stats
        stats.jobs += 1
        stats.tokens_generated += tokens
        stats.last_job_tokens = tokens
        stats.last_job_reason = reason
        if reason == "cancelled":
            stats.cancelled += 1
        elif reason == "deadline":
            stats.deadline += 1
        job.end(Finished(reason, tokens, text, logprobs=logprobs))

    def _run(self, job: Job) -> None:
        if not self._begin(job):
            return
        if job.scoring is not None:
            self._score(job, job.scoring)
        else:
            self._complete(job)

    def _begin(self, job: Job) -> bool:
        """Start (or resume) a job; False when it already ended (cancelled, or too late)."""
        if job.started_at is None:
            job.started_at = time.perf_counter()
        job._yield.clear()
        if self.scheduler.waiting_above(job.priority):
            job.request_yield()  # something more urgent arrived while this one was picked
        reason = self._interrupted(job)
        if reason:
            done = job.progress
            self._finish(job, reason, len(done.ids) if done else 0, done.text if done else "")
            return False
        return True

    def _complete(self, job: Job) -> None:
        """Evaluate the prompt (past its reused prefix) in chunks, then generate."""
        llm = self.model.llm
        n_ctx = llm.n_ctx()
        prompt = job.tokens + (job.progress.ids if job.progress else [])
        if len(prompt) >= n_ctx:
            raise ValueError(f"the prompt has {len(prompt)} tokens; the context holds {n_ctx}")
        produced = len(job.progress.ids) if job.progress else 0
        max_tokens = min(job.budget.max_tokens - produced, n_ctx - len(prompt))

        reused = self._reuse_prefix(prompt)
        rest = prompt[reused:]
        began = time.perf_counter()
        for start in range(0, len(rest), self.chunk_tokens):
            reason = self._interrupted(job)
            if reason:
                done = job.progress
                self._finish(job, reason, produced, done.text if done else "")
                return
            if job._yield.is_set():
                raise _Yielded  # the evaluated part of the prompt stays, saved or live
            llm.eval(rest[start : start + self.chunk_tokens])
        self.stats.prompt_tokens_evaluated += len(rest)
        self.stats.prompt_tokens_reused += reused
        self.speed.record_prompt(len(rest), time.perf_counter() - began)
        if job.prompt_done_at is None:
            job.prompt_done_at = time.perf_counter()
            job.sink(PromptEvaluated(len(job.tokens), reused))
        self._generate(job, max_tokens)

    def _score(self, job: Job, scoring: Scoring) -> None:
        """Score ``job.tokens[score_from:]``. The live prefix is kept up to the token before
        the first one still to score (its row of logits predicts that one), less a few tokens
        to start at a multiple of ``ROW_GROUP``; the rest but the last token (which predicts
        nothing scored) is evaluated in chunks of at most one batch, with logits for every
        position."""
        llm = self.model.llm
        tokens = job.tokens
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"{len(tokens)} tokens to score; the context holds {llm.n_ctx()}")
        reused = self._reuse_prefix(tokens[: scoring.next_index], align=ROW_GROUP)
        if scoring.reused is None:
            scoring.reused = reused
        step = chunk_size(self.chunk_tokens, llm.n_batch)
        end = len(tokens) - 1
        for start in range(reused, end, step):
            if self._halted(job):
                return
            stop = min(start + step, end)
            scoring.logprobs += score_chunk(llm, tokens, start, stop, scoring.next_index)
        self.stats.prompt_tokens_evaluated += end - reused
        self.stats.prompt_tokens_reused += reused
        self.stats.tokens_scored += len(scoring.logprobs)
        job.prompt_done_at = time.perf_counter()
        job.sink(PromptEvaluated(len(tokens), scoring.reused))
        self._finish(job, "scored", 0, "", tuple(scoring.logprobs))

    def _halted(self, job: Job) -> bool:
        """Between chunks of a scoring job: end it when cancelled or too late (True), put it
        back when a more urgent job waits (what it scored so far stays with it)."""
        reason = self._interrupted(job)
        if reason:
            self._finish(job, reason, 0, "")
            return True
        if job._yield.is_set():
            raise _Yielded
        return False

    def _reuse_prefix(self, tokens: list[int], align: int = 1) -> int:
        """Keep (or restore) the longest saved prefix of ``tokens`` (cut to a multiple of
        ``align``); return how many tokens it saves."""
        llm = self.model.llm
        wanted = np.asarray(tokens, dtype=np.intc)
        live = common_prefix(llm._input_ids, wanted)
        if self.states.enabled:
            state_id, saved = self.states.best(wanted)
            if state_id is not None and saved >= live + MIN_GAIN:
                if llm.n_tokens - live >= MIN_TOKENS:
                    self.states.save(llm)  # the live context is worth coming back to
                restored = self.states.restore(llm, state_id)
                live = common_prefix(llm._input_ids, wanted) if restored else 0
            elif llm.n_tokens - live >= MIN_TOKENS and live < llm.n_tokens // 2:
                # This prompt is about to overwrite a long, different context: keep a copy.
                self.states.save(llm)
        # At least one token must be evaluated to have fresh logits to sample from.
        keep = min(live, len(tokens) - 1)
        keep -= keep % align
        if keep < llm.n_tokens and not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0
            llm._ctx.kv_cache_clear()
        llm.n_tokens = keep
        return keep

    def _generate(self, job: Job, max_tokens: int) -> None:
        llm = self.model.llm
        sampler = self._make_sampler(job.budget)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        progress = job.progress or Progress()
        decoder.setstate(progress.decoder_state)
        stops = job.stop_strings
        longest_stop = max((len(s) for s in stops), default=0)
        ids = progress.ids
        text = progress.text  # everything emitted so far
        pending = progress.pending  # text held back: it may begin a stop string or a line
        budget_left = max_tokens
        reason = "length"
        began, produced = time.perf_counter(), len(ids)
        while budget_left > 0:
            interrupted = self._interrupted(job)
            if interrupted:
                reason = interrupted
                break
            if job._yield.is_set():
                job.progress = Progress(ids, text, pending, decoder.getstate())
                self.speed.record_decode(len(ids) - produced, time.perf_counter() - began)
                raise _Yielded
            token = sampler.sample(llm._ctx, -1)
            if token in self._stop_tokens:
                reason = "stop"
                break
            ids.append(token)
            budget_left -= 1
            pending += decoder.decode(self.model.piece(token))
            if stops:
                hit = _find_stop(pending, stops)
                if hit is not None:
                    pending = pending[:hit]
                    reason = "stop"
                    break
                held = _stop_prefix_length(pending, stops, longest_stop)
                emit, pending = pending[: len(pending) - held], pending[len(pending) - held :]
            else:
                emit, pending = pending, ""
            ended = False
            if job.until is not None and emit:
                emit, pending, ended = _gate_lines(job.until, text, emit, pending)
            if emit:
                if job.first_token_at is None:
                    job.first_token_at = time.perf_counter()
                text += emit
                job.sink(TokenText(emit))
            if ended:
                reason = "stop"
                break
            if budget_left <= 0:
                break
            if job.cancelled:
                reason = "cancelled"
                break
            llm.eval([token])
        job.progress = None
        self.speed.record_decode(len(ids) - produced, time.perf_counter() - began)
        pending += decoder.decode(b"", final=True)
        if job.until is not None and pending and reason in ("stop", "length"):
            cut = job.until(text + pending + "\n")
            if cut is not None:
                pending = (text + pending)[len(text) : max(cut, len(text))]
        if pending and reason in ("stop", "length"):
            if job.first_token_at is None:
                job.first_token_at = time.perf_counter()
            text += pending
            job.sink(TokenText(pending))
        self._finish(job, reason, len(ids), text)


def _gate_lines(until: Until, text: str, emit: str, pending: str) -> tuple[str, str, bool]:
    """Release only complete lines of ``emit`` and ask ``until`` whether the answer ended."""
    newline = emit.rfind("\n")
    pending = emit[newline + 1 :] + pending
    emit = emit[: newline + 1]
    if not emit:
        return "", pending, False
    cut = until(text + emit)
    if cut is None:
        return emit, pending, False
    return (text + emit)[len(text) : max(cut, len(text))], "", True


def _stop_prefix_length(text: str, stops: tuple[str, ...], longest: int) -> int:
    """Length of the longest end of ``text`` that could still grow into a stop string."""
    for size in range(min(len(text), longest - 1), 0, -1):
        tail = text[-size:]
        if any(stop.startswith(tail) for stop in stops):
            return size
    return 0


def _find_stop(text: str, stops: tuple[str, ...]) -> int | None:
    found = [i for s in stops if (i := text.find(s)) >= 0]
    return min(found) if found else None
