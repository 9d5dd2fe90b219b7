"""The disk tier of saved KV states: a folder found again at start, read back only when whole and
this model's, bounded by bytes with the least recently used files removed first, and shared by
daemons; real files in a temporary folder."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import daemon.engine.kv_disk
from daemon.engine.kv_disk import DiskStates
from daemon.engine.kv_files import HEADER_SIZE, StateOwner, write_state_file

OWNER = StateOwner("a" * 32, 4096, "n_seq_max=9")
STRANGER = StateOwner("b" * 32, 4096, "n_seq_max=9")
DATA = b"\x01" * 10_000
FILE = HEADER_SIZE + 4 * 200 + len(DATA)  # one state's file


def doc(start: int, n: int = 200) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.intc)


def stored(disk: DiskStates, tokens: np.ndarray) -> DiskStates:
    assert disk.put(tokens, DATA)
    disk.flush()
    return disk


def age(path: Path, seconds_ago: float) -> None:
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


def test_a_state_written_is_found_by_the_next_daemon_and_read_back(tmp_path):
    first = stored(DiskStates(tmp_path, OWNER, 10 * FILE), doc(1000))
    first.close()
    assert first.stats.written == 1
    later = DiskStates(tmp_path, OWNER, 10 * FILE)
    prompt = np.concatenate([doc(1000)[:150], doc(5000, 50)])
    name, shared = later.best(prompt)
    assert name is not None and shared == 150
    assert len(later) == 1 and later.stored_bytes == FILE
    loaded = later.load(name)
    assert loaded is not None
    assert loaded[0].tolist() == doc(1000).tolist() and bytes(loaded[1]) == DATA


def test_a_corrupt_file_is_removed_when_read_back_and_never_given_out(tmp_path):
    disk = stored(DiskStates(tmp_path, OWNER, 10 * FILE), doc(1000))
    name, _ = disk.best(doc(1000))
    assert name is not None
    path = tmp_path / name
    raw = bytearray(path.read_bytes())
    raw[-100] ^= 0xFF  # in the KV data: the header and tokens still read
    path.write_bytes(raw)
    later = DiskStates(tmp_path, OWNER, 10 * FILE)
    assert later.best(doc(1000))[0] == name  # indexed from its header and tokens
    assert later.load(name) is None
    assert not path.exists() and later.stats.rejected == 1
    assert later.best(doc(1000)) == (None, 0)


def test_a_foreign_file_is_never_indexed_nor_loaded_and_is_left_for_its_owner(tmp_path):
    theirs = write_state_file(tmp_path, STRANGER, doc(1000), DATA)
    for owner in (
        OWNER,
        StateOwner(STRANGER.fingerprint, 2048, STRANGER.layout),  # the same model, another n_ctx
    ):
        disk = DiskStates(tmp_path, owner, 10 * FILE)
        assert disk.best(doc(1000)) == (None, 0) and len(disk) == 0
    assert theirs.exists()  # another daemon on the folder may be using it


def test_a_file_that_turns_out_foreign_when_read_back_is_removed(tmp_path):
    disk = stored(DiskStates(tmp_path, OWNER, 10 * FILE), doc(1000))
    name, _ = disk.best(doc(1000))
    assert name is not None
    # Replaced behind the index's back by another model's state of the same tokens.
    write_state_file(tmp_path, STRANGER, doc(1000), DATA).rename(tmp_path / name)
    assert disk.load(name) is None
    assert not (tmp_path / name).exists() and disk.stats.rejected == 1


def test_a_truncated_file_is_removed_when_the_folder_is_read(tmp_path):
    disk = stored(DiskStates(tmp_path, OWNER, 10 * FILE), doc(1000))
    (path,) = tmp_path.glob("*.kvstate")
    path.write_bytes(path.read_bytes()[: HEADER_SIZE + 10])  # its tokens cut short
    DiskStates(tmp_path, OWNER, 10 * FILE)
    assert not path.exists()
    disk.refresh()
    assert disk.best(doc(1000)) == (None, 0)


def test_the_least_recently_used_files_go_first_whoever_wrote_them(tmp_path):
    foreign = write_state_file(tmp_path, STRANGER, doc(9000), DATA)
    age(foreign, 300)
    disk = DiskStates(tmp_path, OWNER, 3 * FILE)
    for i, start in enumerate((1000, 2000)):
        stored(disk, doc(start))
        age(tmp_path / OWNER.file_name(doc(start)), 200 - 100 * i)
    a, b = (OWNER.file_name(doc(s)) for s in (1000, 2000))
    assert disk.load(a) is not None  # used: now the most recent
    stored(disk, doc(3000))  # room for three files: the foreign one, the oldest, goes
    assert not foreign.exists() and (tmp_path / b).exists()
    stored(disk, doc(4000))  # then B, used least recently
    assert not (tmp_path / b).exists() and (tmp_path / a).exists()
    assert sorted(p.name for p in tmp_path.glob("*.kvstate")) == sorted(
        OWNER.file_name(doc(s)) for s in (1000, 3000, 4000)
    )
    assert disk.stats.removed == 2 and len(disk) == 3
    assert disk.best(doc(2000)) == (None, 0)


def test_a_smaller_bound_is_enforced_at_start(tmp_path):
    disk = DiskStates(tmp_path, OWNER, 10 * FILE)
    for start in (1000, 2000, 3000):
        stored(disk, doc(start))
    age(tmp_path / OWNER.file_name(doc(3000)), 100)
    smaller = DiskStates(tmp_path, OWNER, 2 * FILE)
    assert len(smaller) == 2 and smaller.best(doc(3000)) == (None, 0)


def test_a_state_larger_than_the_bound_is_not_written(tmp_path):
    disk = DiskStates(tmp_path, OWNER, FILE - 1)
    assert not disk.put(doc(1000), DATA)
    assert list(tmp_path.iterdir()) == []


def test_a_prefix_of_a_file_is_not_written_and_a_longer_state_replaces_its_prefix(tmp_path):
    disk = stored(DiskStates(tmp_path, OWNER, 10 * FILE), doc(1000))
    assert disk.put(doc(1000, 150), DATA)  # covered by the 200-token file
    disk.flush()
    assert disk.stats.written == 1
    stored(disk, doc(1000, 300))
    assert [p.name for p in tmp_path.glob("*.kvstate")] == [OWNER.file_name(doc(1000, 300))]
    assert disk.best(doc(1000, 300))[1] == 300


def test_daemons_sharing_the_folder_see_each_others_files_and_removals(tmp_path):
    one = DiskStates(tmp_path, OWNER, 10 * FILE)
    other = DiskStates(tmp_path, OWNER, 10 * FILE)
    stored(one, doc(1000))
    other.refresh()
    name, shared = other.best(doc(1000))
    assert name is not None and shared == 200
    (tmp_path / name).unlink()  # removed by the first (its bound) while indexed here
    assert other.load(name) is None and other.stats.rejected == 0
    assert other.best(doc(1000)) == (None, 0)


def test_a_write_that_fails_leaves_the_state_out_and_the_daemon_going(tmp_path, monkeypatch):
    def full_disk(*args: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(daemon.engine.kv_disk, "write_state_file", full_disk)
    disk = DiskStates(tmp_path, OWNER, 10 * FILE)
    assert disk.put(doc(1000), DATA)
    disk.flush()
    assert disk.stats.failed == 1 and disk.best(doc(1000)) == (None, 0)


def test_a_folder_that_cannot_be_made_turns_the_tier_off(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    disk = DiskStates(blocker / "kv", OWNER, 10 * FILE)
    assert not disk.usable and not disk.put(doc(1000), DATA)


def test_only_stale_temporary_files_are_removed_at_start(tmp_path):
    stale, fresh = tmp_path / ".a.tmp", tmp_path / ".b.tmp"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")  # another daemon may be writing it now
    age(stale, 2 * 3600)
    DiskStates(tmp_path, OWNER, 10 * FILE)
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("wait", [False, True])
def test_states_waiting_for_the_writer_are_bounded_unless_at_shutdown(tmp_path, monkeypatch, wait):
    monkeypatch.setattr(daemon.engine.kv_disk, "PENDING_BYTES", len(DATA) + 10)
    gate = threading.Event()
    real = daemon.engine.kv_disk.write_state_file

    def slow(*args):  # type: ignore[no-untyped-def]
        gate.wait(10)
        return real(*args)

    monkeypatch.setattr(daemon.engine.kv_disk, "write_state_file", slow)
    disk = DiskStates(tmp_path, OWNER, 10 * FILE)
    assert disk.put(doc(1000), DATA)
    # While waiting, the first state reads back from memory.
    name, _ = disk.best(doc(1000))
    assert name is not None
    loaded = disk.load(name)
    assert loaded is not None and bytes(loaded[1]) == DATA
    assert disk.put(doc(2000), DATA, wait=wait) == wait
    gate.set()
    disk.close()
    assert disk.stats.written == (2 if wait else 1)
