"""Answers as NDJSON streams: one event a line, each request's metrics record filled from them.
A failure after the stream started ends it with one ``error`` event (the status is already sent).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from daemon.errors import AssistError
from daemon.observe.metrics import MetricsRecorder, RequestRecord
from daemon.protocol import (
    DoneEvent,
    ErrorCode,
    ErrorEvent,
    StageEvent,
    StartEvent,
    encode_event,
)

log = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"


def observe(record: RequestRecord, event: Any) -> None:
    """Fill a request's metrics record from the events it streams."""
    if isinstance(event, StartEvent):
        record.request_id = event.request_id
        record.route = event.route
        record.language = event.language or record.language
    elif isinstance(event, StageEvent):
        record.stages[event.stage] = event.elapsed_ms
    elif isinstance(event, DoneEvent):
        t = event.timings
        record.outcome = "done"
        record.finish_reason = event.finish_reason
        record.cached = event.cached
        record.cache_match = event.cache_match or ("exact" if event.cached else None)
        record.total_ms, record.first_token_ms = t.total_ms, t.first_token_ms
        record.prompt_ms, record.queue_ms = t.prompt_ms, t.queue_ms
        record.tokens, record.prompt_tokens = event.tokens, event.prompt_tokens
        record.verified, record.changed = event.verified, event.changed
        record.checked, record.request_id = event.checked, event.request_id
        record.route = event.route or record.route
    elif isinstance(event, ErrorEvent):
        busy = event.code in (ErrorCode.REPLACED, ErrorCode.BUSY)
        record.outcome = event.code.value if busy else "error"
        record.error_code = event.code.value


async def ndjson(
    events: AsyncGenerator[Any, None],
    record: RequestRecord | None = None,
    recorder: MetricsRecorder | None = None,
) -> AsyncIterator[bytes]:
    """One line per event; a failure mid-stream ends the stream with one error event (its code
    from the typed error, ``internal`` for anything else). The request's metrics record is
    handed over once the stream has ended, however it ended."""
    try:
        async for event in events:
            if record is not None:
                observe(record, event)
            yield encode_event(event)
    except AssistError as exc:
        if record is not None:
            record.outcome, record.error_code = "error", exc.code.value
        yield encode_event(exc.event())
    except Exception as exc:
        log.exception("stream failed")
        if record is not None:
            record.outcome, record.error_code = "error", ErrorCode.INTERNAL.value
        yield encode_event(ErrorEvent(code=ErrorCode.INTERNAL, message=str(exc)))
    finally:
        await events.aclose()
        if record is not None and recorder is not None:
            recorder.record(record)


async def observed(
    events: AsyncGenerator[Any, None],
    record: RequestRecord,
    recorder: MetricsRecorder | None,
) -> AsyncGenerator[Any, None]:
    """The events as they are, each filling the request's metrics record, which is handed
    over once they have ended, however they ended (for answers in other shapes than NDJSON)."""
    try:
        async for event in events:
            observe(record, event)
            yield event
    except AssistError as exc:
        record.outcome, record.error_code = "error", exc.code.value
        raise
    finally:
        await events.aclose()
        if recorder is not None:
            recorder.record(record)
