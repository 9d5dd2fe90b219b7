"""A stage's stream of events that ends in an outcome, read once the stream is over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """What a stage ended with: the last item of its stream."""

    value: R


class Staged(Generic[R]):
    """A stage's events, passed on as they come, and the outcome it ended with."""

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self._stream = stream
        self._outcome: Outcome[R] | None = None

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for item in self._stream:
            if isinstance(item, Outcome):
                self._outcome = item
            else:
                yield item

    @property
    def ended(self) -> bool:
        """Whether the stream ended in an outcome."""
        return self._outcome is not None

    @property
    def result(self) -> R:
        if self._outcome is None:
            raise RuntimeError("the stage ended without an outcome")
        return self._outcome.value
