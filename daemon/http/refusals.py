"""The metrics record of a request refused before its answer starts (413, 422, 429, busy)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from daemon.errors import AssistError
from daemon.observe.metrics import RequestRecord
from daemon.pipeline.runtime import Runtime
from daemon.protocol import ErrorCode


@contextlib.contextmanager
def refusal_recorded(runtime: Runtime, task: str, user: str) -> Iterator[None]:
    """Record a typed refusal raised in the block as ``busy`` or ``refused``, and raise it on."""
    try:
        yield
    except AssistError as exc:
        busy = exc.code in (ErrorCode.BUSY, ErrorCode.RATE_LIMITED)
        record = RequestRecord(
            task, None, None, user, "busy" if busy else "refused", error_code=exc.code.value
        )
        runtime.observe(record)
        raise
