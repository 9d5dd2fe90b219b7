"""A drop-in request through the completion pipeline, answered as SSE or one JSON body."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from fastapi import Response
from fastapi.responses import JSONResponse, StreamingResponse

from daemon.errors import AssistError
from daemon.http import errors
from daemon.http.assembly import Daemon
from daemon.http.dropin import SSE, Answer, sse, verified_pieces
from daemon.http.ndjson import observed
from daemon.http.refusals import refusal_recorded
from daemon.observe.metrics import RequestRecord
from daemon.protocol import CompleteRequest


async def drop_in(
    daemon: Daemon, req: CompleteRequest, stops: list[str], user: str, *, first_line: bool = False
) -> tuple[Answer, AsyncGenerator[str, None]]:
    """A drop-in protocol's request, read and translated, through the completion pipeline: its
    answer, filled as the verified pieces are read. ``first_line``: the client's time limit
    takes the first line of an answer still being written (``CompletionPipeline.start``)."""
    with refusal_recorded(daemon.runtime, "complete", user):
        events = await daemon.completions.start(req, user, first_line=first_line)
    record = RequestRecord("complete", req.language, req.path, user, "cancelled")
    answer = Answer(stops=stops)
    return answer, verified_pieces(observed(events, record, daemon.runtime.metrics), answer)


async def in_workspace(daemon: Daemon, req: CompleteRequest, names: list[str]) -> CompleteRequest:
    """A drop-in request with the operator's workspace profile, when it has none and the files
    it names lie in that folder (``served_workspace``)."""
    if daemon.workspace is None:
        return req
    return await daemon.workspace.profiled(req, names)


def sse_stream(
    pieces: AsyncGenerator[str, None],
    answer: Answer,
    chunk: Callable[[str], Any],
    last: Callable[[], list[Any]],
) -> StreamingResponse:
    """The answer as server-sent events: a ``chunk`` of each verified piece, then the ``last``
    events, or the error the answer ended in."""

    async def events() -> AsyncIterator[bytes]:
        try:
            async for piece in pieces:
                yield sse(chunk(piece))
            if answer.error is not None:
                yield sse({"error": answer.error.model_dump(mode="json")})
            else:
                for item in last():
                    yield sse(item)
        except AssistError as exc:
            yield sse({"error": exc.event().model_dump(mode="json")})
        finally:
            await pieces.aclose()

    return StreamingResponse(events(), media_type=SSE)


async def whole(
    pieces: AsyncGenerator[str, None], answer: Answer, body: Callable[[], dict[str, Any]]
) -> Response:
    """A drop-in answer that is not streamed: read to its end, then ``body``, or the error it
    ended in with its status."""
    async for _ in pieces:
        pass
    return whole_answer(answer, body)


def whole_answer(answer: Answer, body: Callable[[], Any]) -> Response:
    """``body`` of an answer read whole, or the error it ended in with its status."""
    if answer.error is not None:
        return errors.error_response(answer.error.code, answer.error.message)
    return JSONResponse(body())
