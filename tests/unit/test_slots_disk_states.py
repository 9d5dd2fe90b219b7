"""Saved KV states beyond host memory and across restarts: a state evicted from host memory goes
to the disk tier, every state and held document goes there at shutdown, and a document that
comes back after a restart is restored from its file (a corrupt one is removed and the prompt
evaluated); checked against a stand-in for llama.cpp's per-stream memory and real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.engine.kv_disk import DiskStates
from daemon.engine.kv_files import StateOwner
from daemon.engine.slots import Slots
from tests.unit.fake_streams import Streams, fake_streams
from tests.unit.test_slots_saved_states import DOC_A, DOC_B, DOC_C, one_slot, run

OWNER = StateOwner("c" * 32, 4096, "n_seq_max=2")


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> Streams:
    return fake_streams(monkeypatch, 2)


def daemon_slots(folder: Path, memory_bytes: int) -> Slots:
    """One slot, host memory for ``memory_bytes`` of states, and the disk tier in ``folder``."""
    return one_slot(memory_bytes, DiskStates(folder, OWNER, 1024 * 1024))


def shut_down(slots: Slots) -> None:
    slots.states.persist(None, slots.held())  # type: ignore[arg-type]
    slots.clear()


def test_a_state_evicted_from_host_memory_is_restored_from_disk(streams, tmp_path):
    slots = daemon_slots(tmp_path, memory_bytes=2_000)  # room for one state in memory
    run(slots, streams, DOC_A)
    run(slots, streams, DOC_B)  # A saved in memory
    run(slots, streams, DOC_C)  # B saved: A goes to disk
    disk = slots.states.disk
    assert disk is not None
    disk.flush()
    assert len(slots.states) == 1 and len(disk) == 1
    back = run(slots, streams, DOC_A)
    assert back.source == "saved" and back.plan.prefix == len(DOC_A)
    assert slots.states.stats.disk_restored == 1


def test_after_a_restart_a_document_seen_before_is_restored_from_disk(streams, tmp_path):
    slots = daemon_slots(tmp_path, memory_bytes=4_000)
    run(slots, streams, DOC_A)
    run(slots, streams, DOC_B)  # A in host memory, B held in the slot
    shut_down(slots)
    assert len(list(tmp_path.glob("*.kvstate"))) == 2
    for document in (DOC_A, DOC_B):
        restarted = daemon_slots(tmp_path, memory_bytes=4_000)
        back = run(restarted, streams, document)
        assert back.source == "saved" and back.plan.prefix == len(document)
        assert restarted.states.stats.disk_tokens_restored == len(document) + 1
        restarted.clear()


def test_a_corrupt_file_is_removed_and_the_prompt_evaluated(streams, tmp_path):
    slots = daemon_slots(tmp_path, memory_bytes=4_000)
    run(slots, streams, DOC_A)
    shut_down(slots)
    (path,) = tmp_path.glob("*.kvstate")
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    path.write_bytes(raw)
    restarted = daemon_slots(tmp_path, memory_bytes=4_000)
    back = run(restarted, streams, DOC_A)
    assert back.source == "cold" and back.plan.prefix == 0
    assert not path.exists()
    disk = restarted.states.disk
    assert disk is not None and disk.stats.rejected == 1


def test_without_host_memory_states_go_straight_to_disk(streams, tmp_path):
    slots = daemon_slots(tmp_path, memory_bytes=0)
    run(slots, streams, DOC_A)
    run(slots, streams, DOC_B)  # A written to disk at once
    disk = slots.states.disk
    assert disk is not None
    disk.flush()
    assert len(slots.states) == 0 and len(disk) == 1
    assert run(slots, streams, DOC_A).source == "saved"


def test_a_sequence_whose_cells_differ_from_its_tokens_is_not_written(streams, tmp_path):
    slots = daemon_slots(tmp_path, memory_bytes=4_000)
    run(slots, streams, DOC_A)
    streams.held[0] = streams.held[0][:50]  # the slot's tokens no longer describe its cells
    shut_down(slots)
    assert list(tmp_path.glob("*.kvstate")) == []
