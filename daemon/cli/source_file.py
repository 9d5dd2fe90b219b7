"""Read a source file named on the command line, and replace it atomically.
Binary, invalid UTF-8 and oversized files get one clear message each; a crash leaves old or new."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

DEFAULT_MAX_BYTES = 1024 * 1024
_SNIFF_BYTES = 8192


class InputError(ValueError):
    """The file cannot be used as input; the message says why."""


class FileTooLarge(InputError):
    """The file is over the size limit; it was not read."""

    def __init__(self, path: Path, size: int, limit: int) -> None:
        super().__init__(
            f"{path} is {describe_size(size)}; files over {describe_size(limit)} are not supported"
        )
        self.path = path
        self.size = size
        self.limit = limit


def describe_size(size: int) -> str:
    """``52,428,800 bytes (50.0 MiB)``: exact, and readable at a glance."""
    exact = f"{size:,} bytes"
    return f"{exact} ({size / 2**20:.1f} MiB)" if size >= 2**20 else exact


def read_source(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    try:
        if path.is_dir():
            raise InputError(f"{path} is a directory, not a file")
        size = path.stat().st_size
        if size > max_bytes:
            raise FileTooLarge(path, size, max_bytes)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)  # a file that grew since stat() is still cut off
        if len(data) > max_bytes:
            raise FileTooLarge(path, path.stat().st_size, max_bytes)
    except FileNotFoundError:
        raise InputError(f"{path} does not exist") from None
    except PermissionError:
        raise InputError(f"{path} cannot be read (permission denied)") from None
    except OSError as exc:
        raise InputError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise InputError(f"{path} looks like a binary file (it contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path} is not valid UTF-8 (byte {exc.start}, line {line}); convert it to UTF-8 first"
        ) from None


class WriteConflict(RuntimeError):
    """The file changed on disk after it was read; it was not overwritten."""


def write_atomically(path: Path, text: str, expected: str | None = None) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old or the new file, never a mix.

    The text goes to a temporary file in the same directory, is flushed and fsynced, gets the
    original's permission bits, and is renamed over the original (atomic on POSIX); the directory
    is fsynced so the rename survives a power loss. With ``expected``, the file must still hold
    that text, or nothing is written.
    """
    if expected is not None and path.read_bytes().decode("utf-8", "replace") != expected:
        raise WriteConflict(f"{path} changed on disk while assist worked on it; not written")
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".assist-tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
