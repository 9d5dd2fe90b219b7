"""Cache hits that survive typing: a shown answer's first characters, typed, still find it
(and those of its candidates that begin with them, or a candidate the programmer typed)."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

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
    # The other candidates shown beside the answer, best first (from a hit: their rest).
    alternatives: tuple[str, ...] = ()


def _hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


# For each completion answered, the index remembers the text before the cursor (as its length and
# a hash), the answer and the candidates shown beside it, and a key made of everything else the
# answer depended on (model, prompt format, profile header, the text after the cursor). A later
# request with the same key whose text before the cursor is the remembered one plus characters the
# answer starts with gets the rest of the answer at once, and the rest of each candidate that starts
# with them too; where the answer does not start with them but a candidate does (the programmer
# cycled to it and typed on), that candidate is the answer.
class TypingIndex:
    def __init__(self) -> None:
        self._entries: OrderedDict[str, list[Typed]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    @staticmethod
    def key(context: str, suffix: str) -> str:
        """``context``: what else the answer depended on (model, format, header, route)."""
        return _hash(context + "\x00" + suffix)

    def remember(
        self,
        key: str,
        prefix: str,
        answer: str,
        reason: str,
        tokens: int,
        alternatives: tuple[str, ...] = (),
    ) -> None:
        if not answer.strip():
            return
        entry = Typed(len(prefix), _hash(prefix), answer, reason, tokens, alternatives)
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

    def count_hit(self) -> None:
        with self._lock:
            self.hits += 1

    def match(self, key: str, prefix: str) -> Typed | None:
        """The rest of a remembered answer (or of a candidate shown beside it) whose first
        characters were typed since, with the rest of the other candidates that start with
        them. Typed whole, an answer the model (or its gap) ended has nothing more: the rest is
        empty (llama.vim asks at the end of the suggestion it shows); one a budget cut has none,
        nor has a candidate typed whole."""
        with self._lock:
            found = list(self._entries.get(key, ()))
        for entry in reversed(found):
            typed_length = len(prefix) - entry.prefix_length
            if typed_length <= 0:
                continue
            typed = prefix[entry.prefix_length :]
            rests = _rests(entry, typed)
            if rests is None or _hash(prefix[: entry.prefix_length]) != entry.prefix_hash:
                continue
            self.count_hit()
            return Typed(
                len(prefix), _hash(prefix), rests[0], entry.finish_reason, entry.tokens, rests[1:]
            )
        return None


def _rests(entry: Typed, typed: str) -> tuple[str, ...] | None:
    """What is left of the entry's answer and candidates once ``typed`` is typed, best first,
    of those that start with it; None when none is left (see ``TypingIndex.match``)."""
    rests: list[str] = []
    if entry.answer.startswith(typed) and (
        len(typed) < len(entry.answer) or entry.finish_reason == "stop"
    ):
        rests.append(entry.answer[len(typed) :])
    for other in entry.alternatives:
        rest = other[len(typed) :]
        if other.startswith(typed) and rest and rest not in rests:
            rests.append(rest)
    return tuple(rests) if rests else None


@dataclass
class Writing:
    """An answer being written: the text before its cursor, the model's text so far (after the
    cursor, as the model wrote it), and its end."""

    prefix: str
    text: str = ""
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    # How the answer's written lines are fitted to its gap (as its skeleton is).
    fit: Callable[[str], str] = lambda written: written
    _grew: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, piece: str) -> None:
        self.text += piece
        grew, self._grew = self._grew, asyncio.Event()
        grew.set()

    async def changed(self, seen: str) -> None:
        """Return once the text is longer than ``seen`` (what the caller read) or the answer
        has ended."""
        while len(self.text) <= len(seen) and not self.ended.is_set():
            waits = [
                asyncio.ensure_future(self._grew.wait()),
                asyncio.ensure_future(self.ended.wait()),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()

    def next_line(self, prefix: str) -> str | None:
        """For a place ``prefix`` that typed on from this answer's with text the answer starts
        with: the answer's next written line past it, fitted, once the model has written it;
        None before, or where the typing left the answer or the fitting dropped the line."""
        typed = prefix[len(self.prefix) :]
        if not self.text.startswith(typed):
            return None
        line = first_written_line(self.text[len(typed) :])
        if line is None:
            return None
        fitted = self.fit(typed + line)
        if len(fitted) <= len(typed) or not fitted.startswith(typed):
            return None
        return fitted[len(typed) :]


# A request that typed on from a place whose answer is still being written (a client showed its
# first line and asks at the place after it) waits for that answer before it looks; one that takes
# a first line (a drop-in client with a time limit) gets the next line of that answer as soon as
# the model has written it.
class Unfinished:
    """The answers being written, by typing key and the text before their cursor."""

    def __init__(self) -> None:
        self._running: dict[str, list[Writing]] = {}

    @contextmanager
    def writing(self, key: str, prefix: str) -> Iterator[Writing]:
        """While an answer for ``prefix`` is written (those waiting on it wake as it grows and
        at its end)."""
        entry = Writing(prefix)
        self._running.setdefault(key, []).append(entry)
        try:
            yield entry
        finally:
            left = [e for e in self._running.get(key, []) if e is not entry]
            if left:
                self._running[key] = left
            else:
                self._running.pop(key, None)
            entry.ended.set()

    def behind(self, key: str, prefix: str) -> Writing | None:
        """An answer being written for a place ``prefix`` typed on from."""
        for entry in self._running.get(key, ()):
            if len(prefix) > len(entry.prefix) and prefix.startswith(entry.prefix):
                return entry
        return None

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._running.values())


def first_written_line(text: str) -> str | None:
    """``text`` up to the end of its first line with something on it (the line breaks and blank
    lines before it included: where the cursor's line ends, the answer starts on the next), or
    None while that line is not complete."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        if text[start:end].strip():
            return text[:end]
        start = end + 1
    return None
