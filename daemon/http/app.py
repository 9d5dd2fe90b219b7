"""The HTTP API (FastAPI): what each endpoint does, over the daemon's parts.

``/health``, ``/v1/complete`` and ``/v1/fix`` (NDJSON streams), the drop-in ``/infill``
(llama.cpp's server), ``/v1/completions`` and ``/v1/models`` (OpenAI's API; ``daemon.http.dropin``),
``/v1/feedback``, the cache's
``/v1/cache/stats`` and ``/v1/cache/clear``, and the observability endpoints ``/v1/stats``,
``/metrics`` and ``/dashboard``. Handlers parse and hand over: the pipelines decide, typed
errors become statuses in ``daemon.http.errors``. Every request but ``/health`` and
``/metrics`` counts against the user's rate limit; with tokens, every one needs a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from daemon import __version__
from daemon.errors import AssistError, InvalidRequest, NoMetrics, RateLimited, Unauthorized
from daemon.http import errors
from daemon.http.assembly import Daemon
from daemon.http.bodies import parse_request, read_body
from daemon.http.dropin import (
    SSE,
    Answer,
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
    sse,
    verified_pieces,
    warm_up_body,
)
from daemon.http.ndjson import NDJSON, ndjson, observed
from daemon.http.openapi import add_request_schemas
from daemon.http.rate_limit import RateLimiter
from daemon.observe.backends import BackendCollector
from daemon.observe.dashboard import render as render_dashboard
from daemon.observe.gpu import gpu_figures
from daemon.observe.metrics import MetricsRecorder, RequestRecord
from daemon.observe.stats import GROUPINGS, parse_window, summarize
from daemon.protocol import (
    CompleteRequest,
    DocumentRequest,
    ErrorCode,
    FeedbackRequest,
    FixRequest,
    Health,
)
from daemon.tasks import BackgroundTasks
from daemon.tokens import LOCAL_USER, TokenStore

log = logging.getLogger(__name__)


def create_app(daemon: Daemon, tokens: TokenStore | None = None) -> FastAPI:
    app = FastAPI(title="assist", version=__version__, docs_url=None, redoc_url=None)
    errors.install(app)
    settings = daemon.settings
    runtime = daemon.runtime
    limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)
    # Drop-in answers read on after their client's time limit cut them (to be cached).
    finishing = BackgroundTasks("a drop-in answer read after its client's time limit")
    if runtime.metrics is not None and runtime.engine.kind == "remote":
        backends = BackendCollector(runtime.engine.backends)
        runtime.metrics.prometheus.registry.register(backends)

    async def identify(request: Request) -> str:
        """The user behind a request: from its token when the daemon has tokens."""
        if tokens is None:
            claimed = request.headers.get("x-assist-user", LOCAL_USER)
            return claimed if claimed and len(claimed) <= 64 else LOCAL_USER
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        found = tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
        if found is None:
            client = request.client.host if request.client else "unknown"
            log.warning(
                "refused %s %s from %s: %s",
                request.method,
                request.url.path,
                client,
                "no token" if not header else "unknown token",
            )
            raise Unauthorized("this daemon needs a valid token (Authorization: Bearer)")
        return found

    async def authenticate(request: Request, user: str = Depends(identify)) -> str:
        """The user, once the request fits their rate limit."""
        wait = limiter.take(user)
        if wait > 0:
            raise RateLimited(
                f"{user} sent more than {settings.rate_limit_per_minute} requests a minute",
                retry_after=max(1, round(wait)),
            )
        return user

    @app.get("/health")
    async def health(user: str = Depends(identify)) -> Health:
        facts = runtime.model.facts
        stats = await runtime.run_db(runtime.cache.stats)
        engine = runtime.engine
        report = engine.report()
        return Health(
            status="ok" if engine.ready.is_set() else "loading",
            version=__version__,
            model=facts.name,
            model_path=facts.path,
            model_source=facts.source,
            fingerprint=facts.fingerprint,
            prompt_format=facts.prompt_format,
            backend=facts.backend,
            gpu_offload=facts.gpu_offload,
            n_ctx=facts.n_ctx,
            cache_path=stats["path"],
            cache_entries=stats["entries"],
            cache_bytes=stats["file_bytes"],
            queue_depth=engine.queue_depth,
            cache_status=runtime.cache.status,
            workload={
                **report.queue.as_json(),
                **daemon.completions.workload(),
                "prefetched": daemon.prefetcher.prefetched,
                **report.saved_states.as_json(),
            },
            engine=report.figures.as_json(),
            workspace=str(daemon.workspace.root) if daemon.workspace is not None else None,
            pid=os.getpid(),
        )

    @contextlib.contextmanager
    def refusal_recorded(task: str, user: str) -> Iterator[None]:
        """A refusal before a request's stream (413, 422, 429, busy) gets its metrics record."""
        try:
            yield
        except AssistError as exc:
            busy = exc.code in (ErrorCode.BUSY, ErrorCode.RATE_LIMITED)
            runtime.observe(
                RequestRecord(
                    task,
                    None,
                    None,
                    user,
                    "busy" if busy else "refused",
                    error_code=exc.code.value,
                )
            )
            raise

    async def started(
        request: Request,
        user: str,
        task: str,
        parse: Callable[[bytes], Any],
        start: Callable[[Any, str], Awaitable[AsyncGenerator[Any, None]]],
    ) -> tuple[Any, AsyncGenerator[Any, None], RequestRecord]:
        """Read, validate and start a request whose answer streams, with its metrics record;
        a refusal before the stream (413, 422, 429) is recorded too."""
        with refusal_recorded(task, user):
            body = await read_body(request, settings.max_request_bytes)
            req = parse(body)
            events = await start(req, user)
        return req, events, RequestRecord(task, req.language, req.path, user, "cancelled")

    async def streamed(
        request: Request,
        user: str,
        task: str,
        model: type[DocumentRequest],
        start: Callable[[Any, str], Awaitable[AsyncGenerator[Any, None]]],
    ) -> StreamingResponse:
        _, events, record = await started(
            request, user, task, lambda body: parse_request(body, model), start
        )
        return StreamingResponse(ndjson(events, record, runtime.metrics), media_type=NDJSON)

    @app.post("/v1/complete")
    async def complete(request: Request, user: str = Depends(authenticate)) -> StreamingResponse:
        return await streamed(request, user, "complete", CompleteRequest, daemon.completions.start)

    @app.post("/v1/fix")
    async def fix(request: Request, user: str = Depends(authenticate)) -> StreamingResponse:
        return await streamed(request, user, "fix", FixRequest, daemon.repairs.start)

    async def drop_in(
        req: CompleteRequest, stops: list[str], user: str, *, first_line: bool = False
    ) -> tuple[Answer, AsyncGenerator[str, None]]:
        """A drop-in protocol's request, read and translated, through the completion
        pipeline: its answer, filled as the verified pieces are read. ``first_line``: the
        client's time limit takes the first line of an answer still being written
        (``CompletionPipeline.start``)."""
        with refusal_recorded("complete", user):
            events = await daemon.completions.start(req, user, first_line=first_line)
        record = RequestRecord("complete", req.language, req.path, user, "cancelled")
        answer = Answer(stops=stops)
        return answer, verified_pieces(observed(events, record, runtime.metrics), answer)

    async def in_workspace(req: CompleteRequest, names: list[str]) -> CompleteRequest:
        """A drop-in request with the operator's workspace profile, when it has none and the
        files it names lie in that folder (``served_workspace``)."""
        if daemon.workspace is None:
            return req
        return await daemon.workspace.profiled(req, names)

    def sse_stream(
        pieces: AsyncGenerator[str, None],
        answer: Answer,
        chunk: Callable[[str], Any],
        last: Callable[[], list[Any]],
    ) -> StreamingResponse:
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
        """A drop-in answer that is not streamed: read to its end, then ``body``, or the error
        it ended in with its status."""
        async for _ in pieces:
            pass
        return whole_answer(answer, body)

    def whole_answer(answer: Answer, body: Callable[[], Any]) -> Response:
        if answer.error is not None:
            return errors.error_response(answer.error.code, answer.error.message)
        return JSONResponse(body())

    @app.post("/infill")
    async def infill(request: Request, user: str = Depends(authenticate)) -> Response:
        """llama.cpp server's fill-in-the-middle endpoint, for llama.vim and llama.vscode."""
        with refusal_recorded("complete", user):
            body = await read_body(request, settings.max_request_bytes)
            wire = parse_request(body, InfillRequest)
            names = [chunk.filename for chunk in wire.input_extra if chunk.filename]
            complete = await in_workspace(infill_complete(wire), names)
            if wire.n_predict == 0:
                # A warm-up: the prompt is read in the background, the answer is at once. One
                # without a document (llama.vim's ring buffer of chunks of other files) reads
                # the chunks as the deep path lays them out, the prefix of the prompts that
                # show them.
                if not complete.text and complete.context:
                    complete = complete.model_copy(update={"mode": "deep"})
                tokens = await daemon.completions.warm(complete, user)
                return JSONResponse(wire.shaped(warm_up_body(tokens)))

        limited = bool(wire.t_max_predict_ms) and not wire.stream
        answer, pieces = await drop_in(complete, wire.stops(), user, first_line=limited)
        if wire.stream:
            return sse_stream(
                pieces,
                answer,
                lambda piece: infill_body(answer, piece, final=False),
                lambda: [infill_body(answer, "")],
            )
        await answered_in_time(pieces, answer, wire.t_max_predict_ms, finishing)
        shaped = wire.shaped
        if wire.n_cmpl > 1:  # as llama.cpp's server answers several: a list of answers
            texts = choices(answer, wire.n_cmpl)
            return whole_answer(answer, lambda: [shaped(infill_body(answer, t)) for t in texts])
        return whole_answer(answer, lambda: shaped(infill_body(answer, answer.text)))

    @app.post("/v1/completions")
    async def completions(request: Request, user: str = Depends(authenticate)) -> Response:
        """OpenAI's completions API (``suffix`` for fill-in-the-middle), for Continue and the
        ``openai`` package."""
        with refusal_recorded("complete", user):
            body = await read_body(request, settings.max_request_bytes)
            req = parse_request(body, CompletionsRequest)
            complete = await in_workspace(completions_complete(req), [])
        answer, pieces = await drop_in(complete, req.stops(), user)
        answer_id, model = completion_id(), req.model or runtime.model.facts.name
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

    @app.get("/v1/models")
    async def models(user: str = Depends(authenticate)) -> dict[str, Any]:
        """The model this daemon serves, as OpenAI's API lists models."""
        facts = runtime.model.facts
        entry = {"id": facts.name, "object": "model", "created": 0, "owned_by": "assist"}
        return {"object": "list", "data": [entry]}

    def recorder() -> MetricsRecorder:
        if runtime.metrics is None:
            raise NoMetrics("this daemon keeps no metrics (setting metrics)")
        return runtime.metrics

    async def current_stats(window: str, by: str) -> dict[str, Any]:
        metrics = recorder()
        try:
            window_s = parse_window(window)
        except ValueError:
            raise InvalidRequest(f"window {window!r}: use 900, 15m, 1h or 7d") from None
        if by not in GROUPINGS:
            raise InvalidRequest(f"by: one of {', '.join(GROUPINGS)}")
        await asyncio.to_thread(metrics.flush)
        since = time.time() - window_s
        rows = await asyncio.to_thread(metrics.rows, since)
        feedback = await asyncio.to_thread(metrics.feedback_rows, since)
        return summarize(rows, feedback, window_s, by)

    @app.get("/v1/stats")
    async def stats(
        window: str = "3600", by: str = "language", user: str = Depends(authenticate)
    ) -> dict[str, Any]:
        figures = await current_stats(window, by)
        figures["gpu"] = gpu_figures()
        figures["backend"] = runtime.model.facts.backend
        figures["model"] = runtime.model.facts.name
        figures["backends"] = runtime.engine.backends()
        return figures

    @app.get("/metrics")
    async def metrics(user: str = Depends(identify)) -> Response:
        metrics = recorder()
        await asyncio.to_thread(metrics.flush)
        metrics.prometheus.queue_depth.set(runtime.engine.queue_depth)
        cache = await runtime.run_db(runtime.cache.stats)
        metrics.prometheus.cache_entries.set(cache["entries"])
        return Response(
            generate_latest(metrics.prometheus.registry), media_type=CONTENT_TYPE_LATEST
        )

    @app.get("/dashboard", response_class=HTMLResponse)
    async def dashboard(
        window: str = "3600", by: str = "language", user: str = Depends(authenticate)
    ) -> HTMLResponse:
        figures = await current_stats(window, by)
        facts = runtime.model.facts
        gpus = await asyncio.to_thread(gpu_figures)
        backends = runtime.engine.backends()
        return HTMLResponse(render_dashboard(figures, facts.name, facts.backend, gpus, backends))

    @app.post("/v1/feedback")
    async def feedback(request: Request, user: str = Depends(authenticate)) -> dict[str, Any]:
        body = await read_body(request, settings.max_request_bytes)
        return await daemon.completions.feedback(parse_request(body, FeedbackRequest), user)

    @app.get("/v1/cache/stats")
    async def cache_stats(user: str = Depends(authenticate)) -> dict[str, Any]:
        stats: dict[str, Any] = await runtime.run_db(runtime.cache.stats)
        stats["status"] = runtime.cache.status
        return stats

    @app.post("/v1/cache/clear")
    async def cache_clear(user: str = Depends(authenticate)) -> dict[str, Any]:
        removed = await runtime.run_db(runtime.cache.clear)
        return {"removed": removed}

    add_request_schemas(
        app,
        {"/v1/complete": CompleteRequest, "/v1/fix": FixRequest, "/v1/feedback": FeedbackRequest},
    )
    return app
