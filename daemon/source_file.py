"""Read a source file named on the command line, refusing what is not editable text.

Binary files, invalid UTF-8 and files over the size limit get one clear message each (the CLI
turns it into exit status 2); the file itself is only ever read here.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_MAX_BYTES = 1024 * 1024
_SNIFF_BYTES = 8192


class InputError(ValueError):
    """The file cannot be used as input; the message says why."""


def read_source(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    try:
        if path.is_dir():
            raise InputError(f"{path} is a directory, not a file")
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(
                f"{path} is {size} bytes; files over {max_bytes} bytes are not supported"
            )
        data = path.read_bytes()
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
