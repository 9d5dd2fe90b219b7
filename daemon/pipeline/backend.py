"""The pipelines' backend seam: the ``Backend`` protocol between them and what they run on.
``daemon.pipeline.runtime`` implements it over the real engine; unit tests, a scripted one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from daemon.engine.jobs import Budget, Continuation, PromptEvaluated, Until
from daemon.engine.scheduler import Admission, Priority
from daemon.engine.speed import Speed
from daemon.errors import EngineFailed
from daemon.observe.metrics import FeedbackRecord
from daemon.protocol import TokenEvent
from daemon.store.result_cache import CachedResult
from models.families import PromptFormat


def ms_between(start: float, end: float | None) -> float | None:
    return None if end is None else round((end - start) * 1000, 2)


class ModelFacts(Protocol):
    """What a pipeline reads of the loaded model's facts."""

    @property
    def fingerprint(self) -> str: ...

    @property
    def n_ctx(self) -> int: ...


class Model(Protocol):
    """The loaded model as the pipelines see it: a prompt format and a vocabulary."""

    @property
    def format(self) -> PromptFormat: ...

    @property
    def facts(self) -> ModelFacts: ...

    def tokenize_text(self, text: str) -> list[int]: ...

    def special_token(self, piece: str) -> int | None: ...

    def tokens_starting_with(self, text: str) -> tuple[int, ...]: ...

    @property
    def bos_token(self) -> int | None: ...


@dataclass
class JobTimes:
    """When an engine job passed each point (``time.perf_counter()`` values)."""

    submitted_at: float
    started_at: float | None = None
    prompt_done_at: float | None = None
    first_token_at: float | None = None
    finished_at: float | None = None


@dataclass
class JobResult:
    """The end of one engine job, with its timings."""

    text: str
    reason: str  # "stop", "length", "deadline" or "cancelled"
    tokens: int
    prompt_tokens: int
    reused_tokens: int
    times: JobTimes
    # With ``Budget.scored``: the job's own text, token by token, with log-probabilities.
    own: Continuation | None = None
    # With ``Budget.candidates`` > 1: the other continuations, most likely branch first.
    alternatives: tuple[Continuation, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether the job ended on its own (a stop, or its token budget)."""
        return self.reason in ("stop", "length")


@dataclass
class Scored:
    """The model's judgement of some tokens: the natural-log probability of each scored token
    given every token before it."""

    logprobs: list[float]
    prompt_tokens: int  # the whole sequence: context and scored tokens
    reused_tokens: int  # found live in the KV cache, not evaluated again
    times: JobTimes | None = None

    @property
    def total(self) -> float:
        """The log-probability of the scored tokens together."""
        return sum(self.logprobs)

    @property
    def mean(self) -> float:
        """The mean log-probability of a scored token (0.0 for none): comparable between
        candidates of different lengths."""
        return self.total / len(self.logprobs) if self.logprobs else 0.0


class Relay:
    """Iterate to get an engine job's text as token events; then ``result`` holds its end.

    ``chunks`` yields the job's text as it arrives (and, before it, how much of the prompt the
    model found read already), then one ``JobResult``; closing the relay early (the client went
    away) cancels the job."""

    def __init__(
        self,
        chunks: AsyncIterator[str | PromptEvaluated | JobResult],
        stage: str,
        candidate: int | None,
    ) -> None:
        self._chunks = chunks
        self._stage = stage
        self._candidate = candidate
        self._result: JobResult | None = None

    async def __aiter__(self) -> AsyncIterator[TokenEvent]:
        reused: int | None = None
        async for item in self._chunks:
            if isinstance(item, JobResult):
                self._result = item
                return
            if isinstance(item, PromptEvaluated):
                reused = item.reused_tokens
                continue
            yield TokenEvent(
                text=item, stage=self._stage, candidate=self._candidate, prompt_reused=reused
            )
            reused = None

    @property
    def result(self) -> JobResult:
        if self._result is None:
            raise EngineFailed("the job ended without a result")
        return self._result


class Backend(Protocol):
    """What the pipelines run on.

    The completion and repair pipelines need little from the daemon: the model's prompt format
    and vocabulary, a place in the queue (``admit``), engine jobs whose text streams as token
    events (``run``), the model's log-probabilities of given tokens (``score``: the model as a
    judge of candidates), the result cache (``lookup``, ``store``), the user's feedback history
    and a place to record what happened. ``daemon.pipeline.runtime`` implements it over the real
    engine, cache and metrics; unit tests implement it with a scripted engine, so every rule of
    the pipelines can be tested without a model."""

    @property
    def model(self) -> Model: ...

    def admit(self, priority: Priority, user: str) -> Admission:
        """A place in the queue for a request, or ``Busy`` at once."""
        ...

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
        """One engine job in the request's place; its text streams as ``stage`` token events."""
        ...

    async def score(
        self, tokens: Sequence[int], score_from: int, *, admission: Admission, deadline: float
    ) -> Scored | None:
        """The log-probability of each of ``tokens[score_from:]`` (``score_from`` >= 1) given
        the tokens before it, in the request's place; None when cancelled or past ``deadline``
        (a ``time.perf_counter()`` value). Candidates sharing a prefix share its evaluation."""
        ...

    async def lookup(self, key: str) -> CachedResult | None: ...

    async def store(self, key: str, result: CachedResult) -> None:
        """Store a result; done before the answer's ``done`` event, so that a client asking
        another daemon next finds it."""
        ...

    async def feedback_history(self, user: str, limit: int) -> list[bool]: ...

    async def record_feedback(
        self, request_id: str, user: str, accepted: bool, language: str | None
    ) -> None: ...

    async def demote(self, key: str, evict_after: int) -> str:
        """Count a rejection of the result under ``key``; returns what became of it."""
        ...

    def observe(self, record: FeedbackRecord) -> None:
        """Hand a record to the metrics (nothing when the daemon keeps none)."""
        ...

    def speed(self) -> Speed:
        """The model's measured speed on this machine, to size budgets by."""
        ...

    def cached(self, tokens: Sequence[int]) -> int:
        """How many leading tokens of ``tokens`` the model holds evaluated already (an
        estimate: what a job with this prompt would not read again)."""
        ...


def budget(
    max_tokens: int,
    deadline: float,
    temperature: float,
    seed: int = 0,
    banned: tuple[int, ...] = (),
    candidates: int = 1,
    lead: str = "",
    fork_anyway: bool = False,
    lead_to_code: bool = False,
) -> Budget:
    return Budget(
        max_tokens=max_tokens,
        deadline=deadline,
        temperature=temperature,
        seed=seed,
        banned=banned,
        candidates=candidates,
        lead=lead,
        lead_to_code=lead_to_code,
        fork_anyway=fork_anyway,
    )


def elapsed_ms(since: float) -> float:
    return ms_between(since, time.perf_counter()) or 0.0
