"""One step of the engine: the planned batch decoded once, and each job's rows acted on."""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import llama_cpp
import numpy as np

from daemon.engine.answer_text import AnswerText
from daemon.engine.batch import TokenBatch
from daemon.engine.fork import Fork, branches_here, first_tokens, same_path
from daemon.engine.jobs import PromptEvaluated
from daemon.engine.report import EngineStats
from daemon.engine.running import Places, Running
from daemon.engine.sampling import Sampling
from daemon.engine.scheduler import Priority, Scheduler
from daemon.engine.scoring import chunk_logprobs
from daemon.engine.slots import Slots
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
from models.loaded import LoadedModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Placed:
    """A work item in the batch, and the row its logits are read from (-1: none)."""

    item: StepItem[Running]
    index: int


class Stepper:
    """Builds each step's batch from the running jobs (``plan_step``), decodes it once (emptying
    free slots while the KV cache is full) and samples each job from its own row of logits;
    forks a job's candidates where the model is first unsure of its first line. ``forks``:
    whether candidates are decoded together on this machine; ``branch_below``: the share of
    its token under which the model is unsure (``fork.branches_here``)."""

    def __init__(
        self,
        model: LoadedModel,
        ctx: llama_cpp.llama_context_p,
        batch: TokenBatch,
        places: Places,
        sampling: Sampling,
        scheduler: Scheduler,
        stats: EngineStats,
        speed: SpeedMeter,
        chunk_tokens: int,
        parallel: int,
        forks: Callable[[], bool],
        branch_below: float,
    ) -> None:
        self.model = model
        self.ctx = ctx
        self.batch = batch
        self.places = places
        self.slots: Slots = places.slots
        self.sampling = sampling
        self.scheduler = scheduler
        self.stats = stats
        self.speed = speed
        self.chunk_tokens = chunk_tokens
        self.parallel = parallel
        self.forks = forks
        self.branch_below = branch_below
        self._stop_tokens = frozenset(model.facts.stop_tokens)
        self._turn = 0
        self.interactive_at = float("-inf")  # when a step last ran a completion

    def step(self) -> None:
        for running in list(self.places.jobs):
            reason = running.job.interruption()
            if reason:
                self.places.end(running, reason)
        if not self.places.jobs:
            return
        tier, runs = most_urgent([r.job.priority for r in self.places.jobs])
        live = []
        for running, run in zip(self.places.jobs, runs, strict=True):
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
            self.interactive_at = now
        work = self._fill(live, chunk_for(tier, self.chunk_tokens, now - self.interactive_at))
        if not work:  # nothing fits this step (a gap waits for the scratch sequence)
            time.sleep(0.001)
            return
        self._decode(work)

    def _fill(self, live: list[Running], chunk: int) -> list[_Placed]:
        """Plan this step (``plan_step``) and put its work into the batch."""
        self.batch.clear()
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
            ready, chunk=chunk, room=self.batch.room, turn=self._turn, scratch=self.slots.scratch
        )
        self._turn = plan.turn
        return [self._place(item) for item in plan.items]

    def _place(self, item: StepItem[Running]) -> _Placed:
        """One work item put into the batch, with the index of the row it is read from."""
        batch = self.batch
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
        batch = self.batch
        while (code := llama_cpp.llama_decode(self.ctx, batch.raw)) == 1:
            if not self.slots.evict():  # the KV cache is full: empty a free slot and retry
                break
        if code != 0:
            if self.slots.scratch is not None:
                self.slots.remove(self.slots.scratch, -1, -1)
            failed = list(dict.fromkeys(placed.item.job for placed in work))
            why = "the model's KV cache is full" if code == 1 else f"llama_decode returned {code}"
            log.warning("a decode step failed: %s", why)
            self.places.fail(failed, why)
            return
        self.stats.steps += 1
        if len({id(placed.item.job) for placed in work}) > 1:
            self.stats.batched_steps += 1
        for placed in work:
            item, running = placed.item, placed.item.job
            if running not in self.places.jobs:
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

    def _gap_read(self, running: Running, start: int, end: int) -> None:
        """A gap read in the scratch sequence: joined to the job's own KV."""
        self.stats.prompt_tokens_evaluated += end - start
        if self.slots.merge_gap(running.slot, start, end):
            running.gaps.pop(0)
            running.slot.tokens = running.prompt[: running.gaps[0][0]]
        else:  # the slot lost its KV: read the whole prompt
            log.warning("joining an edit's KV failed; reading the prompt again")
            running.gaps = [(0, len(running.prompt))]
            running.reused = 0

    def _prompt_read(self, running: Running, index: int, start: int, stop: int) -> None:
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

    def _scored(self, running: Running, first: int, start: int, stop: int) -> None:
        scoring = running.job.scoring
        assert scoring is not None
        tokens = running.prompt
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, first)
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
        self.places.end(running, "scored", tuple(scoring.logprobs))

    def _prompt_done(self, running: Running) -> None:
        job = running.job
        now = time.perf_counter()
        running.sampler = self.sampling.sampler(job.budget)
        if running.branch:  # its prompt is the job's, copied, and its first token
            running.answer = AnswerText(
                job.stop_strings,
                running.until,
                running.seed,
                job.budget.lead,
                job.budget.lead_to_code,
            )
            running.budget_left = running.max_tokens
            return
        evaluated = len(running.prompt) - running.reused
        self.stats.prompt_tokens_reused += running.reused
        self.speed.record_prompt(evaluated, now - running.began)
        if job.prompt_done_at is None:
            job.prompt_done_at = now
            job.sink(PromptEvaluated(len(job.tokens), running.reused))
        running.answer = AnswerText(
            job.stop_strings, job.until, job.progress, job.budget.lead, job.budget.lead_to_code
        )
        running.budget_left = running.max_tokens
        running.decode_began = now
        if running.budget_left <= 0:
            self.places.end(running, "length")

    def _sample(self, running: Running, index: int) -> int | None:
        if running not in self.places.jobs or running.sampler is None:
            return None
        answer = running.answer
        choosing = answer is not None and answer.first_choice is None
        budget = running.job.budget
        barred = budget.not_first if choosing and not running.branch else ()
        token, logprob = self.sampling.sample(running.sampler, index, budget, answer, barred)
        if logprob is not None:
            running.sampled_logprob = logprob
        return token

    def _take(self, running: Running, token: int | None, evaluated: bool = False) -> bool:
        """Add a sampled token to a job's answer; end the job when the answer is complete.
        The token is decoded in the next step, unless it was ``evaluated`` already (a
        candidate's first token, the last of its prompt). True while the answer goes on."""
        if token is None:
            return False
        job = running.job
        if token in self._stop_tokens:
            self.places.end(running, "stop")
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
            self.places.end(running, "stop")
        elif running.budget_left <= 0:
            self.places.end(running, "late" if running.late else "length")
        elif running.own is not None and self._joins_own(running):
            self.places.end(running, "duplicate")
        else:
            if not evaluated:
                running.next_token = token
            return True
        return False

    def _fork(self, own: Running, index: int, token: int | None) -> None:
        """Start the job's other candidates from the most likely tokens after ``token`` (the
        job's own) at the first step of its first line where the model is unsure of its token
        (``fork.branches_here``), each in a free slot that gets a copy of the KV so far; only
        where no request waits for a place, and never for a job that may have to yield."""
        job = own.job
        wanted = job.budget.candidates - 1
        if wanted <= 0 or token is None or own not in self.places.jobs or job.preemptible:
            return
        if not (self.forks() or job.budget.fork_anyway):
            return
        answer = own.answer
        if answer is None or not branches_here(answer, own.sampled_logprob, self.branch_below):
            return
        if own.produced or self.scheduler.depth:
            return
        room = min(wanted, self.parallel - len(self.places.jobs), len(self.slots.free))
        excluded = {*self._stop_tokens, *self.sampling.suppressed, *job.budget.banned}
        if answer.first_choice is None:
            excluded.update(job.budget.not_first)
        row = self.sampling.healing_row(answer, job.budget.banned, index)
        if row is None:
            row = self.sampling.row(index)
        picks = first_tokens(row, token, room, excluded) if room > 0 else []
        fork = Fork()
        written = answer.ids
        for first, logprob in picks:
            prompt = [*own.prompt, *written, first]
            claim = self.slots.claim(prompt, move=False)
            if claim is None:
                break
            branch = Running(
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
                seed=answer.snapshot() if written else None,
                logprobs=list(own.logprobs),
                ends=list(own.ends),
            )
            self.places.jobs.append(branch)
            self.stats.branches += 1
        if fork.members > 1:
            own.fork = fork

    def _first_of_branch(self, branch: Running, index: int) -> None:
        """A candidate's prompt is read (its last token is its first): take that token, then
        sample the next one from its logits."""
        branch.sampled_logprob = branch.first_logprob
        if self._take(branch, branch.prompt[-1], evaluated=True):
            self._take(branch, self._sample(branch, index))

    def _joins_own(self, branch: Running) -> bool:
        """Whether a candidate's text has become the job's own, at a token boundary of both."""
        own, mine = branch.own, branch.answer
        if own is None or own.answer is None or mine is None:
            return False
        text = mine.text + mine.pending
        return same_path(own.answer.text + own.answer.pending, own.ends, text)
