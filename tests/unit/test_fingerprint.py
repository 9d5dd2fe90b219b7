"""The weights' fingerprint changes with the weights and is remembered per file identity."""

from __future__ import annotations

import json
import os

from models.fingerprint import model_fingerprint


def test_fingerprint_changes_when_the_weights_change(tmp_path):
    model = tmp_path / "m.gguf"
    memo = tmp_path / "memo.json"
    model.write_bytes(b"GGUF" + b"\x01" * 4096)
    first = model_fingerprint(model, memo)
    assert model_fingerprint(model, memo) == first
    model.write_bytes(b"GGUF" + b"\x01" * 4095 + b"\x02")
    os.utime(model, ns=(1, 1))  # even with an old mtime the identity (size/mtime/inode) differs
    assert model_fingerprint(model, memo) != first


def test_memo_is_used_for_an_unchanged_file(tmp_path):
    model = tmp_path / "m.gguf"
    memo = tmp_path / "memo.json"
    model.write_bytes(b"weights")
    value = model_fingerprint(model, memo)
    remembered = json.loads(memo.read_text())
    # Planting a different remembered value proves the memo is consulted.
    json_key = next(iter(remembered))
    memo.write_text(json.dumps({json_key: "remembered"}))
    assert model_fingerprint(model, memo) == "remembered"
    assert value != "remembered"


def test_unreadable_memo_is_ignored(tmp_path):
    model = tmp_path / "m.gguf"
    memo = tmp_path / "memo.json"
    model.write_bytes(b"weights")
    memo.write_text("{not json")
    assert len(model_fingerprint(model, memo)) == 32
