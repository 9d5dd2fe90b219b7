"""The file of a saved KV state: written whole or not at all, read back only by its owner, with
its checksum holding; real files in a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from daemon.engine.kv_files import (
    HEADER_SIZE,
    BadStateFile,
    ForeignStateFile,
    StateOwner,
    read_head,
    read_state_file,
    write_state_file,
)

OWNER = StateOwner("f" * 32, 4096, "n_seq_max=9;type_k=1")
TOKENS = np.arange(100, 400, dtype=np.intc)
DATA = bytes(range(256)) * 40


def written(folder: Path) -> Path:
    return write_state_file(folder, OWNER, TOKENS, DATA)


def test_a_state_round_trips_and_its_tokens_read_without_its_data(tmp_path):
    path = written(tmp_path)
    assert path.name == OWNER.file_name(TOKENS) and path.parent == tmp_path
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left
    head = read_head(path)
    assert head.belongs_to(OWNER) and head.tokens.tolist() == TOKENS.tolist()
    assert head.file_size == path.stat().st_size == HEADER_SIZE + 4 * len(TOKENS) + len(DATA)
    tokens, data = read_state_file(path, OWNER)
    assert tokens.tolist() == TOKENS.tolist() and bytes(data) == DATA
    assert path.stat().st_mode & 0o077 == 0  # the tokens are a document's text: owner-only


def test_the_same_tokens_of_the_same_owner_have_the_same_name_and_others_another():
    assert OWNER.file_name(TOKENS) == OWNER.file_name(TOKENS.copy())
    assert OWNER.file_name(TOKENS) != OWNER.file_name(TOKENS[:-1])
    other = StateOwner(OWNER.fingerprint, 2048, OWNER.layout)
    assert other.file_name(TOKENS) != OWNER.file_name(TOKENS)


@pytest.mark.parametrize("at", [HEADER_SIZE - 5, HEADER_SIZE + 8, HEADER_SIZE + 1200 + 3000])
def test_a_flipped_byte_in_the_checksum_tokens_or_data_fails_the_checksum(tmp_path, at):
    path = written(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0x40
    path.write_bytes(raw)
    with pytest.raises(BadStateFile, match="checksum"):
        read_state_file(path, OWNER)


@pytest.mark.parametrize("keep", [10, HEADER_SIZE + 100, HEADER_SIZE + 1200 + 500])
def test_a_truncated_file_is_refused(tmp_path, keep):
    path = written(tmp_path)
    path.write_bytes(path.read_bytes()[:keep])
    with pytest.raises(BadStateFile):
        read_state_file(path, OWNER)


def test_bytes_after_the_data_are_refused(tmp_path):
    path = written(tmp_path)
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(BadStateFile, match="after"):
        read_state_file(path, OWNER)


def test_a_file_that_is_no_state_file_is_refused(tmp_path):
    path = tmp_path / "junk.kvstate"
    path.write_bytes(b"hello" * 100)
    with pytest.raises(BadStateFile, match="not a state file"):
        read_head(path)


@pytest.mark.parametrize(
    "owner",
    [
        StateOwner("e" * 32, OWNER.n_ctx, OWNER.layout),  # another model's weights
        StateOwner(OWNER.fingerprint, 2048, OWNER.layout),  # another n_ctx
        StateOwner(OWNER.fingerprint, OWNER.n_ctx, "n_seq_max=5;type_k=1"),  # other streams
    ],
)
def test_a_file_of_another_owner_is_not_read(tmp_path, owner):
    path = written(tmp_path)
    assert not read_head(path).belongs_to(owner)
    with pytest.raises(ForeignStateFile):
        read_state_file(path, owner)


def test_a_file_of_another_format_version_is_foreign_not_damaged(tmp_path):
    path = written(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[8] = 2  # the version, after the magic
    path.write_bytes(raw)
    with pytest.raises(ForeignStateFile):
        read_head(path)
    with pytest.raises(ForeignStateFile):
        read_state_file(path, OWNER)


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError):
        written(tmp_path)
    assert os.listdir(tmp_path) == []
