"""What every command shares on the way out: exit statuses, error lines, JSON printing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

# Exit status: 0 success, 1 the daemon or the model failed (for fix: no verified fix found), 2 bad
# usage or unreadable input, 141 (128 + SIGPIPE, as a shell reports it) the output pipe was closed
# before the command was done; then the command exits quietly (``assist fix --json | head -1``).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def err(message: str) -> None:
    """One line on stderr, ``assist: message``."""
    print(f"assist: {message}", file=sys.stderr)


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def exit_after_broken_pipe() -> int:
    """After a write to a closed pipe: silence stdout and stderr, return EXIT_BROKEN_PIPE.

    Pointing both at /dev/null makes the interpreter's final flush of what is still buffered
    succeed, instead of printing a second BrokenPipeError as it exits.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            # A stream replaced by something without a descriptor (a test's capture) is left.
            with contextlib.suppress(AttributeError, OSError, ValueError):
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)
    return EXIT_BROKEN_PIPE


def console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A rich console for the CLI's output, on stdout or stderr.

    rich ends the process with status 1 on a closed pipe; this one lets the BrokenPipeError
    reach the entry point instead, so every command exits the same way.
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(stderr=stderr, width=width)
