"""How fast the model runs on this machine: prompt tokens and generated tokens a second.
Pipelines size token budgets to time budgets from a ``Speed`` snapshot; none guesses the hardware.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

# Too few tokens to time well: the fixed cost of a decode call dominates.
MIN_PROMPT_SAMPLE = 16
MIN_DECODE_SAMPLE = 4


@dataclass(frozen=True)
class Speed:
    """A snapshot of the measured speed (tokens a second) and how many jobs it rests on."""

    prompt_tps: float
    decode_tps: float
    samples: int = 0

    def prompt_seconds(self, tokens: int) -> float:
        return max(0, tokens) / self.prompt_tps

    def decode_seconds(self, tokens: int) -> float:
        return max(0, tokens) / self.decode_tps

    def tokens_within(self, seconds: float) -> int:
        """How many tokens the model writes in ``seconds``."""
        return max(0, int(seconds * self.decode_tps))


class SpeedMeter:
    """Running averages of prompt and decode speed, updated from the engine's thread.

    The engine measures every job, prompt evaluation and decoding apart, and folds the figures
    into exponentially weighted averages, so the speed follows the machine (a GPU, a CPU shared
    with a build, a model under load). A measurement at start-up seeds them."""

    def __init__(
        self, prompt_tps: float = 300.0, decode_tps: float = 30.0, weight: float = 0.25
    ) -> None:
        if not 0 < weight <= 1:
            raise ValueError("weight must be in (0, 1]")
        self._prompt = prompt_tps
        self._decode = decode_tps
        self._weight = weight
        self._samples = 0
        self._seeded = {"prompt": False, "decode": False}
        self._lock = threading.Lock()

    def record_prompt(self, tokens: int, seconds: float) -> None:
        if tokens >= MIN_PROMPT_SAMPLE and seconds > 0:
            self._fold("prompt", tokens / seconds)

    def record_decode(self, tokens: int, seconds: float) -> None:
        if tokens >= MIN_DECODE_SAMPLE and seconds > 0:
            self._fold("decode", tokens / seconds)

    def _fold(self, kind: str, rate: float) -> None:
        with self._lock:
            self._samples += 1
            if not self._seeded[kind]:
                # The first measurement replaces the prior outright.
                self._seeded[kind] = True
                new = rate
            else:
                old = self._prompt if kind == "prompt" else self._decode
                new = old + self._weight * (rate - old)
            if kind == "prompt":
                self._prompt = new
            else:
                self._decode = new

    def current(self) -> Speed:
        with self._lock:
            return Speed(self._prompt, self._decode, self._samples)
