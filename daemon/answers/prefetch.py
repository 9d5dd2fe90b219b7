"""Prefetch: after an answer is accepted, the next completion is computed while the model idles.
It runs at background priority and lands in the cache for the keystroke that asks for it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from daemon.answers.feedback import RecentAnswer
from daemon.cursor import Cursor, PositionError
from daemon.engine.scheduler import Priority
from daemon.errors import Busy
from daemon.protocol import CompleteRequest
from daemon.tasks import BackgroundTasks

Complete = Callable[[CompleteRequest, str, Priority], Awaitable[AsyncGenerator[Any, None]]]


def next_request(req: CompleteRequest, answer: str) -> CompleteRequest | None:
    """The request an editor sends after ``answer`` was accepted: the text with it, the
    cursor after it."""
    try:
        cursor = Cursor.locate(req.text, req.line, req.column).typed(answer)
    except PositionError:
        return None
    return req.model_copy(
        update={
            "text": cursor.text,
            "line": cursor.line,
            "column": cursor.column,
            "request_id": None,
            "mode": "auto",
        }
    )


class Prefetcher:
    """Runs the next completion after an accepted one, with ``complete`` (the pipeline's
    ``start``) in tasks of its own. The request is the one an editor sends next (the text with
    the answer in it, the cursor after it), run at background priority: it waits behind
    everything a user is waiting for, is refused at once when the model is busy, and lands in
    the cache for the keystroke that asks for it."""

    def __init__(self, complete: Complete, tasks: BackgroundTasks) -> None:
        self._complete = complete
        self._tasks = tasks
        self.prefetched = 0

    def accepted(self, answer: RecentAnswer) -> None:
        self._tasks.start(self._prefetch(answer))

    async def _prefetch(self, answer: RecentAnswer) -> None:
        following = next_request(answer.request, answer.answer)
        if following is None:
            return
        try:
            events = await self._complete(following, answer.user, Priority.BACKGROUND)
        except Busy:
            return  # prefetching is only for idle time
        async for _ in events:
            pass
        self.prefetched += 1
