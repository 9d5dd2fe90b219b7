"""Per-document debounce, and the rule that a newer request replaces an older one.
A request waits for typing to pause; a newer one for the same document cancels it.
"""

from __future__ import annotations

import asyncio

SUPERSEDED = "superseded by a newer request for the same document"


class DocumentDebouncer:
    """A request waits for typing to pause; if another request for the same document arrives
    in the meantime, the older one is cancelled (closing its stream cancels the daemon's
    generation) and answers empty."""

    def __init__(self) -> None:
        self._generation: dict[str, int] = {}
        self._running: dict[str, asyncio.Task[object]] = {}

    async def settle(self, uri: str, delay_s: float) -> bool:
        """Replace the document's running request and wait ``delay_s``; False if replaced."""
        generation = self._generation.get(uri, 0) + 1
        self._generation[uri] = generation
        current = asyncio.current_task()
        previous = self._running.get(uri)
        if previous is not None and previous is not current and not previous.done():
            previous.cancel(SUPERSEDED)
        if current is not None:
            self._running[uri] = current
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        return self._generation.get(uri) == generation

    def finished(self, uri: str) -> None:
        current = asyncio.current_task()
        if self._running.get(uri) is current:
            del self._running[uri]

    def forget(self, uri: str) -> None:
        """The document was closed: a request still waiting for it answers empty."""
        self._generation.pop(uri, None)


def is_superseded(error: asyncio.CancelledError) -> bool:
    return bool(error.args) and error.args[0] == SUPERSEDED
