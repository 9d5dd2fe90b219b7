"""Small chunk packages on disk, and a catalogue entry pointing at them: a seam for assembly.

Each package is a real importable module directory (found on ``sys.path`` the same way as the
registry's chunk packages) holding one data file; the entry carries the real size and sha256 of
the chunks concatenated.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from models.catalog import CatalogModel, Chunk


def chunk_packages(
    root: Path, monkeypatch: pytest.MonkeyPatch, pieces: list[bytes], prefix: str = "fakechunk"
) -> CatalogModel:
    """Write one package per piece under ``root``, put ``root`` on sys.path, return the entry."""
    # Module names unique to this directory, so no test finds another test's packages.
    tag = hashlib.sha256(str(root).encode()).hexdigest()[:10]
    chunks = []
    for n, piece in enumerate(pieces, start=1):
        module = f"{prefix}_{tag}_part{n}"
        package = root / module
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(piece)
        chunks.append(Chunk(module, f"data/part{n:02d}.bin"))
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(pieces)
    return CatalogModel(
        name="tiny-test-model",
        title="Tiny test model",
        file_name="tiny-test-model.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        chunks=tuple(chunks),
        requirements=("tiny-test-model-part1==1.0", "tiny-test-model-part2==1.0"),
        prompt_format="plain",
        licence="Apache-2.0",
        licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        origin="a test",
    )
