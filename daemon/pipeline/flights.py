"""Single flight: identical requests in flight share one generation, and all get its stream."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from functools import partial
from typing import Any

from daemon.engine.scheduler import Admission
from daemon.protocol import ErrorCode, ErrorEvent

log = logging.getLogger(__name__)

Stream = AsyncGenerator[Any, None]


class Follower:
    def __init__(self, flight: Flight, request_id: str | None) -> None:
        self.flight = flight
        self.request_id = request_id
        self.replaced = False

    def replace(self) -> None:
        self.replaced = True
        self.flight.wake()


# The first request starts the pipeline in a task of its own that records every event; each
# request, the first included, follows the recording from the start, then live. A follower that
# goes away only leaves; when the last one leaves the flight is cancelled, and with it the engine's
# job. A newer request for the same user and path replaces the older follower, which ends with an
# error event saying so. Only the request that starts a flight takes a place in the queue
# (join_or_start admits it atomically); the place is given back when the flight lands.
class Flight:
    def __init__(self, stream: Stream, on_done: Callable[[], None]) -> None:
        self.events: list[Any] = []
        self.done = False
        self.followers = 0
        self._changed = asyncio.Condition()
        self._waking: asyncio.Future[None] | None = None
        self._on_done = on_done
        self.task = asyncio.create_task(self._pump(stream))

    async def _pump(self, stream: Stream) -> None:
        try:
            async for event in stream:
                self.events.append(event)
                await self._notify()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the followers get one error event instead of a dead stream
            log.exception("pipeline failed")
            self.events.append(ErrorEvent(code=ErrorCode.INTERNAL, message=str(exc)))
        finally:
            self.done = True
            self._on_done()
            await stream.aclose()
            await self._notify()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _moved(self, follower: Follower, seen: int) -> bool:
        return seen < len(self.events) or self.done or follower.replaced

    def wake(self) -> None:
        self._waking = asyncio.ensure_future(self._notify())

    async def follow(self, follower: Follower) -> Stream:
        """The flight's events from the start, with the follower's own request id."""
        self.followers += 1
        seen = 0
        try:
            while True:
                while seen < len(self.events):
                    event = self.events[seen]
                    seen += 1
                    if follower.request_id and hasattr(event, "request_id"):
                        event = event.model_copy(update={"request_id": follower.request_id})
                    yield event
                if self.done:
                    return  # everything was sent: a replacement now changes nothing
                if follower.replaced:
                    yield ErrorEvent(
                        code=ErrorCode.REPLACED,
                        message="a newer request for the same document replaced this one",
                    )
                    return
                async with self._changed:
                    await self._changed.wait_for(partial(self._moved, follower, seen))
        finally:
            self.followers -= 1
            if self.followers == 0 and not self.done:
                self.task.cancel()


class FlightTable:
    """Flights by request key, and the latest follower of each document."""

    def __init__(self) -> None:
        self._flights: dict[str, Flight] = {}
        self._documents: dict[tuple[str, str], Follower] = {}
        self.joined = 0

    def find(self, key: str) -> Flight | None:
        flight = self._flights.get(key)
        return flight if flight is not None and not flight.done else None

    def start(self, key: str, stream: Stream, admission: Admission | None = None) -> Flight:
        def landed() -> None:
            self._flights.pop(key, None)
            if admission is not None:
                admission.release()

        flight = Flight(stream, landed)
        self._flights[key] = flight
        return flight

    def join_or_start(
        self,
        key: str,
        admit: Callable[[], Admission],
        start: Callable[[Admission], Stream],
        request_id: str,
        document: tuple[str, str] | None,
    ) -> Stream:
        """Follow the flight computing ``key``; when there is none, admit the request (or
        raise ``Busy``) and start one in the place it was given."""
        flight = self.find(key)
        if flight is None:
            admission = admit()
            try:
                stream = start(admission)
            except BaseException:
                admission.release()
                raise
            flight = self.start(key, stream, admission)
        else:
            self.joined += 1
        return self.follow(flight, request_id, document)

    def follow(
        self, flight: Flight, request_id: str | None, document: tuple[str, str] | None
    ) -> Stream:
        follower = Follower(flight, request_id)
        if document is not None:
            previous = self._documents.get(document)
            if previous is not None and previous.flight is not flight:
                previous.replace()
            self._documents[document] = follower
        return self._tracked(flight, follower, document)

    async def _tracked(
        self, flight: Flight, follower: Follower, document: tuple[str, str] | None
    ) -> Stream:
        try:
            async for event in flight.follow(follower):
                yield event
        finally:
            if document is not None and self._documents.get(document) is follower:
                del self._documents[document]

    def __len__(self) -> int:
        return len(self._flights)
