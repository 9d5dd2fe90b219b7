"""What the engine runs: a ``Job`` and the events it sends while it runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from daemon.engine.scheduler import Admission, Priority


@dataclass(frozen=True)
class Budget:
    max_tokens: int
    deadline: float  # time.perf_counter() value after which generation stops
    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    seed: int = 0
    banned: tuple[int, ...] = ()  # tokens the job may not generate
    # Continuations decoded together from the one prompt, the job's own included: the others
    # branch from it at the first token of its first line the model is unsure of, from the
    # next most likely tokens there, greedy after (fewer when the engine has no room for them
    # or the model is sure of the whole line).
    candidates: int = 1
    # Decode the candidates even where the engine would not (a step of several sequences
    # costs more than its limit): the client asked for several answers.
    fork_anyway: bool = False
    logprobs: bool = False  # report each generated token's log-probability
    # Text the answer begins with that the document already holds (token healing: the prompt
    # ends before the token that covers it). The model writes it first, choosing only among
    # the tokens that agree with it; it is neither shown nor part of the answer's text.
    lead: str = ""
    # The lead is the indentation of a line that begins a statement: the token that writes its
    # last blank writes code too, never blanks alone.
    lead_to_code: bool = False
    # Tokens the answer may not begin with, past its lead (a second answer after a first that
    # came to nothing): left out of the choice, not of the probabilities reported.
    not_first: tuple[int, ...] = ()

    @property
    def scored(self) -> bool:
        """Whether each generated token's log-probability is kept (candidates need them)."""
        return self.logprobs or self.candidates > 1


@dataclass(frozen=True)
class PromptEvaluated:
    prompt_tokens: int
    reused_tokens: int


@dataclass(frozen=True)
class TokenText:
    text: str


@dataclass(frozen=True)
class Continuation:
    """One continuation a job generated: its text, why it ended, and, where the budget asked,
    the natural-log probability of each token and where in ``text`` each token's text ends
    (an offset; text held back at the end, a stop string, counts as nothing)."""

    text: str
    reason: str
    tokens: int
    token_logprobs: tuple[float, ...] = ()
    token_ends: tuple[int, ...] = ()
    # The id of its first token that wrote text past the budget's lead (its first token,
    # without a lead): where the model chose what to write.
    first_token: int | None = None


@dataclass(frozen=True)
class Finished:
    reason: str  # "stop", "length", "scored", "deadline", "cancelled" or "error"
    tokens: int
    text: str
    error: str | None = None
    # A scoring job that ended "scored": the natural-log probability of each scored token.
    logprobs: tuple[float, ...] | None = None
    # A generating job with ``Budget.logprobs``: its own text's tokens, as a Continuation.
    own: Continuation | None = None
    # With ``Budget.candidates`` > 1: the other continuations, most likely branch first.
    alternatives: tuple[Continuation, ...] = ()


EngineEvent = PromptEvaluated | TokenText | Finished
Sink = Callable[[EngineEvent], None]
Until = Callable[[str], int | None]


@dataclass
class Progress:
    """Where a generation stood when it yielded, so that it resumes exactly there."""

    ids: list[int] = field(default_factory=list)
    text: str = ""
    pending: str = ""
    decoder_state: tuple[bytes, int] = (b"", 0)
    leading: bytes = b""  # the bytes of the budget's ``lead`` not written yet
    led_to_blanks: bool = False  # the last token ended a lead that ends in blanks
    first_choice: int | None = None  # the first token that wrote past the lead


@dataclass
class Scoring:
    """What makes a job a scoring job: the index of the first scored token, and the
    log-probabilities found so far (kept when the job yields, so it resumes where it stopped)."""

    score_from: int
    logprobs: list[float] = field(default_factory=list)
    reused: int | None = None  # tokens the job's first run found live in the KV cache

    @property
    def next_index(self) -> int:
        """The index of the first token not scored yet."""
        return self.score_from + len(self.logprobs)


# A job is a token prompt with its Budget, stops, priority and user, in the place its request was
# admitted to. It generates text after its prompt or, with a Scoring, ends with the log-probability
# of each scored token given the tokens before it. A generating job may ask for candidates: other
# continuations of the same prompt, each from another of the most likely first tokens, decoded
# beside its own (daemon.engine.fork); they come back in its Finished, and only its own text
# streams.
@dataclass(eq=False)  # a job is itself: hashed and compared by identity
class Job:
    tokens: list[int]
    budget: Budget
    stop_strings: tuple[str, ...]
    sink: Sink
    # Judges complete lines: returns where the answer ends (an index into the text), or None.
    until: Until | None = None
    priority: Priority = Priority.INTERACTIVE
    user: str = "local"
    # The place in the queue the job runs in: its request's, or (when it was submitted on its
    # own) one it took itself and gives back when it ends.
    admission: Admission | None = None
    owns_place: bool = False
    submitted_at: float = field(default_factory=time.perf_counter)
    started_at: float | None = None
    prompt_done_at: float | None = None
    first_token_at: float | None = None
    finished_at: float | None = None
    progress: Progress | None = None
    scoring: Scoring | None = None  # set: the job scores its tokens instead of generating
    yields: int = 0
    _cancel: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def generation(
        cls,
        tokens: list[int],
        budget: Budget,
        stops: tuple[str, ...],
        sink: Sink,
        until: Until | None,
        admission: Admission | None,
        priority: Priority,
        user: str,
    ) -> Job:
        """A generating job: in its request's place (``admission``, whose priority and user
        it takes) or in one of its own at ``priority`` for ``user``. ``stops`` are the caller's
        and the prompt format's, in that order, the empty and repeated ones left out."""
        return cls(
            tokens,
            budget,
            tuple(dict.fromkeys(s for s in stops if s)),
            sink,
            until=until,
            priority=admission.priority if admission else priority,
            user=admission.user if admission else user,
            admission=admission,
        )

    def cancel(self) -> None:
        """Ask the worker to stop; it does so before the next token (or prompt chunk)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def interruption(self) -> str | None:
        """Why the job must stop now: "cancelled", "deadline", or None to go on."""
        if self.cancelled:
            return "cancelled"
        if time.perf_counter() >= self.budget.deadline:
            return "deadline"
        return None

    def show(self, text: str) -> None:
        """Send answer text to the sink (nothing for none); the first sent is the first token."""
        if text:
            if self.first_token_at is None:
                self.first_token_at = time.perf_counter()
            self.sink(TokenText(text))

    @property
    def preemptible(self) -> bool:
        return self.priority > Priority.INTERACTIVE

    def end(self, event: Finished) -> None:
        """Send the job's one ``Finished`` event, and give back a place of its own."""
        self.finished_at = time.perf_counter()
        if self.owns_place and self.admission is not None:
            self.admission.release()
        self.sink(event)
