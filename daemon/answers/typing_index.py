"""Cache hits that survive typing: after an answer is shown, typing its first characters still
finds it.

For each completion answered, the index remembers the text before the cursor (as its length and
a hash), the answer, and a key made of everything else the answer depended on (model, prompt
format, profile header, the text after the cursor). A later request with the same key whose text
before the cursor is the remembered one plus characters the answer starts with gets the rest of
the answer at once. A request that typed on from a place whose answer is still being written
(a client showed its first line and asks at the place after it) waits for that answer
(``Unfinished``) before it looks.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import xxhash

# Answers kept, in all, and per key (the same place typed into again and again).
MAX_KEYS = 4096
PER_KEY = 8


@dataclass(frozen=True)
class Typed:
    prefix_length: int
    prefix_hash: str
    answer: str
    finish_reason: str
    tokens: int


def _hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


class TypingIndex:
    def __init__(self) -> None:
        self._entries: OrderedDict[str, list[Typed]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    @staticmethod
    def key(context: str, suffix: str) -> str:
        """``context``: what else the answer depended on (model, format, header, route)."""
        return _hash(context + "\x00" + suffix)

    def remember(self, key: str, prefix: str, answer: str, reason: str, tokens: int) -> None:
        if not answer.strip():
            return
        entry = Typed(len(prefix), _hash(prefix), answer, reason, tokens)
        with self._lock:
            found = self._entries.pop(key, [])
            found = [e for e in found if e.prefix_hash != entry.prefix_hash][-(PER_KEY - 1) :]
            found.append(entry)
            self._entries[key] = found
            while len(self._entries) > MAX_KEYS:
                self._entries.popitem(last=False)

    def forget(self, key: str, answer: str) -> None:
        """Drop an answer (it was rejected)."""
        with self._lock:
            found = self._entries.get(key)
            if found:
                self._entries[key] = [e for e in found if e.answer != answer]

    def match(self, key: str, prefix: str) -> Typed | None:
        """The rest of a remembered answer whose first characters were typed since."""
        with self._lock:
            found = list(self._entries.get(key, ()))
        for entry in reversed(found):
            typed_length = len(prefix) - entry.prefix_length
            if typed_length <= 0 or typed_length >= len(entry.answer):
                continue
            typed = prefix[entry.prefix_length :]
            if not entry.answer.startswith(typed):
                continue
            if _hash(prefix[: entry.prefix_length]) != entry.prefix_hash:
                continue
            with self._lock:
                self.hits += 1
            rest = entry.answer[typed_length:]
            return Typed(len(prefix), _hash(prefix), rest, entry.finish_reason, entry.tokens)
        return None


class Unfinished:
    """The answers being written, by typing key and the text before their cursor."""

    def __init__(self) -> None:
        self._running: dict[str, list[tuple[str, asyncio.Event]]] = {}

    @contextmanager
    def writing(self, key: str, prefix: str) -> Iterator[None]:
        """While an answer for ``prefix`` is written (those waiting on it wake at its end)."""
        entry = (prefix, asyncio.Event())
        self._running.setdefault(key, []).append(entry)
        try:
            yield
        finally:
            left = [e for e in self._running.get(key, []) if e is not entry]
            if left:
                self._running[key] = left
            else:
                self._running.pop(key, None)
            entry[1].set()

    def behind(self, key: str, prefix: str) -> asyncio.Event | None:
        """The end of an answer being written for a place ``prefix`` typed on from."""
        for started, ended in self._running.get(key, ()):
            if len(prefix) > len(started) and prefix.startswith(started):
                return ended
        return None

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._running.values())
