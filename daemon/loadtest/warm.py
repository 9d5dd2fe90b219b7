"""Before the clock starts: the places hits and typing send, answered until they hit.
Each place is asked with a long deadline, again until it comes from the cache."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

import httpx

from daemon.loadtest.corpus import Document, Place
from daemon.loadtest.driver import Answer, exchange
from daemon.loadtest.workload import COMPLETE, Warmed

ROUNDS = 3
# The warm-up asks with a deadline this long: the answer is then written from the whole window
# (never one cut to answer in time), and that answer is found whether a later request at the
# place gets the whole window or a cut one (the daemon looks the whole window's up first).
DEADLINE_MS = 30_000
CONCURRENCY = 4  # requests in flight during the warm-up: the engine's jobs decoded together
REFUSALS = 5  # 429s a warm-up request waits out before it gives up


@dataclass(frozen=True)
class WarmReport:
    places: int
    answered: int
    cached: int  # answered from the cache by the end: the places hits send
    typing: int  # answers whose first keystroke hit by prefix: the places typing sends
    rounds: int
    seconds: float


def pick_places(documents: list[Document], count: int) -> list[Place]:
    """A place in each of the first ``count`` documents that have one (the first statement a
    third of the way in that takes a cursor), the same on every run."""
    rng = random.Random(0)
    places: list[Place] = []
    for document in documents:
        if len(places) == count:
            break
        for line in document.statements[len(document.statements) // 3 :]:
            place = document.place(line, rng)
            if place is not None:
                places.append(place)
                break
    return places


# Each place is sent with a long deadline, so its answer is the whole window's, and sent again, up
# to ``ROUNDS`` times, until it comes from the cache. The daemon finds a typed-on prefix only among
# the answers it wrote itself since it started (its typing index lives in memory), so an answer
# that came from the cache file is written once more (``"cache": false``) before its typing is
# used.
class WarmUp:
    def __init__(self, http: httpx.AsyncClient, users: int) -> None:
        self.http = http
        self.users = users
        self._gate = asyncio.Semaphore(CONCURRENCY)
        self._asked = 0

    async def ask(self, body: dict[str, object]) -> Answer:
        """One completion, its 429s waited out; the users take turns."""
        self._asked += 1
        user = f"loadtest-{self._asked % self.users + 1}"
        async with self._gate:
            for _ in range(REFUSALS):
                answer = await exchange(self.http, COMPLETE, body, user)
                if answer.result != "429":
                    return answer
                await asyncio.sleep(answer.retry_after or 1.0)
        return answer

    async def answered(self, places: list[Place]) -> tuple[dict[int, Answer], int]:
        """Each place's answer, sent again until it comes from the cache; and the rounds."""
        answers: dict[int, Answer] = {}
        pending = list(range(len(places)))
        rounds = 0
        while pending and rounds < ROUNDS:
            rounds += 1
            asks = (self.ask(places[i].body(deadline_ms=DEADLINE_MS)) for i in pending)
            got = await asyncio.gather(*asks)
            answers.update({i: a for i, a in zip(pending, got, strict=True) if a.result == "ok"})
            pending = [i for i in pending if not (i in answers and answers[i].cached)]
        return answers, rounds

    async def typed_on(self, place: Place, answer: Answer) -> Warmed | None:
        """The place and the answer its typing follows, when typing the answer's first
        character hits by prefix. That answer is the one the daemon's typing index holds (the
        character and the rest it answers), which may be another writing than the cache's."""
        for attempt in range(2):
            if len(answer.text) < 2:
                return None
            first = answer.text[:1]
            probe = await self.ask(place.typed(first).body())
            if probe.match == "typed" and probe.text:
                return Warmed(place, first + probe.text)
            if attempt == 0:
                answer = await self.ask(place.body(cache=False, deadline_ms=DEADLINE_MS))
        return None


async def warm_up(
    http: httpx.AsyncClient, places: list[Place], users: int, *, typing: bool = True
) -> tuple[list[Place], list[Warmed], WarmReport]:
    """The places whose answers come from the cache (for hits), those whose answers hit when
    typed on (for typing; none are looked for without ``typing``), and what the warm-up did."""
    started = time.perf_counter()
    warm = WarmUp(http, users)
    answers, rounds = await warm.answered(places)
    hits = [places[i] for i in sorted(answers) if answers[i].cached]
    typed_on = [warm.typed_on(places[i], answers[i]) for i in sorted(answers)] if typing else []
    typed = [w for w in await asyncio.gather(*typed_on) if w is not None]
    seconds = time.perf_counter() - started
    report = WarmReport(len(places), len(answers), len(hits), len(typed), rounds, seconds)
    return hits, typed, report
