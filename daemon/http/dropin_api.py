"""The drop-in protocols' endpoints: llama.cpp server's ``/infill`` and OpenAI's API.
OpenAI's ``/v1/completions`` and ``/v1/models``; the translation is ``daemon.http.dropin``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from daemon.http.assembly import Daemon
from daemon.http.bodies import read_request
from daemon.http.dependencies import LimitedUser, ServedParts
from daemon.http.dropin import (
    CompletionsRequest,
    InfillRequest,
    answered_in_time,
    choices,
    completion_id,
    completions_body,
    completions_complete,
    finish_reason,
    infill_body,
    infill_complete,
    warm_up_body,
)
from daemon.http.dropin_replies import drop_in, in_workspace, sse_stream, whole, whole_answer
from daemon.http.refusals import refusal_recorded
from daemon.protocol import CompleteRequest

router = APIRouter()


@router.post("/infill")
async def infill(request: Request, user: LimitedUser, parts: ServedParts) -> Response:
    """llama.cpp server's fill-in-the-middle endpoint, for llama.vim and llama.vscode."""
    daemon = parts.daemon
    with refusal_recorded(daemon.runtime, "complete", user):
        req = await read_request(request, InfillRequest, daemon.settings.max_request_bytes)
        names = [chunk.filename for chunk in req.input_extra if chunk.filename]
        complete = await in_workspace(daemon, infill_complete(req), names)
        if req.n_predict == 0:
            return await warm_up(daemon, req, complete, user)
    limited = bool(req.t_max_predict_ms) and not req.stream
    answer, pieces = await drop_in(daemon, complete, req.stops(), user, first_line=limited)
    if req.stream:
        return sse_stream(
            pieces,
            answer,
            lambda piece: infill_body(answer, piece, final=False),
            lambda: [infill_body(answer, "")],
        )
    await answered_in_time(pieces, answer, req.t_max_predict_ms, parts.finishing)
    shaped = req.shaped
    if req.n_cmpl > 1:  # as llama.cpp's server answers several: a list of answers
        texts = choices(answer, req.n_cmpl)
        return whole_answer(answer, lambda: [shaped(infill_body(answer, t)) for t in texts])
    return whole_answer(answer, lambda: shaped(infill_body(answer, answer.text)))


async def warm_up(
    daemon: Daemon, req: InfillRequest, complete: CompleteRequest, user: str
) -> JSONResponse:
    """An infill request for no tokens: its prompt is read in the background, the answer is at
    once. One without a document (llama.vim's ring buffer of chunks of other files) reads the
    chunks as the deep path lays them out, the prefix of the prompts that show them."""
    if not complete.text and complete.context:
        complete = complete.model_copy(update={"mode": "deep"})
    tokens = await daemon.completions.warm(complete, user)
    return JSONResponse(req.shaped(warm_up_body(tokens)))


@router.post("/v1/completions")
async def completions(request: Request, user: LimitedUser, parts: ServedParts) -> Response:
    """OpenAI's completions API (``suffix`` for fill-in-the-middle), for Continue and the
    ``openai`` package."""
    daemon = parts.daemon
    with refusal_recorded(daemon.runtime, "complete", user):
        req = await read_request(request, CompletionsRequest, daemon.settings.max_request_bytes)
        complete = await in_workspace(daemon, completions_complete(req), [])
    answer, pieces = await drop_in(daemon, complete, req.stops(), user)
    answer_id, model = completion_id(), req.model or daemon.runtime.model.facts.name
    if req.stream:
        return sse_stream(
            pieces,
            answer,
            lambda piece: completions_body(answer, model, answer_id, piece, None),
            # The last chunk ends the answer and carries the alternatives asked for.
            lambda: [
                completions_body(
                    answer,
                    model,
                    answer_id,
                    ["", *choices(answer, req.n)[1:]],
                    finish_reason(answer),
                ),
                "[DONE]",
            ],
        )
    return await whole(
        pieces,
        answer,
        lambda: completions_body(
            answer, model, answer_id, choices(answer, req.n), finish_reason(answer)
        ),
    )


@router.get("/v1/models")
async def models(user: LimitedUser, parts: ServedParts) -> dict[str, Any]:
    """The model this daemon serves, as OpenAI's API lists models."""
    facts = parts.daemon.runtime.model.facts
    entry = {"id": facts.name, "object": "model", "created": 0, "owned_by": "assist"}
    return {"object": "list", "data": [entry]}
