"""What each planned request sends, by kind: hits, typing, misses and fixes.
Misses and fixes go with ``"cache": false``: the seeded places would otherwise be hits."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from daemon.loadtest.corpus import Document, Place
from daemon.loadtest.plan import Planned

COMPLETE = "/v1/complete"
FIX = "/v1/fix"
FIX_SIZE = 20_000  # characters of a file sent for a repair at most
TRIES = 20  # draws for a place not sent before


@dataclass(frozen=True)
class Request:
    kind: str
    endpoint: str
    body: dict[str, object]


@dataclass(frozen=True)
class Warmed:
    """A place answered before the run, and its answer (what typing it out types)."""

    place: Place
    answer: str


class WorkloadError(RuntimeError):
    """A kind of the mix has nothing to send (the message says why)."""


class Workload:
    """The requests of a run, drawn with ``seed``: places the warm-up answered for hits and
    typing, the documents for new places and typos."""

    def __init__(
        self, documents: list[Document], hits: list[Place], typing: list[Warmed], seed: int
    ) -> None:
        self.documents = documents
        self.hits = hits
        self.typing = [w for w in typing if len(w.answer) >= 2]
        self.rng = random.Random(seed)
        self.sent: Counter[str] = Counter()
        self._seen = {(p.path, p.line) for p in hits} | {
            (w.place.path, w.place.line) for w in typing
        }
        self._fixable = [d for d in documents if len(d.text) <= FIX_SIZE] or documents

    def check(self, kinds: tuple[str, ...]) -> None:
        """Raise ``WorkloadError`` when a kind of the mix has nothing to send."""
        if "hits" in kinds and not self.hits:
            raise WorkloadError("no place was answered from the cache in the warm-up: no hits")
        if "typing" in kinds and not self.typing:
            raise WorkloadError(
                "no warmed answer could be typed out and still hit (see the warm-up's line)"
            )

    def request(self, planned: Planned) -> Request:
        n = self.sent[planned.kind]
        self.sent[planned.kind] += 1
        if planned.kind == "hits":
            return Request("hits", COMPLETE, self.hits[n % len(self.hits)].body())
        if planned.kind == "typing":
            return Request("typing", COMPLETE, self._keystroke(n).body())
        if planned.kind == "misses":
            return Request("misses", COMPLETE, self._new_place(n).body(cache=False))
        return Request("fixes", FIX, self._typo(n))

    def _keystroke(self, n: int) -> Place:
        """The n-th typing request: each warmed answer typed out a character at a time."""
        warmed = self.typing[n % len(self.typing)]
        typed = 1 + (n // len(self.typing)) % (len(warmed.answer) - 1)
        return warmed.place.typed(warmed.answer[:typed])

    def _new_place(self, n: int) -> Place:
        """A place not sent before, in the documents one after another."""
        document = self.documents[n % len(self.documents)]
        place = None
        for _ in range(TRIES):
            line = self.rng.choice(document.statements)
            if (document.path, line) in self._seen:
                continue
            place = document.place(line, self.rng)
            if place is not None:
                self._seen.add((document.path, line))
                return place
        return place or _end_of(document)

    def _typo(self, n: int) -> dict[str, object]:
        for i in range(TRIES):
            document = self._fixable[(n + i) % len(self._fixable)]
            broken = document.with_typo(self.rng)
            if broken is not None:
                return {"text": broken, "path": document.path, "cache": False}
        raise WorkloadError("no file of the corpus takes a typo its parser rejects")


def _end_of(document: Document) -> Place:
    """The end of the file: a place every document has."""
    lines = document.text.split("\n")
    return Place(document.path, document.text, len(lines) - 1, len(lines[-1]))
