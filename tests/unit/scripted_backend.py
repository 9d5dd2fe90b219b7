"""A scripted ``Backend`` for unit tests of the pipelines: no model, the real scheduler.

Each engine job answers with the text a script gives for its stage (or the next of a list),
in line-sized chunks, optionally held until a gate opens. Every job is recorded with the
priority and user of the place it ran in, so tests can check what the pipelines asked for.
Scoring is scripted too: a ``Scorer`` gives the log-probabilities (by default -1.0 a token).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from daemon.engine.jobs import Budget, Continuation, Until
from daemon.engine.prefix import common_prefix
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.speed import Speed
from daemon.observe.metrics import FeedbackRecord
from daemon.pipeline.backend import JobResult, JobTimes, Relay, Scored
from daemon.store.result_cache import CachedResult
from models.families import PLAIN, PromptFormat
from tests.unit.fake_vocab import CharVocab


class ScriptedModel(CharVocab):
    def __init__(self, fmt: PromptFormat = PLAIN) -> None:
        super().__init__(bos=1)
        self.format = fmt
        self.facts = SimpleNamespace(fingerprint="scripted-model", n_ctx=8192)


@dataclass
class Run:
    tokens: list[int]
    budget: Budget
    stage: str
    stops: tuple[str, ...]
    candidate: int | None
    priority: Priority
    user: str
    withdrawn: bool = False
    finished: bool = False


@dataclass
class ScoreRun:
    tokens: list[int]
    score_from: int
    priority: Priority
    user: str


Script = Callable[[Run], str]
# Candidates for a job whose budget asks for them: (text, the log-probability of each of its
# tokens, a character a token), the job's own first.
Candidates = Callable[[Run], list[tuple[str, float]]]
# The log-probabilities of tokens[score_from:], given the tokens and score_from.
Scorer = Callable[[list[int], int], list[float]]


def flat_scores(tokens: list[int], score_from: int) -> list[float]:
    """The default scorer: every scored token has a log-probability of -1.0."""
    return [-1.0] * (len(tokens) - score_from)


@dataclass
class ScriptedBackend:
    script: Script
    scheduler: Scheduler = field(default_factory=Scheduler)
    model: ScriptedModel = field(default_factory=ScriptedModel)
    gate: asyncio.Event | None = None
    runs: list[Run] = field(default_factory=list)
    scorer: Scorer = flat_scores
    scores: list[ScoreRun] = field(default_factory=list)
    cache: dict[str, CachedResult] = field(default_factory=dict)
    feedback: list[tuple[str, str, bool, str | None]] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)
    records: list[FeedbackRecord] = field(default_factory=list)
    # The speed the pipelines size their budgets by (tokens a second).
    measured: Speed = field(default_factory=lambda: Speed(prompt_tps=1000.0, decode_tps=100.0))
    # Cut each answer at its budget's tokens (a character a token) and end it "length".
    token_budgets: bool = False
    # The continuations of a job that asks for candidates or log-probabilities (the script
    # is then not asked).
    candidates: Candidates | None = None
    # After this many lines of an answer, wait for ``hold`` to be set (an answer still being
    # written).
    held_after: int | None = None
    hold: asyncio.Event | None = None

    def admit(self, priority: Priority, user: str) -> Admission:
        return self.scheduler.admit(priority, user)

    def run(
        self,
        tokens: Sequence[int],
        budget: Budget,
        *,
        admission: Admission,
        stage: str,
        stops: Sequence[str] = (),
        until: Until | None = None,
        candidate: int | None = None,
    ) -> Relay:
        assert not admission.released, "a job ran in a place that was given back"
        run = Run(
            list(tokens),
            budget,
            stage,
            tuple(stops),
            candidate,
            admission.priority,
            admission.user,
        )
        self.runs.append(run)
        return Relay(self._chunks(run, until), stage, candidate)

    async def _chunks(self, run: Run, until: Until | None) -> AsyncIterator[str | JobResult]:
        try:
            if self.gate is not None:
                await self.gate.wait()
            # A job with no tokens to write only reads its prompt (the warm-up of a window).
            scored: list[Continuation] = []
            if self.candidates is not None and run.budget.scored and run.budget.max_tokens:
                written = self.candidates(run)[: run.budget.candidates]
                scored = [self._continuation(run, text, lp, until) for text, lp in written]
                text, reason = scored[0].text, scored[0].reason
            else:
                text = self.script(run) if run.budget.max_tokens > 0 else ""
                text, reason = self._cut(run, text, until)
            for index, line in enumerate(text.splitlines(keepends=True)):
                if index == self.held_after and self.hold is not None:
                    await self.hold.wait()
                await asyncio.sleep(0)
                yield line
            run.finished = True
            times = JobTimes(submitted_at=0.0, started_at=0.0, finished_at=0.0)
            yield JobResult(
                text,
                reason,
                len(text),
                len(run.tokens),
                0,
                times,
                own=scored[0] if scored else None,
                alternatives=tuple(scored[1:]),
            )
        finally:
            if not run.finished:
                run.withdrawn = True

    def _cut(self, run: Run, text: str, until: Until | None) -> tuple[str, str]:
        reason = "stop"
        if until is not None:
            cut = until(text + "\n")
            if cut is not None:
                text = text[:cut]
        if self.token_budgets and len(text) > run.budget.max_tokens:  # a char a token
            text, reason = text[: run.budget.max_tokens], "length"
        return text, reason

    def _continuation(
        self, run: Run, text: str, logprob: float, until: Until | None
    ) -> Continuation:
        first = self.model.tokenize_text(text[:1])  # a character a token
        # as the engine's: the first token chosen, whether or not the until kept its text
        text, reason = self._cut(run, text, until)
        ends = tuple(range(1, len(text) + 1))
        return Continuation(
            text, reason, len(text), (logprob,) * len(text), ends, first[0] if first else None
        )

    async def score(
        self, tokens: Sequence[int], score_from: int, *, admission: Admission, deadline: float
    ) -> Scored | None:
        assert not admission.released, "a job ran in a place that was given back"
        assert 1 <= score_from < len(tokens), "nothing to score"
        self.scores.append(ScoreRun(list(tokens), score_from, admission.priority, admission.user))
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(0)
        if time.perf_counter() >= deadline:
            return None
        return Scored(self.scorer(list(tokens), score_from), len(tokens), 0)

    async def lookup(self, key: str) -> CachedResult | None:
        return self.cache.get(key)

    async def store(self, key: str, result: CachedResult) -> None:
        self.cache[key] = result

    async def feedback_history(self, user: str, limit: int) -> list[bool]:
        return [accepted for who, _, accepted, _ in self.feedback if who == user][-limit:]

    async def record_feedback(
        self, request_id: str, user: str, accepted: bool, language: str | None
    ) -> None:
        self.feedback.append((user, request_id, accepted, language))

    async def demote(self, key: str, evict_after: int) -> str:
        self.demoted.append(key)
        return "demoted"

    def observe(self, record: FeedbackRecord) -> None:
        self.records.append(record)

    def speed(self) -> Speed:
        return self.measured

    def cached(self, tokens: Sequence[int]) -> int:
        """The longest prefix of ``tokens`` an earlier run read, as a model's KV would hold."""
        return max((common_prefix(run.tokens, tokens) for run in self.runs), default=0)


def by_stage(**answers: str) -> Script:
    """A script that answers each stage with its own text."""
    return lambda run: answers[run.stage]


def in_turn(*answers: str) -> Script:
    """A script that gives its answers one after another, then the last one again."""
    queue = list(answers)

    def next_answer(run: Run) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return next_answer
