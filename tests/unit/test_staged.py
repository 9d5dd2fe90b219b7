"""A stage's stream: its events passed on, its outcome read at its end."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from daemon.pipeline.staged import Outcome, Staged


async def _stage(events: list[str], outcome: int | None) -> AsyncGenerator[Any, None]:
    for event in events:
        yield event
    if outcome is not None:
        yield Outcome(outcome)


async def test_events_pass_through_in_order_and_the_outcome_is_kept():
    staged: Staged[int] = Staged(_stage(["a", "b"], 7))
    assert [event async for event in staged] == ["a", "b"]
    assert staged.ended and staged.result == 7


async def test_a_stream_without_an_outcome_says_so():
    staged: Staged[int] = Staged(_stage(["a"], None))
    assert [event async for event in staged] == ["a"]
    assert not staged.ended
    with pytest.raises(RuntimeError, match="without an outcome"):
        _ = staged.result


async def test_an_outcome_is_not_an_event_even_in_the_middle():
    async def stream() -> AsyncGenerator[Any, None]:
        yield Outcome(1)
        yield "after"

    staged: Staged[int] = Staged(stream())
    assert [event async for event in staged] == ["after"]
    assert staged.result == 1
