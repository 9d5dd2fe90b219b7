"""Per-user rate limits: a token bucket per user, refilled continuously."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """A token bucket per user: ``per_minute`` requests a minute, bursts up to ``burst``."""

    def __init__(self, per_minute: int, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, user: str) -> float:
        """0 when the request may go on, else the seconds to wait."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.setdefault(user, _Bucket(self.burst, now))
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return 0.0
            return (1 - bucket.tokens) / self.rate
