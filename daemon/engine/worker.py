"""The engine's worker: one thread owns the llama.cpp context and decodes several jobs together."""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import llama_cpp
import numpy as np
from llama_cpp import _internals

from daemon.engine.answer_text import AnswerText
from daemon.engine.batch import TokenBatch
from daemon.engine.fork import Fork, first_tokens, same_path
from daemon.engine.front import QueueFront
from daemon.engine.jobs import (
    Budget,
    Continuation,
    Finished,
    Job,
    Progress,
    PromptEvaluated,
    Scoring,
    Sink,
    Until,
)
from daemon.engine.kv_states import SequenceStates, common_prefix
from daemon.engine.report import (
    BackendFigures,
    EngineKind,
    EngineStats,
    LocalFigures,
    SavedStateFigures,
)
from daemon.engine.sampling import Sampling
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.scoring import ROW_GROUP, chunk_logprobs
from daemon.engine.slots import Slot, Slots
from daemon.engine.speed import SpeedMeter
from daemon.engine.step_plan import (
    GapChunk,
    NextToken,
    PromptChunk,
    Ready,
    ScoreChunk,
    StepItem,
    chunk_for,
    most_urgent,
    plan_step,
)
from daemon.engine.warm_up import WarmUp
from daemon.errors import ShuttingDown
from daemon.settings import FORK_COST_LIMIT
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# After a round fails in a way no job explains, a pause: a fault that repeats does not spin.
_AFTER_FAILURE_S = 0.05
# Tokens a candidate may still write once the job's own text has ended; one that has not ended
# by then is dropped (on a CPU, each sequence in a batch costs about as much as decoding it
# alone, so a long candidate would hold the answer back).
BRANCH_GRACE_TOKENS = 6


@dataclass(eq=False)  # a running job is itself: compared and hashed by identity
class _Running:
    """A job in its slot: the prompt still to evaluate, then what it generated so far."""

    job: Job
    slot: Slot
    prompt: list[int]
    gaps: list[tuple[int, int]]  # ranges of the prompt still to evaluate, in order
    reused: int
    max_tokens: int
    produced: int  # tokens generated before this run (a job that yielded and resumed)
    began: float
    sampler: _internals.LlamaSampler | None = None
    answer: AnswerText | None = None  # set once the prompt is evaluated
    budget_left: int = 0
    next_token: int | None = None  # sampled, to be evaluated in the next step
    decode_began: float = 0.0
    paused: bool = False
    # Candidates: the job's fork, this sequence's place in it (0: the job's own, else a
    # branch), and a branch's own sequence, its judge and its first token's log-probability.
    fork: Fork | None = None
    member: int = 0
    own: _Running | None = None
    until: Until | None = None
    first_logprob: float = 0.0
    # A branch that forked after the job's own had written some tokens: the own answer's
    # state then, which the branch's answer goes on from.
    seed: Progress | None = None
    late: bool = False  # a candidate whose job's own text has ended
    # With ``Budget.logprobs``: each generated token's log-probability and where its text ends.
    logprobs: list[float] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    sampled_logprob: float = 0.0  # of the token sampled last, until it is taken

    @property
    def branch(self) -> bool:
        return self.member > 0

    @property
    def position(self) -> int:
        """The position of ``next_token`` in the sequence."""
        made = len(self.answer.ids) if self.answer else self.produced
        return len(self.prompt) + made - self.produced - 1


# Submit a token prompt with a budget, the queue place its request was admitted to (or a priority
# and user, to take a place of its own) and a sink for events; get back a Job that can be
# cancelled. Jobs wait in the Scheduler; up to ``parallel`` run at once, each in a slot that keeps
# its KV for the document's next request. Every step builds one batch from the running jobs (the
# next token of each generating job, and at most chunk_tokens of prompts still being read, shared
# in turn), in increasing sequence order with the step's slots moved into consecutive KV streams
# first (Slots.arrange), decodes it once and samples each job from its own row of logits. Jobs join
# or leave between steps; cancellation and deadlines are checked before every step. Only the most
# urgent priority among the running jobs takes part in a step; while completions come, less urgent
# jobs' steps are short, since an arriving completion waits for the step under way. When every
# place is taken and a more urgent job waits, the least urgent running job goes back to the head of
# its line and later resumes where it stopped.
#
# A job that asks for candidates forks at its first token (daemon.engine.fork), only into places no
# waiting request needs. A scoring job keeps its slot's prefix up to the token before the first
# scored one and evaluates the rest with logits for every position (daemon.engine.scoring). The
# model's own stop strings (its prompt format's end pieces) end every answer. Events go to the sink
# from the worker thread.
@dataclass(frozen=True)
class _Placed:
    """A work item in the batch, and the row its logits are read from (-1: none)."""

    item: StepItem[_Running]
    index: int


