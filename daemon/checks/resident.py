"""A language's own parser kept running, asked about one text after another.
It is started once, so a check does not pay for its start (the JVM, node loading TypeScript).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

log = logging.getLogger(__name__)

# The first answer includes the start (the JVM compiles the checker's source in memory).
START_TIMEOUT_S = 30.0
ANSWER_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Answer:
    """What a resident checker said about one text."""

    ok: bool
    line: int | None = None  # 0-based
    column: int | None = None  # 0-based code points
    message: str | None = None


# Some checkers take a second or more to start (the JVM for javac, node loading the TypeScript
# compiler) and then parse a file in milliseconds, so each is started once, on first use, and kept.
# A request is ``<bytes>\n<text>`` on its stdin, its answer one JSON line on its stdout (``{"ok":
# true}``, or ``{"ok": false, "line": ..., "column": ..., "message": ...}``, or ``{"failed": ...}``
# when it could not check). One text at a time (a lock); a checker that does not answer in time, or
# answers with something that is not one of its answers, is stopped and started afresh on the next
# request; one that cannot start is not tried again. The text goes through a pipe: no file is
# written and no path a request names is opened.
class ResidentChecker:
    """One long-lived checker process. ``command`` gives the command line, or None when the
    machine lacks what it needs (then ``check`` answers None, as it does on any failure)."""

    def __init__(self, name: str, command: Callable[[], list[str] | None]) -> None:
        self.name = name
        self._command = command
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._started = False  # the first answer of a process gets the start's time
        self._broken = False  # it could not start: not tried again
        atexit.register(self.close)

    def available(self) -> bool:
        """Whether it can be asked (it is running, or it has what it needs to start)."""
        if self._broken:
            return False
        return self._process is not None or self._command() is not None

    def check(self, text: str) -> Answer | None:
        """The checker's answer about ``text``, or None when it could not give one."""
        found = self.ask(text)
        return None if found is None else _answer(found, text)

    def ask(self, text: str) -> dict[str, Any] | None:
        """The checker's answer about ``text`` as it wrote it (one JSON object), or None when
        it could not give one."""
        with self._lock:
            process = self._running()
            if process is None:
                return None
            data = text.encode("utf-8", errors="surrogatepass")
            timeout = ANSWER_TIMEOUT_S if self._started else START_TIMEOUT_S
            reply = _exchange(process, str(len(data)).encode() + b"\n" + data, timeout)
            if reply is None:
                log.warning("%s did not answer in %.0f s; it is restarted", self.name, timeout)
                self._stop()
                return None
            self._started = True
            try:
                found: Any = json.loads(reply)
            except ValueError:
                found = None
            if not isinstance(found, dict):
                # Not one of its answers (a stray line of output): the requests and answers may
                # be out of step from here on, so it is started afresh on the next request.
                log.warning("%s answered %.80r; it is restarted", self.name, reply)
                self._stop()
                return None
            return None if "failed" in found else found

    def close(self) -> None:
        """Stop the process (it ends by itself when its stdin closes, too)."""
        with self._lock:
            self._stop()

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._process = None
        if self._broken:
            return None
        command = self._command()
        if command is None:
            return None
        try:
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError as exc:
            log.warning("%s could not start: %s", self.name, exc)
            self._broken = True
            return None
        self._started = False
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


def _exchange(process: subprocess.Popen[bytes], request: bytes, timeout: float) -> bytes | None:
    """Write ``request``, read one line back; None when that fails or takes over ``timeout``."""
    stdin, stdout = process.stdin, process.stdout
    if stdin is None or stdout is None:
        return None
    got: list[bytes] = []
    reader = threading.Thread(target=_read_line, args=(stdout, got), daemon=True)
    try:
        stdin.write(request)
        stdin.flush()
    except OSError:
        return None
    reader.start()
    reader.join(timeout)
    if reader.is_alive() or not got or not got[0].endswith(b"\n"):
        return None
    return got[0]


def _read_line(stream: IO[bytes], into: list[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        into.append(stream.readline())


def _answer(found: dict[str, Any], text: str) -> Answer | None:
    if "failed" in found or not isinstance(found.get("ok"), bool):
        return None
    if found["ok"]:
        return Answer(True)
    line = found.get("line") if isinstance(found.get("line"), int) else None
    column = found.get("column") if isinstance(found.get("column"), int) else None
    offset = found.get("offset")
    if isinstance(offset, int) and 0 <= offset <= len(text):
        line = text.count("\n", 0, offset)
        column = offset - (text.rfind("\n", 0, offset) + 1)
    message = str(found.get("message") or "it rejects the file")
    return Answer(False, line, column, message)
