"""The engine's start: a short prompt and a few decodes, so the first request pays no lazy
initialisation, and this machine's speeds (reading, decoding, several sequences at once)."""

from __future__ import annotations

import logging
import time

import llama_cpp
from llama_cpp import _internals

from daemon.engine.batch import TokenBatch
from daemon.engine.kv_splice import UnsplicableState, parse_state, read_state
from daemon.engine.slots import Slots
from daemon.engine.speed import SpeedMeter
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# Evaluated and decoded once at start-up, to warm the model up and to measure its speed.
WARM_UP_TEXT = (
    "import json\n\n\ndef load_config(path: str) -> dict:\n"
    '    """Read a JSON config file and return its settings as a dict."""\n'
    "    with open(path, encoding='utf-8') as handle:\n"
    "        return json.load(handle)\n\n\ndef main() -> None:\n"
)
WARM_UP_DECODES = 8
# Candidates are decoded together only where a step of FORK_PROBE sequences costs at most
# the ``candidates_cost_limit`` setting's steps of one: on a GPU three sequences cost about
# what one does; on two CPU cores about three times as much (measured here: 36 ms a step
# alone, 105 ms for three), and three candidates would make every answer wait.
FORK_PROBE = 3
# The probe alternates FORK_ROUNDS rounds of FORK_STEPS steps alone and together.
FORK_ROUNDS = 3
FORK_STEPS = 3


class WarmUp:
    """Runs on the engine's context and batch before any job, and leaves its slots empty."""

    def __init__(
        self,
        ctx: llama_cpp.llama_context_p,
        batch: TokenBatch,
        model: LoadedModel,
        slots: Slots,
        speed: SpeedMeter,
    ) -> None:
        self.ctx = ctx
        self.batch = batch
        self.model = model
        self.slots = slots
        self.speed = speed

    def run(self, check_splicing: bool) -> float | None:
        """Warm up and measure; returns what a step of ``FORK_PROBE`` sequences costs in
        steps of one (``measure_fork``). With ``check_splicing``, edited lines are evaluated
        aside when this model's KV cache states can be joined."""
        start = [self.model.bos_token] if self.model.bos_token is not None else []
        tokens = start + self.model.tokenize_text(WARM_UP_TEXT)
        self.slots.clear()  # whatever an earlier engine on this context left
        seq = self.slots.slots[0].seq
        self._decode_alone(tokens[:8], 0, seq)  # lazy initialisation, not timed
        if check_splicing:
            self._check_splicing(seq)
        began = time.perf_counter()
        self._decode_alone(tokens[8:], 8, seq)
        self.speed.record_prompt(len(tokens) - 8, time.perf_counter() - began)
        sampler = _internals.LlamaSampler()
        sampler.add_greedy()
        began = time.perf_counter()
        position = len(tokens)
        for _ in range(WARM_UP_DECODES):
            token = llama_cpp.llama_sampler_sample(sampler.sampler, self.ctx, -1)
            self._decode_alone([token], position, seq)
            position += 1
        elapsed = time.perf_counter() - began
        self.speed.record_decode(WARM_UP_DECODES, elapsed)
        cost = self.measure_fork(seq, position)
        self.slots.clear()
        return cost

    def measure_fork(self, seq: int, position: int) -> float | None:
        """How many single-sequence steps one step of ``FORK_PROBE`` sequences costs here
        (about 1 on a GPU, about 3 on a CPU of few cores); None when there are not enough
        slots to tell. Steps alone and together alternate, and the fastest of each counts: a
        single timing of each at start-up, while the machine did other work, read anything from
        1 to 2.5 on two CPU cores."""
        others = [slot.seq for slot in self.slots.slots if slot.seq != seq][: FORK_PROBE - 1]
        if len(others) < FORK_PROBE - 1:
            return None
        memory = self.slots.memory
        token = self.model.bos_token or 0
        alone_s = together_s = float("inf")
        for _ in range(FORK_ROUNDS):
            alone_s = min(alone_s, self._step_s(token, position, (seq,)))
            position += FORK_STEPS
            for other in others:  # each a copy of the sequence so far
                llama_cpp.llama_memory_seq_rm(memory, other, -1, -1)
                llama_cpp.llama_memory_seq_cp(memory, seq, other, -1, -1)
            together_s = min(together_s, self._step_s(token, position, (seq, *others)))
            position += FORK_STEPS
        cost = together_s / alone_s
        log.info("a step of %d sequences costs %.2f steps of one", FORK_PROBE, cost)
        return cost

    def _step_s(self, token: int, position: int, seqs: tuple[int, ...]) -> float:
        """The fastest of ``FORK_STEPS`` steps that decode ``token`` in each of ``seqs``."""
        fastest = float("inf")
        for step in range(FORK_STEPS):
            self.batch.clear()
            for each in seqs:
                self.batch.add([token], position + step, each)
            began = time.perf_counter()
            self._decode()
            fastest = min(fastest, time.perf_counter() - began)
        return fastest

    def _check_splicing(self, seq: int) -> None:
        """Evaluate edited lines aside when this model's KV cache states can be joined (a
        plain cache; not, for one, a sliding-window model's cache of two parts)."""
        try:
            parse_state(read_state(self.ctx, seq))
        except UnsplicableState as why:
            log.info("reuse after an edit keeps only chunks that need no new lines (%s)", why)
            return
        self.slots.use_scratch()

    def _decode_alone(self, tokens: list[int], start: int, seq: int) -> None:
        self.batch.clear()
        self.batch.add(tokens, start, seq)
        self._decode()

    def _decode(self) -> None:
        if llama_cpp.llama_decode(self.ctx, self.batch.raw) != 0:
            raise RuntimeError("llama_decode failed while warming up")