class Engine(QueueFront):
    kind: ClassVar[EngineKind] = "local"

    def __init__(
        self,
        model: LoadedModel,
        scheduler: Scheduler | None = None,
        states: SequenceStates | None = None,
        chunk_tokens: int = 128,
        parallel: int | None = None,
        reuse_after_edit: bool = False,
        fork_cost_limit: float = FORK_COST_LIMIT,
    ) -> None:
        self.model = model
        # Candidates are decoded only where a step of three sequences costs at most this many
        # steps of one (measured while warming up); 0 decodes them wherever there is room.
        self.fork_cost_limit = fork_cost_limit
        self.fork_cost: float | None = None
        self.scheduler = scheduler if scheduler is not None else Scheduler()
        # Not `states or ...`: an empty SequenceStates is falsy (it has a length).
        self.states = states if states is not None else SequenceStates(0)
        self.chunk_tokens = chunk_tokens
        # Keep chunks below an edit at new positions (approximate: see daemon.engine.reuse).
        self.reuse_after_edit = reuse_after_edit
        self._ctx = model.llm._ctx.ctx
        memory = llama_cpp.llama_get_memory(self._ctx)
        sequences = int(llama_cpp.llama_n_seq_max(self._ctx))
        # The last sequence is no slot's: with a stream per sequence the spare stream that
        # slots are exchanged through (``Slots.arrange``); for reuse after an edit, where the
        # edited lines are evaluated aside (in a stream, only when the model's cache states
        # can be joined: checked while warming up).
        extra = sequences >= 2
        count = sequences - 1 if extra else sequences
        self.slots = Slots(
            self._ctx,
            count,
            self.states,
            scratch=extra and model.unified,
            can_shift=bool(llama_cpp.llama_memory_can_shift(memory)),
            max_gap=chunk_tokens,
            shared_cells=model.unified,
            spare=extra,
        )
        self.parallel = max(1, min(parallel or count, count))
        self.n_ctx = model.facts.n_ctx
        self._batch = TokenBatch(max(int(llama_cpp.llama_n_batch(self._ctx)), 1))
        self._running: list[_Running] = []
        self._thread: threading.Thread | None = None
        self._closed = False
        self._turn = 0
        self._interactive_at = float("-inf")  # when a step last ran a completion
        self.stats = EngineStats()
        self.speed = SpeedMeter()
        self.ready = threading.Event()
        facts = model.facts
        self._stop_tokens = frozenset(facts.stop_tokens)
        self.sampling = Sampling(self._ctx, model, facts.suppressed_tokens)
        self._format_stops = tuple(facts.stop_strings)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="assist-engine", daemon=True)
        self._thread.start()
        # The vocabulary's index for token healing, read aside so no answer waits for it.
        threading.Thread(
            target=self.model.agreeing, args=(b"",), name="assist-pieces", daemon=True
        ).start()
        self.ready.wait()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_waiting()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.slots.clear()
        self._batch.close()

    @property
    def busy(self) -> bool:
        return bool(self._running)

    @property
    def running(self) -> int:
        """Jobs in a slot now (generating, evaluating their prompt, or paused)."""
        return len(self._running)

    def summary(self) -> str:
        """The engine in one line, for the daemon's start-up lines."""
        line = (
            f"{self.parallel} jobs decoded together, {len(self.slots)} documents kept in the "
            f"KV cache"
        )
        if self.reuse_after_edit:
            if self.slots.scratch is not None:
                line += ", the chunks below an edit kept"
            else:
                line += ", below an edit only chunks that need no new lines before them kept"
        return line

    def _figures(self) -> LocalFigures:
        speed = self.speed.current()
        stats = self.stats
        return LocalFigures(
            busy=int(self.busy),
            running=self.running,
            parallel=self.parallel,
            kv_slots=len(self.slots),
            steps=stats.steps,
            batched_steps=stats.batched_steps,
            prompt_tokens_moved=stats.prompt_tokens_moved,
            kv_prefixes_copied=self.slots.stats.copied,
            kv_slots_evicted=self.slots.stats.evicted,
            jobs=stats.jobs,
            cancelled=stats.cancelled,
            deadline=stats.deadline,
            errors=stats.errors,
            tokens_generated=stats.tokens_generated,
            prompt_tokens_evaluated=stats.prompt_tokens_evaluated,
            prompt_tokens_reused=stats.prompt_tokens_reused,
            last_job_tokens=stats.last_job_tokens,
            last_job_reason=stats.last_job_reason,
            prompt_tokens_per_s=round(speed.prompt_tps, 1),
            tokens_per_s=round(speed.decode_tps, 1),
            fork_cost=None if self.fork_cost is None else round(self.fork_cost, 2),
            candidates_decoded=self.forks,
            branches=stats.branches,
            duplicate_branches=stats.duplicate_branches,
            late_branches=stats.late_branches,
        )

    def _saved_states(self) -> SavedStateFigures:
        states = self.states
        return SavedStateFigures(
            len(states), states.bytes, states.stats.restored, states.stats.tokens_restored
        )

    def backends(self) -> list[BackendFigures]:
        return []  # it decodes here

    def cached_prefix(self, tokens: Sequence[int]) -> int:
        """How many leading tokens of ``tokens`` a sequence or a saved state already holds:
        what a job with this prompt would not evaluate again. Read from other threads while
        the worker runs, so an estimate (a slot may change the moment after)."""
        held = [list(slot.tokens) for slot in self.slots.slots]
        best = max((common_prefix(cached, tokens) for cached in held), default=0)
        return max(best, self.states.best(tokens)[1] if self.states.enabled else 0)

    # -- submitting ------------------------------------------------------------------------
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

    def run_here(self, job: Job) -> None:
        """Run one job to its end on the calling thread (the engine must not be started):
        the benchmark times the generation loop so, on the same thread as a direct call."""
        if self._start(job):
            while any(r.job is job for r in self._running):
                self._step()

    # -- the worker ------------------------------------------------------------------------
    def _work(self) -> None:
        try:
            warm_up = WarmUp(self._ctx, self._batch, self.model, self.slots, self.speed)
            self.fork_cost = warm_up.run(self.reuse_after_edit and not self.model.unified)
        finally:
            self.ready.set()
        while not self._closed:
            try:
                if not self._cycle():
                    break
            except Exception as exc:  # the worker must survive anything one round does
                log.exception("the engine's round failed")
                self._fail(list(self._running), str(exc))
                self._empty_free_slots()
                time.sleep(_AFTER_FAILURE_S)
        for running in list(self._running):
            running.job.cancel()
            self._end(running, "cancelled")

    def _cycle(self) -> bool:
        """One round: wait for work when idle, admit jobs, decode one step. False when the
        scheduler closed."""
        if not self._running:
            job = self.scheduler.next_job()
            if job is None:
                return False
            assert isinstance(job, Job)
            self._start_guarded(job)
        self._admit()
        if self._running:
            try:
                self._step()
            except Exception as exc:  # one step's failure ends the jobs in it, no others
                log.exception("a decode step failed")
                self._fail(list(self._running), str(exc))
        return True

    def _admit(self) -> None:
        """Start waiting jobs while there is room; make room for a more urgent one."""
        while len(self._running) < self.parallel:
            job = self.scheduler.next_job(timeout=0)
            if job is None:
                return
            assert isinstance(job, Job)
            self._start_guarded(job)
        least = max(self._running, key=lambda r: (r.job.priority, r.job.submitted_at))
        if least.job.preemptible and self.scheduler.waiting_above(least.job.priority):
            self._give_way(least)
            self._admit()

    @property
    def forks(self) -> bool:
        """Whether candidates are decoded together on this machine."""
        if self.fork_cost_limit <= 0:
            return True
        return self.fork_cost is not None and self.fork_cost <= self.fork_cost_limit

    # -- starting and ending jobs ----------------------------------------------------------
    def _start(self, job: Job) -> bool:
        """Give a job a slot and plan its prompt; False when it ended at once."""
        now = time.perf_counter()
        if job.started_at is None:
            job.started_at = now
        job._yield.clear()
        reason = job.interruption()
        if reason:
            done = job.progress
            self._finish(job, reason, len(done.ids) if done else 0, done.text if done else "")
            self.scheduler.finished(job, 0.0)
            return False
        scoring = job.scoring
        progress = job.progress
        prompt = job.tokens + (progress.ids if progress else [])
        limit = len(prompt) if scoring else len(prompt) + 1
        if limit > self.n_ctx:
            self._refuse(
                job, f"the prompt has {len(prompt)} tokens; the context holds {self.n_ctx}"
            )
            return False
        wanted = prompt[: scoring.next_index] if scoring else prompt
        claim = self.slots.claim(wanted, move=scoring is None and self.reuse_after_edit)
        if claim is None:  # every slot is busy: wait for one
            self.scheduler.finished(job, 0.0)
            self.scheduler.submit(job, front=True)
            return False
        slot, plan = claim.slot, claim.plan
        if scoring is not None:
            keep = plan.prefix - plan.prefix % ROW_GROUP
            self.slots.remove(slot.seq, keep)
            slot.tokens = slot.tokens[:keep]
            gaps = [(keep, len(prompt) - 1)]
            reused = keep
        else:
            gaps = plan.gaps()
            reused = plan.reused
            self.stats.prompt_tokens_moved += plan.reused - plan.prefix
        produced = len(progress.ids) if progress else 0
        running = _Running(
            job=job,
            slot=slot,
            prompt=prompt,
            gaps=gaps,
            reused=reused,
            max_tokens=min(job.budget.max_tokens - produced, self.n_ctx - len(prompt)),
            produced=produced,
            began=now,
        )
        if scoring is not None and scoring.reused is None:
            scoring.reused = reused
        self._running.append(running)
        return True

    def _start_guarded(self, job: Job) -> None:
        """``_start``, surviving anything it raises: the job ends with an error, and the free
        slots are emptied."""
        try:
            self._start(job)
        except Exception as exc:  # the worker must survive anything one job does
            log.exception("starting a job failed")
            started = [running for running in self._running if running.job is job]
            if started:
                self._fail(started, str(exc))
            else:
                job.progress = None
                self._refuse(job, str(exc))
            self._empty_free_slots()

    def _refuse(self, job: Job, error: str) -> None:
        """End a job that never got a place with ``error``."""
        self.stats.errors += 1
        job.end(Finished("error", 0, "", error=error))
        self.scheduler.finished(job, 0.0)

    def _empty_free_slots(self) -> None:
        """Empty every slot no running job holds, and free it: after a failure one of them
        may hold KV its tokens no longer describe, or be left claimed."""
        held = {id(running.slot) for running in self._running}
        for slot in self.slots.slots:
            if id(slot) not in held:
                self.slots.reset(slot)
                self.slots.release(slot)

    def _give_way(self, running: _Running) -> None:
        """A less urgent job leaves its place to a waiting one, and goes back to its line."""
        job = running.job
        if running.answer is not None:
            job.progress = running.answer.progress()
            self._record_decode(running)
        self._leave(running)
        job.yields += 1
        self.stats.yielded += 1
        self.scheduler.submit(job, front=True)

    def _end(self, running: _Running, reason: str, logprobs: tuple[float, ...] | None = None):
        """End a running job (or one of its candidates): flush its held-back text, free its
        slot, and send ``Finished`` (for candidates: once the last of them has ended)."""
        job = running.job
        answer = running.answer
        if answer is not None:
            if not running.branch:
                self._record_decode(running)
            tail = answer.finish(complete=reason in ("stop", "length"))
            if not running.branch:
                job.show(tail)
            text, tokens, first = answer.text, len(answer.ids), answer.first_choice
        else:
            done = job.progress
            tokens = len(done.ids) if done else 0
            text = done.text if done else ""
            first = done.first_choice if done else None
        ended = Continuation(
            text, reason, tokens, tuple(running.logprobs), tuple(running.ends), first
        )
        job.progress = None
        self._leave(running)
        fork = running.fork
        if fork is None:
            own = ended if job.budget.scored else None
            self._finish(job, reason, tokens, text, logprobs, own=own)
            return
        if running.branch:
            self.stats.tokens_generated += tokens
            self.stats.duplicate_branches += reason == "duplicate"
            self.stats.late_branches += reason == "late"
        else:
            # The job's own text is done: its other candidates get a few more tokens to end
            # theirs, not the whole budget, so they never keep the answer waiting for long.
            for other in self._running:
                if other.fork is fork:
                    other.budget_left = min(other.budget_left, BRANCH_GRACE_TOKENS)
                    other.late = True
        dropped = reason in ("duplicate", "late")
        if fork.close(running.member, ended, duplicate=dropped):
            own = fork.own
            self._finish(
                job, own.reason, own.tokens, own.text, own=own, alternatives=fork.alternatives()
            )

    def _fail(self, failed: list[_Running], error: str) -> None:
        jobs = {id(running.job) for running in failed}
        # The candidates of a failed job fail with it.
        failed += [r for r in self._running if id(r.job) in jobs and r not in failed]
        told: set[int] = set()
        for running in failed:
            self.slots.reset(running.slot)
            running.job.progress = None
            self._leave(running)
            if id(running.job) not in told:
                told.add(id(running.job))
                self.stats.errors += 1
                running.job.end(Finished("error", 0, "", error=error))

    def _leave(self, running: _Running) -> None:
        """A job leaves its place: its slot is free again (keeping its KV) and the scheduler
        learns how long it ran (a candidate's sequence only frees its slot)."""
        self._running.remove(running)
        self.slots.release(running.slot)
        if not running.branch:
            self.scheduler.finished(running.job, time.perf_counter() - running.began)

    def _finish(
        self,
        job: Job,
        reason: str,
        tokens: int,
        text: str,
        logprobs: tuple[float, ...] | None = None,
        own: Continuation | None = None,
        alternatives: tuple[Continuation, ...] = (),
    ) -> None:
        self.stats.count(reason, tokens)
        job.end(
            Finished(reason, tokens, text, logprobs=logprobs, own=own, alternatives=alternatives)
        )

    def _record_decode(self, running: _Running) -> None:
        made = len(running.answer.ids) - running.produced if running.answer else 0
        if running.decode_began:
            self.speed.record_decode(made, time.perf_counter() - running.decode_began)

    # -- one step --------------------------------------------------------------------------
    def _step(self) -> None:
        for running in list(self._running):
            reason = running.job.interruption()
            if reason:
                self._end(running, reason)
        if not self._running:
            return
        tier, runs = most_urgent([r.job.priority for r in self._running])
        live = []
        for running, run in zip(self._running, runs, strict=True):
            if run:
                running.paused = False
                live.append(running)
            elif not running.paused:
                running.paused = True  # a more urgent job runs: this one waits in its slot
                running.job.yields += 1
                self.stats.yielded += 1
        self.slots.arrange([r.slot for r in live])
        now = time.perf_counter()
        if tier == Priority.INTERACTIVE:
            self._interactive_at = now
        work = self._fill(live, chunk_for(tier, self.chunk_tokens, now - self._interactive_at))
        if not work:  # nothing fits this step (a gap waits for the scratch sequence)
            time.sleep(0.001)
            return
        self._decode(work)

    def _fill(self, live: list[_Running], chunk: int) -> list[_Placed]:
        """Plan this step (``plan_step``) and put its work into the batch."""
        self._batch.clear()
        ready = [
            Ready(
                r,
                r.slot.seq,
                r.job.scoring is not None,
                r.next_token is not None,
                r.gaps[0] if r.gaps else None,
                len(r.prompt),
            )
            for r in live
        ]
        plan = plan_step(
            ready, chunk=chunk, room=self._batch.room, turn=self._turn, scratch=self.slots.scratch
        )
        self._turn = plan.turn
        return [self._place(item) for item in plan.items]

    def _place(self, item: StepItem[_Running]) -> _Placed:
        """One work item put into the batch, with the index of the row it is read from."""
        batch = self._batch
        running = item.job
        match item:
            case ScoreChunk(start=start, stop=stop):
                first, _ = batch.add(running.prompt[start:stop], start, item.seq, "all")
                return _Placed(item, first)
            case NextToken():
                assert running.next_token is not None
                index, _ = batch.add([running.next_token], running.position, item.seq)
                return _Placed(item, index)
            case GapChunk(start=start, stop=stop):
                self.slots.gap_sequence(running.slot, start)
                batch.add(running.prompt[start:stop], start, item.seq, "none")
                return _Placed(item, -1)
            case PromptChunk(start=start, stop=stop, last=last):
                tokens = running.prompt[start:stop]
                _, after = batch.add(tokens, start, item.seq, "last" if last else "none")
                return _Placed(item, after - 1)

    def _decode(self, work: list[_Placed]) -> None:
        """Decode the batch (emptying free slots while the KV cache is full), then act on
        each work item's rows."""
        batch = self._batch
        while (code := llama_cpp.llama_decode(self._ctx, batch.raw)) == 1:
            if not self.slots.evict():  # the KV cache is full: empty a free slot and retry
                break
        if code != 0:
            if self.slots.scratch is not None:
                self.slots.remove(self.slots.scratch, -1, -1)
            failed = list(dict.fromkeys(placed.item.job for placed in work))
            why = "the model's KV cache is full" if code == 1 else f"llama_decode returned {code}"
            log.warning("a decode step failed: %s", why)
            self._fail(failed, why)
            return
        self.stats.steps += 1
        if len({id(placed.item.job) for placed in work}) > 1:
            self.stats.batched_steps += 1
        for placed in work:
            item, running = placed.item, placed.item.job
            if running not in self._running:
                continue
            match item:
                case ScoreChunk(start=start, stop=stop):
                    self._scored(running, placed.index, start, stop)
                case GapChunk(start=start, stop=stop):
                    self._gap_read(running, start, stop)
                case PromptChunk(start=start, stop=stop):
                    self._prompt_read(running, placed.index, start, stop)
                case NextToken():
                    assert running.next_token is not None
                    running.slot.tokens.append(running.next_token)
                    running.next_token = None
                    token = self._sample(running, placed.index)
                    if running.fork is None and not running.branch:
                        self._fork(running, placed.index, token)
                    self._take(running, token)

    def _gap_read(self, running: _Running, start: int, end: int) -> None:
        """A gap read in the scratch sequence: joined to the job's own KV."""
        self.stats.prompt_tokens_evaluated += end - start
        if self.slots.merge_gap(running.slot, start, end):
            running.gaps.pop(0)
            running.slot.tokens = running.prompt[: running.gaps[0][0]]
        else:  # the slot lost its KV: read the whole prompt
            log.warning("joining an edit's KV failed; reading the prompt again")
            running.gaps = [(0, len(running.prompt))]
            running.reused = 0

    def _prompt_read(self, running: _Running, index: int, start: int, stop: int) -> None:
        """A prompt chunk read; at the prompt's end, the first token sampled from row
        ``index``."""
        running.slot.tokens = running.prompt[:stop]
        self.stats.prompt_tokens_evaluated += stop - start
        if stop < running.gaps[0][1]:
            running.gaps[0] = (stop, running.gaps[0][1])
        else:
            running.gaps.pop(0)
        if running.gaps:
            return
        self._prompt_done(running)
        if running.branch:
            self._first_of_branch(running, index)
        else:
            token = self._sample(running, index)
            self._fork(running, index, token)
            self._take(running, token)

    def _scored(self, running: _Running, first: int, start: int, stop: int) -> None:
        scoring = running.job.scoring
        assert scoring is not None
        tokens = running.prompt
        pointer = llama_cpp.llama_get_logits_ith(self._ctx, first)
        logits = np.ctypeslib.as_array(pointer, shape=(stop - start, self.model.n_vocab))
        scoring.logprobs += chunk_logprobs(logits, tokens, start, stop, scoring.next_index)
        running.slot.tokens = tokens[:stop]
        self.stats.prompt_tokens_evaluated += stop - start
        end = running.gaps[0][1]
        if stop < end:
            running.gaps[0] = (stop, end)
            return
        self.stats.prompt_tokens_reused += running.reused
        self.stats.tokens_scored += len(scoring.logprobs)
        running.job.prompt_done_at = time.perf_counter()
        reused = scoring.reused if scoring.reused is not None else running.reused
        running.job.sink(PromptEvaluated(len(tokens), reused))
        self._end(running, "scored", tuple(scoring.logprobs))

    def _prompt_done(self, running: _Running) -> None:
        job = running.job
        now = time.perf_counter()
        running.sampler = self.sampling.sampler(job.budget)
        if running.branch:  # its prompt is the job's, copied, and its first token
            running.answer = AnswerText(
                job.stop_strings, running.until, running.seed, job.budget.lead
            )
            running.budget_left = running.max_tokens
            return
        evaluated = len(running.prompt) - running.reused
        self.stats.prompt_tokens_reused += running.reused
        self.speed.record_prompt(evaluated, now - running.began)
        if job.prompt_done_at is None:
            job.prompt_done_at = now
            job.sink(PromptEvaluated(len(job.tokens), running.reused))
        running.answer = AnswerText(job.stop_strings, job.until, job.progress, job.budget.lead)
        running.budget_left = running.max_tokens
        running.decode_began = now
        if running.budget_left <= 0:
            self._end(running, "length")

    def _sample(self, running: _Running, index: int) -> int | None:
        if running not in self._running or running.sampler is None:
            return None
        answer = running.answer
        choosing = answer is not None and answer.first_choice is None
        budget = running.job.budget
        barred = budget.not_first if choosing and not running.branch else ()
        token, logprob = self.sampling.sample(running.sampler, index, budget, answer, barred)
        if logprob is not None:
            running.sampled_logprob = logprob
        return token

    def _take(self, running: _Running, token: int | None, evaluated: bool = False) -> bool:
        """Add a sampled token to a job's answer; end the job when the answer is complete.
        The token is decoded in the next step, unless it was ``evaluated`` already (a
        candidate's first token, the last of its prompt). True while the answer goes on."""
        if token is None:
            return False
        job = running.job
        if token in self._stop_tokens:
            self._end(running, "stop")
            return False
        running.budget_left -= 1
        answer = running.answer
        assert answer is not None
        emit, ended = answer.add(token, self.model.piece(token))
        if job.budget.scored:
            running.logprobs.append(running.sampled_logprob)
            running.ends.append(len(answer.text) + len(answer.pending))
        if not running.branch:
            job.show(emit)
        if ended:
            self._end(running, "stop")
        elif running.budget_left <= 0:
            self._end(running, "late" if running.late else "length")
        elif running.own is not None and self._joins_own(running):
            self._end(running, "duplicate")
        else:
            if not evaluated:
                running.next_token = token
            return True
        return False

    # -- candidates ------------------------------------------------------------------------
    def _fork(self, own: _Running, index: int, token: int | None) -> None:
        """Start the job's other candidates from the most likely tokens after ``token`` (the
        job's own) at the step that chooses what the answer writes (its first token, or after
        the blanks of its lead), each in a free slot that gets a copy of the KV so far; only
        where no request waits for a place, and never for a job that may have to yield."""
        job = own.job
        wanted = job.budget.candidates - 1
        if wanted <= 0 or token is None or own not in self._running or job.preemptible:
            return
        if not (self.forks or job.budget.fork_anyway):
            return
        if own.answer is None or not own.answer.choosing:
            return
        if own.produced or self.scheduler.depth:
            return
        room = min(wanted, self.parallel - len(self._running), len(self.slots.free))
        excluded = {*self._stop_tokens, *self.sampling.suppressed, *job.budget.banned}
        excluded.update(job.budget.not_first)
        row = self.sampling.healing_row(own.answer, job.budget.banned, index)
        if row is None:
            row = self.sampling.row(index)
        picks = first_tokens(row, token, room, excluded) if room > 0 else []
        fork = Fork()
        written = own.answer.ids
        for first, logprob in picks:
            prompt = [*own.prompt, *written, first]
            claim = self.slots.claim(prompt, move=False)
            if claim is None:
                break
            branch = _Running(
                job=job,
                slot=claim.slot,
                prompt=prompt,
                gaps=claim.plan.gaps(),
                reused=claim.plan.reused,
                max_tokens=own.budget_left,
                produced=len(written) + 1,  # its first token is the last of its prompt
                began=time.perf_counter(),
                fork=fork,
                member=fork.branch(),
                own=own,
                until=copy.copy(job.until),
                first_logprob=logprob,
                seed=own.answer.snapshot() if written else None,
                logprobs=list(own.logprobs),
                ends=list(own.ends),
            )
            self._running.append(branch)
            self.stats.branches += 1
        if fork.members > 1:
            own.fork = fork

    def _first_of_branch(self, branch: _Running, index: int) -> None:
        """A candidate's prompt is read (its last token is its first): take that token, then
        sample the next one from its logits."""
        branch.sampled_logprob = branch.first_logprob
        if self._take(branch, branch.prompt[-1], evaluated=True):
            self._take(branch, self._sample(branch, index))

    def _joins_own(self, branch: _Running) -> bool:
        """Whether a candidate's text has become the job's own, at a token boundary of both."""
        own, mine = branch.own, branch.answer
        if own is None or own.answer is None or mine is None:
            return False
        text = mine.text + mine.pending
        return same_path(own.answer.text + own.answer.pending, own.ends, text)
