"""Reading a document's whole window in the background after a request had to use less.
The model keeps what it read, so the document's next request finds the whole window evaluated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable, Sequence

from daemon.engine.scheduler import Admission, Priority
from daemon.errors import AssistError, Busy
from daemon.pipeline.backend import Backend, budget
from daemon.tasks import BackgroundTasks

# A warm-up that has not finished reading by then gives up (the document has moved on).
WARM_DEADLINE_S = 60.0
# How long a warm-up waits for the model to become idle (other warm-ups included): tries, and
# the wait between them.
ADMIT_TRIES = 300
ADMIT_WAIT_S = 0.1


class WindowWarmer:
    """Whole windows read in the background, one warm-up per document.

    On a slow machine a cold prompt can take longer to read than a request may last. Such a
    request answers from a shorter window that fits its time, and the whole window is then read
    here at background priority while the programmer reads the answer: it waits behind
    everything a user is waiting for and is refused when the model is busy. A newer warm-up of a
    document replaces the older, which keeps what it had read for the newer to reuse."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.tasks = BackgroundTasks("window warm-up")
        self._running: dict[Hashable, tuple[tuple[int, ...], asyncio.Task[None]]] = {}
        self.started = 0
        self.finished = 0

    def warm(self, document: Hashable, tokens: Sequence[int], user: str) -> bool:
        """Read ``tokens`` into the model in the background for ``document`` once the model
        is idle; False when the same window is being read already."""
        wanted = tuple(tokens)
        current = self._running.get(document)
        if current is not None and not current[1].done():
            if current[0] == wanted:
                return False
            current[1].cancel()
        task = self.tasks.start(self._read(wanted, user))
        self._running[document] = (wanted, task)
        task.add_done_callback(lambda _: self._forget(document, task))
        return True

    def _forget(self, document: Hashable, task: asyncio.Task[None]) -> None:
        current = self._running.get(document)
        if current is not None and current[1] is task:
            del self._running[document]

    async def _admit(self, user: str) -> Admission | None:
        """A background place, once the request that asked for this warm-up has given its
        own back and the model is idle; None when it stays busy."""
        for _ in range(ADMIT_TRIES):
            try:
                return self.backend.admit(Priority.BACKGROUND, user)
            except Busy:
                await asyncio.sleep(ADMIT_WAIT_S)
        return None

    async def _read(self, tokens: tuple[int, ...], user: str) -> None:
        admission = await self._admit(user)
        if admission is None:
            return
        self.started += 1
        try:
            limits = budget(0, time.perf_counter() + WARM_DEADLINE_S, 0.0)
            relay = self.backend.run(tokens, limits, admission=admission, stage="warm")
            async for _ in relay:
                pass
            self.finished += relay.result.complete
        except AssistError:
            pass  # a warm-up is only ever an optimisation
        finally:
            admission.release()

    def cancel_all(self) -> None:
        self.tasks.cancel_all()
