"""GGUF header reading: metadata, skipped arrays, and clear errors on bad files."""

from __future__ import annotations

import struct

import pytest

from models.gguf import ArraySummary, GGUFError, read_header


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def kv_string(key: str, value: str) -> bytes:
    return gguf_string(key) + struct.pack("<I", 8) + gguf_string(value)


def kv_u32(key: str, value: int) -> bytes:
    return gguf_string(key) + struct.pack("<I", 4) + struct.pack("<I", value)


def kv_string_array(key: str, values: list[str]) -> bytes:
    body = b"".join(gguf_string(v) for v in values)
    return gguf_string(key) + struct.pack("<IIQ", 9, 8, len(values)) + body


def gguf_file(*kvs: bytes, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, 7, len(kvs)) + b"".join(kvs)


def test_reads_architecture_name_context_and_vocabulary_size(tmp_path):
    path = tmp_path / "m.gguf"
    tokens = [f"tok{i}" for i in range(1000)]
    path.write_bytes(
        gguf_file(
            kv_string("general.architecture", "qwen2"),
            kv_string("general.name", "Qwen2.5 Coder 0.5B"),
            kv_u32("qwen2.context_length", 32768),
            kv_string_array("tokenizer.ggml.tokens", tokens),
            kv_string_array("small.list", ["a", "b"]),
        )
    )
    header = read_header(path)
    assert header.version == 3 and header.tensor_count == 7
    assert header.architecture == "qwen2"
    assert header.name == "Qwen2.5 Coder 0.5B"
    assert header.context_length == 32768
    assert header.vocabulary_size == 1000
    assert isinstance(header.metadata["tokenizer.ggml.tokens"], ArraySummary)
    assert header.metadata["small.list"] == ["a", "b"]


def test_not_a_gguf_file(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(GGUFError, match="not a GGUF model"):
        read_header(path)


def test_truncated_file(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_file(kv_string("general.name", "x" * 100))[:60])
    with pytest.raises(GGUFError, match="truncated"):
        read_header(path)


def test_missing_and_tiny_files(tmp_path):
    with pytest.raises(GGUFError, match="cannot read"):
        read_header(tmp_path / "absent.gguf")
    tiny = tmp_path / "tiny.gguf"
    tiny.write_bytes(b"GGUF")
    with pytest.raises(GGUFError, match="too small"):
        read_header(tiny)


def test_unknown_version(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 99, 0, 0))
    with pytest.raises(GGUFError, match="version 99"):
        read_header(path)
