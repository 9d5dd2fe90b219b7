"""The feedback loop: accepted and rejected answers, per user and language.
A user who accepts most answers gets fast mode; answers users reject are demoted in the cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

# Feedback events per user that the acceptance rate is computed over.
WINDOW = 50
# Fewer events than this say nothing about a user yet.
MIN_EVENTS = 10
# A user who accepts more than this share of the last WINDOW answers (MIN_EVENTS of them at
# least) gets fast mode: the deep path skips its error-handling pass and budgets are shorter.
FAST_MODE_RATE = 0.8
# Answers remembered by request id, so that feedback can find them: an answer that users reject
# again and again is demoted in the cache and then evicted, so a high hit rate never wins over
# usefulness.
RECENT_ANSWERS = 4096


@dataclass(frozen=True)
class RecentAnswer:
    key: str  # the result cache's key
    typing_key: str | None
    user: str
    language: str | None
    answer: str
    request: Any  # the CompleteRequest, for the prefetch of the next answer


class FeedbackBook:
    def __init__(self) -> None:
        self._events: dict[str, deque[bool]] = {}
        self._recent: OrderedDict[str, RecentAnswer] = OrderedDict()
        self._lock = threading.Lock()

    def seed(self, user: str, accepted: list[bool]) -> None:
        """Start a user's window from stored events (oldest first)."""
        with self._lock:
            self._events[user] = deque(accepted[-WINDOW:], maxlen=WINDOW)

    def known(self, user: str) -> bool:
        with self._lock:
            return user in self._events

    def record(self, user: str, accepted: bool) -> None:
        with self._lock:
            self._events.setdefault(user, deque(maxlen=WINDOW)).append(accepted)

    def acceptance(self, user: str) -> tuple[float | None, int]:
        with self._lock:
            events = list(self._events.get(user, ()))
        if not events:
            return None, 0
        return sum(events) / len(events), len(events)

    def fast_mode(self, user: str) -> bool:
        rate, count = self.acceptance(user)
        return rate is not None and count >= MIN_EVENTS and rate > FAST_MODE_RATE

    def remember(self, request_id: str, answer: RecentAnswer) -> None:
        with self._lock:
            self._recent[request_id] = answer
            self._recent.move_to_end(request_id)
            while len(self._recent) > RECENT_ANSWERS:
                self._recent.popitem(last=False)

    def answer(self, request_id: str) -> RecentAnswer | None:
        with self._lock:
            return self._recent.get(request_id)
