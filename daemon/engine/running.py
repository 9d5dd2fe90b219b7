"""The jobs in their slots: a job's place from its start to its end, and its bookkeeping."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from llama_cpp import _internals

from daemon.engine.answer_text import AnswerText
from daemon.engine.fork import Fork
from daemon.engine.jobs import Continuation, Finished, Job, Progress, Until
from daemon.engine.report import EngineStats
from daemon.engine.scheduler import Scheduler
from daemon.engine.scoring import ROW_GROUP
from daemon.engine.slots import Slot, Slots
from daemon.engine.speed import SpeedMeter

log = logging.getLogger(__name__)

# Tokens a candidate may still write once the job's own text has ended; one that has not ended
# by then is dropped (on a CPU, each sequence in a batch costs about as much as decoding it
# alone, so a long candidate would hold the answer back).
BRANCH_GRACE_TOKENS = 6


@dataclass(eq=False)  # a running job is itself: compared and hashed by identity
class Running:
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
    own: Running | None = None
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


class Places:
    """The running jobs, each in its slot: started (with its prompt planned against what the
    slot holds), ended (its held-back text flushed, its slot freed, ``Finished`` sent), made to
    give way to a more urgent job, or failed."""

    def __init__(
        self,
        slots: Slots,
        scheduler: Scheduler,
        stats: EngineStats,
        speed: SpeedMeter,
        n_ctx: int,
        reuse_after_edit: bool,
    ) -> None:
        self.jobs: list[Running] = []
        self.slots = slots
        self.scheduler = scheduler
        self.stats = stats
        self.speed = speed
        self.n_ctx = n_ctx
        self.reuse_after_edit = reuse_after_edit

    def start(self, job: Job) -> bool:
        """Give a job a slot and plan its prompt; False when it ended at once."""
        now = time.perf_counter()
        if job.started_at is None:
            job.started_at = now
        reason = job.interruption()
        if reason:
            done = job.progress
            self.finish(job, reason, len(done.ids) if done else 0, done.text if done else "")
            self.scheduler.finished(job, 0.0)
            return False
        scoring = job.scoring
        progress = job.progress
        prompt = job.tokens + (progress.ids if progress else [])
        limit = len(prompt) if scoring else len(prompt) + 1
        if limit > self.n_ctx:
            self.refuse(job, f"the prompt has {len(prompt)} tokens; the context holds {self.n_ctx}")
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
        running = Running(
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
        self.jobs.append(running)
        return True

    def start_guarded(self, job: Job) -> None:
        """``start``, surviving anything it raises: the job ends with an error, and the free
        slots are emptied."""
        try:
            self.start(job)
        except Exception as exc:  # the worker must survive anything one job does
            log.exception("starting a job failed")
            started = [running for running in self.jobs if running.job is job]
            if started:
                self.fail(started, str(exc))
            else:
                job.progress = None
                self.refuse(job, str(exc))
            self.empty_free_slots()

    def refuse(self, job: Job, error: str) -> None:
        """End a job that never got a place with ``error``."""
        self.stats.errors += 1
        job.end(Finished("error", 0, "", error=error))
        self.scheduler.finished(job, 0.0)

    def empty_free_slots(self) -> None:
        """Empty every slot no running job holds, and free it: after a failure one of them
        may hold KV its tokens no longer describe, or be left claimed."""
        held = {id(running.slot) for running in self.jobs}
        for slot in self.slots.slots:
            if id(slot) not in held:
                self.slots.reset(slot)
                self.slots.release(slot)

    def give_way(self, running: Running) -> None:
        """A less urgent job leaves its place to a waiting one, and goes back to its line."""
        job = running.job
        if running.answer is not None:
            job.progress = running.answer.progress()
            self.record_decode(running)
        self.leave(running)
        job.yields += 1
        self.stats.yielded += 1
        self.scheduler.submit(job, front=True)

    def end(self, running: Running, reason: str, logprobs: tuple[float, ...] | None = None):
        """End a running job (or one of its candidates): flush its held-back text, free its
        slot, and send ``Finished`` (for candidates: once the last of them has ended)."""
        job = running.job
        answer = running.answer
        if answer is not None:
            if not running.branch:
                self.record_decode(running)
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
        self.leave(running)
        fork = running.fork
        if fork is None:
            own = ended if job.budget.scored else None
            self.finish(job, reason, tokens, text, logprobs, own=own)
            return
        if running.branch:
            self.stats.tokens_generated += tokens
            self.stats.duplicate_branches += reason == "duplicate"
            self.stats.late_branches += reason == "late"
        else:
            # The job's own text is done: its other candidates get a few more tokens to end
            # theirs, not the whole budget, so they never keep the answer waiting for long.
            for other in self.jobs:
                if other.fork is fork:
                    other.budget_left = min(other.budget_left, BRANCH_GRACE_TOKENS)
                    other.late = True
        dropped = reason in ("duplicate", "late")
        if fork.close(running.member, ended, duplicate=dropped):
            own = fork.own
            self.finish(
                job, own.reason, own.tokens, own.text, own=own, alternatives=fork.alternatives()
            )

    def fail(self, failed: list[Running], error: str) -> None:
        jobs = {id(running.job) for running in failed}
        # The candidates of a failed job fail with it.
        failed += [r for r in self.jobs if id(r.job) in jobs and r not in failed]
        told: set[int] = set()
        for running in failed:
            self.slots.reset(running.slot)
            running.job.progress = None
            self.leave(running)
            if id(running.job) not in told:
                told.add(id(running.job))
                self.stats.errors += 1
                running.job.end(Finished("error", 0, "", error=error))

    def leave(self, running: Running) -> None:
        """A job leaves its place: its slot is free again (keeping its KV) and the scheduler
        learns how long it ran (a candidate's sequence only frees its slot)."""
        self.jobs.remove(running)
        self.slots.release(running.slot)
        if not running.branch:
            self.scheduler.finished(running.job, time.perf_counter() - running.began)

    def finish(
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

    def record_decode(self, running: Running) -> None:
        made = len(running.answer.ids) - running.produced if running.answer else 0
        if running.decode_began:
            self.speed.record_decode(made, time.perf_counter() - running.decode_began)
