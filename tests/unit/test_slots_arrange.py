"""Slots of the jobs decoded together are moved into consecutive KV streams, each slot
keeping what it holds: checked against a stand-in for llama.cpp's per-stream memory."""

from __future__ import annotations

import pytest

from daemon.engine.kv_states import SequenceStates
from daemon.engine.slots import Slots
from tests.unit.fake_streams import Streams, fake_streams


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> Streams:
    return fake_streams(monkeypatch, 9)


def eight_slots(*, spare: bool = True, unified: bool = False) -> Slots:
    return Slots(
        None,  # type: ignore[arg-type]
        8,
        SequenceStates(0),
        scratch=unified,
        can_shift=True,
        max_gap=0,
        shared_cells=unified,
        spare=spare,
    )


def make_slots(streams: Streams, contents: dict[int, tuple[int, ...]], spare: bool = True):
    slots = eight_slots(spare=spare)
    for seq, tokens in contents.items():
        slots.slots[seq].tokens = list(tokens)
        streams.held[seq] = tokens
    return slots


def consistent(slots: Slots, streams: Streams) -> bool:
    """Every slot's stream holds that slot's tokens, and the spare holds nothing."""
    ok = all(streams.held[slot.seq] == tuple(slot.tokens) for slot in slots.slots)
    return ok and (slots.spare is None or streams.held[slots.spare] == ())


def docs(count: int) -> dict[int, tuple[int, ...]]:
    return {seq: tuple(range(100 * seq, 100 * seq + 5 + seq)) for seq in range(count)}


def test_consecutive_slots_are_left_alone(streams):
    slots = make_slots(streams, docs(8))
    decoded = [slots.slots[3], slots.slots[2], slots.slots[4]]
    assert slots.arrange(decoded) == 0
    assert streams.copies == 0


def test_scattered_slots_end_consecutive_and_keep_their_tokens(streams):
    slots = make_slots(streams, docs(8))
    decoded = [slots.slots[0], slots.slots[2], slots.slots[3], slots.slots[7]]
    before = {id(slot): list(slot.tokens) for slot in slots.slots}
    swaps = slots.arrange(decoded)
    seqs = sorted(slot.seq for slot in decoded)
    assert seqs == list(range(seqs[0], seqs[0] + 4))
    assert swaps == 1  # the window 0..3 already holds three of them: one move
    assert all(before[id(slot)] == slot.tokens for slot in slots.slots)
    assert consistent(slots, streams)
    assert sorted(slot.seq for slot in slots.slots) == list(range(8))
    assert slots.stats.swapped == swaps


def test_an_empty_stream_takes_a_slot_with_one_copy(streams):
    contents = docs(8)
    contents[1] = ()
    slots = make_slots(streams, contents)
    decoded = [slots.slots[0], slots.slots[5]]
    assert slots.arrange(decoded) == 1
    assert streams.copies == 1
    assert {slot.seq for slot in decoded} == {0, 1}
    assert consistent(slots, streams)


def test_without_a_spare_only_empty_streams_are_used(streams):
    contents = docs(8)
    contents[6] = ()
    slots = make_slots(streams, contents, spare=False)
    # 5 and 7 meet through the empty stream 6: one copy, no spare needed.
    assert slots.arrange([slots.slots[5], slots.slots[7]]) == 1
    assert {slots.slots[5].seq, slots.slots[7].seq} == {5, 6}
    assert consistent(slots, streams)
    # 0 and 3 both hold something, as do their neighbours: without a spare nothing moves.
    copies = streams.copies
    assert slots.arrange([slots.slots[0], slots.slots[3]]) == 0
    assert streams.copies == copies
    assert (slots.slots[0].seq, slots.slots[3].seq) == (0, 3)
    assert consistent(slots, streams)


def test_a_unified_cache_is_never_rearranged(streams):
    slots = eight_slots(unified=True)
    assert slots.spare is None
    assert slots.arrange([slots.slots[0], slots.slots[5]]) == 0
    assert streams.copies == 0
