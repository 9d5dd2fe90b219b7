"""A fingerprint of a model's weights: xxh3-128 of the whole file, remembered per file identity.
A restart does not hash again; a changed file (new weights, a re-quantisation) gets a new one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import xxhash

_BLOCK = 8 * 1024 * 1024


def _identity(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def hash_file(path: Path) -> str:
    digest = xxhash.xxh3_128()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def model_fingerprint(path: str | Path, memo_file: Path | None) -> str:
    """Return the weights' fingerprint, reusing a remembered one when the file is unchanged:
    ``memo_file`` is a small JSON file keyed by (path, size, mtime, inode)."""
    path = Path(path)
    identity = _identity(path)
    memo: dict[str, str] = {}
    if memo_file is not None:
        try:
            loaded = json.loads(memo_file.read_text())
            if isinstance(loaded, dict):
                memo = {str(k): str(v) for k, v in loaded.items()}
        except (OSError, ValueError):
            memo = {}
        if identity in memo:
            return memo[identity]
    value = hash_file(path)
    if memo_file is not None:
        memo[identity] = value
        _write_atomically(memo_file, json.dumps(memo, indent=1, sort_keys=True))
    return value


def _write_atomically(target: Path, text: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError:
        # The memo is an optimisation; a read-only cache directory only costs a re-hash.
        pass
