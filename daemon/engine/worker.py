"""The engine's worker: one thread owns the llama.cpp context and decodes several jobs together."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from typing import ClassVar

import llama_cpp

from daemon.engine.batch import TokenBatch
from daemon.engine.front import QueueFront
from daemon.engine.jobs import (
    Budget,
    Finished,
    Job,
    Scoring,
    Sink,
)
from daemon.engine.kv_states import SequenceStates
from daemon.engine.prefix import common_prefix
from daemon.engine.report import (
    BackendFigures,
    EngineKind,
    EngineStats,
    LocalFigures,
    SavedStateFigures,
)
from daemon.engine.running import Places
from daemon.engine.sampling import Sampling
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.slots import Slots
from daemon.engine.speed import SpeedMeter
from daemon.engine.step import Stepper
from daemon.engine.warm_up import WarmUp
from daemon.errors import ShuttingDown
from daemon.settings import BRANCH_BELOW, FORK_COST_LIMIT
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# After a round fails in a way no job explains, a pause: a fault that repeats does not spin.
_AFTER_FAILURE_S = 0.05


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
# A job that asks for candidates forks where the model is first unsure of its first line
# (daemon.engine.fork), only into places no waiting request needs. A scoring job keeps its slot's
# prefix up to the token before the first scored one and evaluates the rest with logits for every
# position (daemon.engine.scoring). The model's own stop strings (its prompt format's end pieces)
# end every answer. Events go to the sink from the worker thread.
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
        branch_below: float = BRANCH_BELOW,
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
        self._ctx = model.context
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
        self._thread: threading.Thread | None = None
        self._closed = False
        self.stats = EngineStats()
        self.speed = SpeedMeter()
        self.ready = threading.Event()
        facts = model.facts
        self.sampling = Sampling(self._ctx, model, facts.suppressed_tokens)
        self._format_stops = tuple(facts.stop_strings)
        self.places = Places(
            self.slots, self.scheduler, self.stats, self.speed, self.n_ctx, reuse_after_edit
        )
        self.stepper = Stepper(
            model,
            self._ctx,
            self._batch,
            self.places,
            self.sampling,
            self.scheduler,
            self.stats,
            self.speed,
            chunk_tokens,
            self.parallel,
            lambda: self.forks,
            branch_below,
        )

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
        if self._thread is None or not self._thread.is_alive():
            try:  # the context is this thread's now: the worker has stopped
                self.states.persist(self._ctx, self.slots.held())
            except Exception:  # a shutdown goes on whatever the disk does
                log.exception("writing the saved KV states to disk failed")
        self.slots.clear()
        self._batch.close()

    @property
    def busy(self) -> bool:
        return bool(self.places.jobs)

    @property
    def running(self) -> int:
        """Jobs in a slot now (generating, evaluating their prompt, or paused)."""
        return len(self.places.jobs)

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
        stats = states.stats
        figures = SavedStateFigures(
            len(states),
            states.bytes,
            stats.restored,
            stats.tokens_restored,
            kv_disk_restored=stats.disk_restored,
            kv_disk_tokens_restored=stats.disk_tokens_restored,
        )
        disk = states.disk
        if disk is None:
            return figures
        return dataclasses.replace(
            figures,
            kv_disk_states=len(disk),
            kv_disk_bytes=disk.stored_bytes,
            kv_disk_written=disk.stats.written,
            kv_disk_rejected=disk.stats.rejected,
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
        if self.places.start(job):
            while any(r.job is job for r in self.places.jobs):
                self.stepper.step()

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
                self.places.fail(list(self.places.jobs), str(exc))
                self.places.empty_free_slots()
                time.sleep(_AFTER_FAILURE_S)
        for running in list(self.places.jobs):
            running.job.cancel()
            self.places.end(running, "cancelled")

    def _cycle(self) -> bool:
        """One round: wait for work when idle, admit jobs, decode one step. False when the
        scheduler closed."""
        if not self.places.jobs:
            job = self.scheduler.next_job()
            if job is None:
                return False
            assert isinstance(job, Job)
            self.places.start_guarded(job)
        self._admit()
        if self.places.jobs:
            try:
                self.stepper.step()
            except Exception as exc:  # one step's failure ends the jobs in it, no others
                log.exception("a decode step failed")
                self.places.fail(list(self.places.jobs), str(exc))
        return True

    def _admit(self) -> None:
        """Start waiting jobs while there is room; make room for a more urgent one."""
        while len(self.places.jobs) < self.parallel:
            job = self.scheduler.next_job(timeout=0)
            if job is None:
                return
            assert isinstance(job, Job)
            self.places.start_guarded(job)
        least = max(self.places.jobs, key=lambda r: (r.job.priority, r.job.submitted_at))
        if least.job.preemptible and self.scheduler.waiting_above(least.job.priority):
            self.places.give_way(least)
            self._admit()

    @property
    def forks(self) -> bool:
        """Whether candidates are decoded together on this machine."""
        if self.fork_cost_limit <= 0:
            return True
        return self.fork_cost is not None and self.fork_cost <= self.fork_cost_limit
