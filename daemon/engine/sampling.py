"""Sampling a token from a decoded row: llama.cpp's samplers, or the engine's own pick from a
row that token healing, bans or a barred first token changed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import llama_cpp
import numpy as np
from llama_cpp import _internals

from daemon.engine.answer_text import AnswerText
from daemon.engine.fork import log_softmax_of
from daemon.engine.jobs import Budget
from models.loaded import LoadedModel


class Sampling:
    """Samplers and rows of logits over one llama.cpp context. ``suppressed``: tokens no
    answer may write (the model's thinking markers)."""

    def __init__(
        self, ctx: llama_cpp.llama_context_p, model: LoadedModel, suppressed: Iterable[int]
    ):
        self.ctx = ctx
        self.model = model
        self.suppressed = {token: float("-inf") for token in suppressed}

    def sampler(self, budget: Budget) -> _internals.LlamaSampler:
        """llama.cpp's sampler chain for a job's budget."""
        sampler = _internals.LlamaSampler()
        bias = self.suppressed | {t: float("-inf") for t in budget.banned}
        if bias:
            sampler.add_logit_bias(self.model.n_vocab, bias)
        if budget.temperature <= 0.0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(budget.top_k)
            sampler.add_top_p(budget.top_p, 1)
            sampler.add_temp(budget.temperature)
            sampler.add_dist(budget.seed)
        return sampler

    def sample(
        self,
        sampler: _internals.LlamaSampler,
        index: int,
        budget: Budget,
        answer: AnswerText | None,
        barred: Sequence[int],
    ) -> tuple[int, float | None]:
        """A token from row ``index``, and its log-probability where the row was read (a
        changed row, or a budget that keeps them). ``barred``: tokens the answer may not
        begin with."""
        row = self.healing_row(answer, budget.banned, index)
        if row is None and not barred:
            token = int(llama_cpp.llama_sampler_sample(sampler.sampler, self.ctx, index))
            row = self.row(index) if budget.scored else None
        else:
            if row is None:
                row = np.array(self.row(index), dtype=np.float32)
            choice = row
            if barred:
                choice = row.copy()
                choice[list(barred)] = -np.inf
            token = pick(choice, budget, len(answer.ids) if answer else 0)
        return token, None if row is None else log_softmax_of(row, token)

    def healing_row(
        self, answer: AnswerText | None, banned: Iterable[int], index: int
    ) -> np.ndarray | None:
        """Row ``index``'s logits with every token that disagrees with the answer's lead (the
        part of it not written yet) or is banned taken out; right after a lead that ends in
        blanks, every token that begins with one; None when no lead constrains the token."""
        if answer is None or not (answer.leading or answer.led_to_blanks):
            return None
        if answer.leading:
            allowed = self.model.agreeing(answer.leading, to_code=answer.to_code)
        else:
            allowed = self.model.after_blanks()
        row = np.full(self.model.n_vocab, -np.inf, dtype=np.float32)
        row[allowed] = self.row(index)[allowed]
        row[list(banned)] = -np.inf
        return row

    def row(self, index: int) -> np.ndarray:
        """The logits of row ``index`` of the batch just decoded."""
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self.model.n_vocab,))


def pick(row: np.ndarray, budget: Budget, step: int) -> int:
    """A token from a row of logits that some tokens were taken out of: the most likely one,
    or at the budget's temperature one drawn from the rest (seeded by the budget and step)."""
    if budget.temperature <= 0.0:
        return int(np.argmax(row))
    scaled = (row - row.max()) / budget.temperature
    weights = np.exp(scaled)
    rng = np.random.default_rng((budget.seed, step))
    return int(rng.choice(len(row), p=weights / weights.sum()))
