"""The model as a judge: how likely the model finds each verified repair, in its context.
Verified candidates that tie on the rules' ranking are scored; the likeliest wins.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from daemon.engine.scheduler import Admission
from daemon.errors import AssistError
from daemon.pipeline.backend import Backend
from daemon.repair.intent import Candidate, changed_lines

# Candidates judged at most (the best by the rules' ranking first).
MAX_JUDGED = 4
# Lines after the last changed line that are scored too: a closer's place shows in what follows.
LINES_AFTER = 1
# Tokens of the file before the window that the model reads first (the shared prefix).
PREFIX_TOKENS = 192
# The longest a round waits for the judge; past it the rules' order stands.
JUDGE_S = 4.0


@dataclass
class Judge:
    """Scores candidates with the backend's model in the repair's place in the queue.

    Every candidate is scored over the same window of the file (from the first line any of them
    changes to a few lines after the last), after the same lines before it: the model evaluates
    that shared prefix once and each candidate costs only its window. The score is the window's
    total log-likelihood, so candidates that change different lines are compared on the same
    stretch of code."""

    backend: Backend
    admission: Admission
    header: str
    judged: int = 0  # candidates scored, for the record

    async def __call__(self, document: str, candidates: list[Candidate], deadline: float) -> None:
        """Set ``score`` on the candidates that tie with the best on the rules' ranking (the
        same tokens invented or lost, the same layout): the likeliest wins."""
        best = candidates[0].key()[:3]
        tied = [c for c in candidates if c.key()[:3] == best][:MAX_JUDGED]
        if len(tied) < 2:
            return
        lines = document.split("\n")
        ranges = [changed_lines(document, c.text) for c in tied]
        low = min(r.start for r in ranges)
        high = min(len(lines), max(r.stop for r in ranges) + LINES_AFTER)
        model = self.backend.model
        prefix = self.header + "".join(line + "\n" for line in lines[:low])
        prefix_tokens = await asyncio.to_thread(model.tokenize_text, prefix)
        context = prefix_tokens[-PREFIX_TOKENS:]
        if model.bos_token is not None:
            context = [model.bos_token, *context]
        if not context:
            return  # nothing before the window to read it after (no BOS, change at line 1)
        n_ctx = model.facts.n_ctx
        until = min(deadline, time.perf_counter() + JUDGE_S)
        for candidate in tied:
            window = _window(candidate.text, low, len(lines) - high)
            scored_tokens = await asyncio.to_thread(model.tokenize_text, window)
            tokens = [*context, *scored_tokens]
            if not scored_tokens or len(tokens) >= n_ctx:
                return  # unjudged: the rules' order stands
            try:
                scored = await self.backend.score(
                    tokens, len(context), admission=self.admission, deadline=until
                )
            except AssistError:
                scored = None  # the model could not judge in time: the rules' order stands
            if scored is None:
                for other in tied:
                    other.score = None  # a partial judgement would compare unlike things
                return
            candidate.score = round(scored.total, 3)
            self.judged += 1


def _window(text: str, low: int, lines_after_window: int) -> str:
    """Lines ``low`` .. (all but the last ``lines_after_window``) of ``text``."""
    lines = text.split("\n")
    end = len(lines) - lines_after_window
    return "\n".join(lines[low:end])
