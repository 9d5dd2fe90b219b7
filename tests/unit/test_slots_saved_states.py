"""A slot about to be overwritten is saved to host memory, and a document that comes back is
restored from its saved state: checked against a stand-in for llama.cpp's per-stream memory,
with room for few states."""

from __future__ import annotations

import pytest

from daemon.engine.kv_disk import DiskStates
from daemon.engine.kv_states import SequenceStates
from daemon.engine.slots import Claim, Slots
from tests.unit.fake_streams import Streams, fake_streams

# Each saved state of a 200-token document costs 1,600 bytes (its KV here, and its tokens).
DOC_A = list(range(1000, 1200))
DOC_B = list(range(2000, 2200))
DOC_C = list(range(3000, 3200))


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> Streams:
    return fake_streams(monkeypatch, 2)


def one_slot(max_bytes: int, disk: DiskStates | None = None) -> Slots:
    """One slot, with host memory for ``max_bytes`` of saved states (and the disk tier)."""
    return Slots(
        None,  # type: ignore[arg-type]
        1,
        SequenceStates(max_bytes, disk),
        scratch=False,
        can_shift=True,
        max_gap=0,
        shared_cells=False,
    )


def run(slots: Slots, streams: Streams, document: list[int]) -> Claim:
    """A job for ``document``: its slot claimed, its prompt evaluated, the slot released."""
    claim = slots.claim([*document, 7])
    assert claim is not None
    slot = claim.slot
    assert streams.held[slot.seq] == tuple(document[: claim.plan.prefix])
    slot.tokens = [*document, 7]
    streams.held[slot.seq] = tuple(slot.tokens)
    slots.release(slot)
    return claim


def test_a_document_that_comes_back_is_restored_even_when_saving_the_slot_fills_the_room(
    streams,
):
    slots = one_slot(max_bytes=2_000)  # room for one state
    run(slots, streams, DOC_A)
    run(slots, streams, DOC_B)  # A's state saved
    back = run(slots, streams, DOC_A)  # B's state would evict A's, the one to restore
    assert back.source == "saved" and back.plan.prefix == len(DOC_A)
    assert len(slots.states) == 1


def test_room_is_made_by_evicting_the_least_recently_used_other_state(streams):
    slots = one_slot(max_bytes=4_000)  # room for two
    for document in (DOC_A, DOC_B, DOC_C):
        run(slots, streams, document)  # A's state saved, then B's
    # Back to A: C's state is saved, and B's (the oldest but for A's, being restored) goes.
    assert run(slots, streams, DOC_A).source == "saved"
    assert slots.states.stats.evicted == 1
    assert run(slots, streams, DOC_C).source == "saved"
    assert run(slots, streams, DOC_B).source == "cold"
