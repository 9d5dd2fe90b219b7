"""Drop-in protocols: llama.cpp server's ``/infill`` and OpenAI's ``/v1/completions``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from daemon.errors import InvalidRequest
from daemon.protocol import (
    MAX_CANDIDATES,
    MAX_CONTEXT_SNIPPETS,
    MAX_SNIPPET_CHARS,
    CompleteRequest,
    ContextSnippet,
    DoneEvent,
    ErrorEvent,
    StageEvent,
    StartEvent,
    TokenEvent,
)
from daemon.tasks import BackgroundTasks

SSE = "text/event-stream"
# Stop sequences a request may send (OpenAI's limit).
MAX_STOPS = 4
_MISSING = object()
# How often the wait for a client's time limit looks at the answer (seconds).
_WATCH_S = 0.01
# llama.cpp server's ``stop_type`` for the daemon's finish reasons: the model's end or a stop
# (``eos``), the token budget or a deadline (``limit``).
_STOP_TYPES = {"stop": "eos", "length": "limit", "deadline": "limit"}


class InfillChunk(BaseModel):
    """One chunk of another file, as llama.vim and llama.vscode send them."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field("", max_length=MAX_SNIPPET_CHARS)
    filename: str = Field("", max_length=4096)


class InfillRequest(BaseModel):
    """POST /infill, as llama.cpp's server reads it (the fields its editor clients send)."""

    model_config = ConfigDict(extra="ignore")

    input_prefix: str = ""
    input_suffix: str = ""
    input_extra: list[InfillChunk] = Field(default_factory=list)
    prompt: str = Field("", description="The text typed before the cursor on its line.")
    n_predict: int = Field(-1, ge=-1, description="Tokens at most (-1: the daemon's budget).")
    t_max_predict_ms: int | None = Field(
        None,
        ge=0,
        description="Time for the generation (ms) from its first token; it cuts the answer "
        "once a line is complete.",
    )
    t_max_prompt_ms: int | None = Field(None, description="Accepted, not applied.")
    n_cmpl: int = Field(
        1,
        ge=1,
        le=MAX_CANDIDATES,
        description="Completions wanted: more than one answers with a list of answers.",
    )
    stop: list[str] = Field(
        default_factory=list, max_length=MAX_STOPS, description="Stop sequences."
    )
    response_fields: list[str] | None = Field(
        None,
        max_length=64,
        description="Only these fields in the answer, a nested one named by its path "
        "(``timings/prompt_ms``), as llama.cpp's server answers.",
    )
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    stream: bool = False
    cache_prompt: bool = True

    def document(self) -> tuple[str, str]:
        """The document's text before the cursor, and after it."""
        return self.input_prefix + self.prompt, self.input_suffix

    def stops(self) -> list[str]:
        return [s for s in self.stop if s]

    def shaped(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` as the client asked for it: with ``response_fields``, those fields only,
        each under its path."""
        if self.response_fields is None:
            return body
        picked: dict[str, Any] = {}
        for path in self.response_fields:
            value: Any = body
            for part in path.split("/"):
                value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
            if value is not _MISSING:
                picked[path] = value
        return picked

    def snippets(self) -> list[ContextSnippet]:
        """``input_extra`` as repository context (chunks with neither a file name nor text
        are dropped; a chunk without a name is labelled by its place)."""
        chunks = [c for c in self.input_extra if c.text.strip()][:MAX_CONTEXT_SNIPPETS]
        return [
            ContextSnippet(path=c.filename or f"chunk-{index}", text=c.text, kind="recent")
            for index, c in enumerate(chunks)
        ]


class CompletionsRequest(BaseModel):
    """POST /v1/completions, as OpenAI's legacy completions API reads it."""

    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    prompt: str | list[str] = ""
    suffix: str | None = None
    max_tokens: int | None = Field(16, ge=1)
    temperature: float | None = None
    top_p: float | None = None
    n: int = Field(1, ge=1, le=MAX_CANDIDATES, description="Choices wanted.")
    stream: bool = False
    stop: str | list[str] | None = None
    user: str | None = None

    def text(self) -> str:
        if isinstance(self.prompt, list):
            if len(self.prompt) != 1:
                raise InvalidRequest("prompt: send one prompt per request")
            return self.prompt[0]
        return self.prompt

    def stops(self) -> list[str]:
        if self.stop is None:
            return []
        stops = [self.stop] if isinstance(self.stop, str) else self.stop
        if len(stops) > MAX_STOPS:
            raise InvalidRequest(f"stop: at most {MAX_STOPS} sequences")
        return [s for s in stops if s]


def complete_request(
    before: str,
    after: str,
    *,
    max_tokens: int | None,
    deadline_ms: int | None = None,
    context: list[ContextSnippet] | None = None,
    answers: int = 1,
) -> CompleteRequest:
    """The ``/v1/complete`` request for a cursor between ``before`` and ``after`` (with
    ``answers`` over one, decoded together: ``choices``)."""
    line = before.count("\n")
    column = len(before) - (before.rfind("\n") + 1)
    return CompleteRequest(
        text=before + after,
        line=line,
        column=column,
        max_tokens=max_tokens,
        deadline_ms=deadline_ms or None,
        context=context or [],
        candidates=answers if answers > 1 else None,
    )


def infill_complete(req: InfillRequest) -> CompleteRequest:
    """The ``/v1/complete`` request for an ``/infill`` request; its time limit is not the
    request's deadline (``answered_in_time`` applies it)."""
    before, after = req.document()
    return complete_request(
        before,
        after,
        max_tokens=req.n_predict if req.n_predict > 0 else None,
        context=req.snippets(),
        answers=req.n_cmpl,
    )


def completions_complete(req: CompletionsRequest) -> CompleteRequest:
    return complete_request(req.text(), req.suffix or "", max_tokens=req.max_tokens, answers=req.n)


def choices(answer: Answer, wanted: int) -> list[str]:
    """The answer, then up to ``wanted - 1`` of its alternatives (decoded with it from the one
    prompt), those that passed every check the answer passed."""
    done = answer.done
    others = done.alternatives if done is not None and wanted > 1 else []
    checked = [each.text for each in others if not each.faults and each.text.strip()]
    return [answer.text, *checked][:wanted]


@dataclass
class Answer:
    """What a completion stream came to: its verified text as it grew, and how it ended."""

    shown: str = ""  # what was streamed: the verified text, only ever added to
    final: str | None = None  # the final stage's text when it verified
    stopped: bool = False  # a client's stop sequence cut the final text
    stops: list[str] = field(default_factory=list)  # the client's stop sequences
    done: DoneEvent | None = None
    error: ErrorEvent | None = None
    started: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None  # when the model's first token came
    tokens_seen: int = 0  # the model's pieces so far
    route: str | None = None  # the path the pipeline chose ("fast" or "deep")
    prompt_tokens: int = 0  # the prompt's tokens, as the answer's start gave them
    reused_tokens: int = 0  # of those, the ones the model found read already (its first token)
    line: str | None = None  # the first line fitted to the gap (the skeleton), once known
    cut_at: float | None = None  # when the client's time limit ended the answer

    @property
    def text(self) -> str:
        """The answer of a request that was not streamed: the final stage's verified text,
        else what verified before it; cut by the client's time limit, at least its first
        line."""
        if self.final is not None:
            return self.final
        if self.cut_at is not None and not self.shown:
            return cut_at_stops(self.line or "", self.stops)[0]
        return self.shown


def cut_at_stops(text: str, stops: list[str]) -> tuple[str, bool]:
    """``text`` up to the first of ``stops``, and whether one was found."""
    hits = [i for stop in stops if (i := text.find(stop)) >= 0]
    return (text[: min(hits)], True) if hits else (text, False)


async def verified_pieces(
    events: AsyncGenerator[Any, None], answer: Answer
) -> AsyncGenerator[str, None]:
    """The answer's verified text in pieces that only ever add to what was sent: the
    ``logic`` stage when it verified, then what ``final`` adds (cut at ``answer.stops``)."""
    async for event in events:
        if isinstance(event, TokenEvent):
            answer.tokens_seen += 1
            if event.prompt_reused is not None:
                answer.reused_tokens = event.prompt_reused
            if answer.first_token_at is None:
                answer.first_token_at = time.perf_counter()
        elif isinstance(event, StartEvent):
            answer.route, answer.prompt_tokens = event.route, event.prompt_tokens
        elif isinstance(event, StageEvent) and event.stage == "skeleton" and answer.route == "fast":
            answer.line = event.text  # (a deep answer's skeleton is a placeholder body)
        if isinstance(event, StageEvent) and event.ok and event.stage in ("logic", "final"):
            text, found = cut_at_stops(event.text, answer.stops)
            if event.stage == "final":
                answer.final, answer.stopped = text, found
            if text.startswith(answer.shown) and len(text) > len(answer.shown):
                piece = text[len(answer.shown) :]
                answer.shown = text
                yield piece
        elif isinstance(event, DoneEvent):
            answer.done = event
        elif isinstance(event, ErrorEvent):
            answer.error = event


# ``t_max_predict_ms`` as llama.cpp's server means it: a limit counted from the first generated
# token that cuts the answer only once a line of it is complete, so the client always gets the
# skeleton stage (the first written line fitted to the gap; a deep-path body, whose skeleton is a
# placeholder, is answered whole). The generation goes on within the daemon's own budgets and is
# cached, so the next request for the same place, or for the place after the shown text, is
# answered from it.
async def answered_in_time(
    pieces: AsyncGenerator[str, None],
    answer: Answer,
    limit_ms: int | None,
    background: BackgroundTasks,
) -> None:
    """Read ``pieces`` to their end; with a client's time limit, only until it has passed
    since the first token and the first line is known (``answer.cut_at`` is then set): the
    rest is read in the background, so the generation goes on to its end and is cached."""
    if not limit_ms:
        async for _ in pieces:
            pass
        return
    ended = asyncio.Event()

    async def read() -> None:
        try:
            async for _ in pieces:
                pass
        finally:
            ended.set()

    background.start(read())
    while not ended.is_set():
        first = answer.first_token_at
        if first is not None and answer.line is not None:
            left = first + limit_ms / 1000 - time.perf_counter()
            if left <= 0:
                answer.cut_at = time.perf_counter()
                return
        else:
            left = _WATCH_S
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ended.wait(), min(left, _WATCH_S))


def sse(data: dict[str, Any] | str) -> bytes:
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"data: {body}\n\n".encode()


def infill_body(answer: Answer, content: str, *, final: bool = True) -> dict[str, Any]:
    """llama.cpp server's answer: the text, and the counts and times its clients display
    (for an answer its time limit cut, those measured up to the cut)."""
    done = answer.done
    if answer.cut_at is not None and final:
        return _cut_body(answer, content, answer.cut_at)
    if not final or done is None:
        return {"content": content, "stop": False}
    t = done.timings
    predicted_ms = max(0.0, t.total_ms - t.prompt_ms - t.queue_ms)
    return {
        "content": content,
        "stop": True,
        "stop_type": _STOP_TYPES.get(done.finish_reason, "eos"),
        "model": "assist",
        "tokens_predicted": done.tokens,
        "tokens_evaluated": done.prompt_tokens,
        "tokens_cached": done.reused_tokens,
        "truncated": False,
        "cached": done.cached,
        "timings": _timings(
            max(0, done.prompt_tokens - done.reused_tokens),
            t.prompt_ms,
            done.tokens,
            predicted_ms,
            t.total_ms,
        ),
    }


def warm_up_body(prompt_tokens: int) -> dict[str, Any]:
    """The answer to a warm-up (``n_predict`` 0): nothing written, the prompt being read."""
    return {
        "content": "",
        "stop": True,
        "stop_type": "limit",
        "model": "assist",
        "tokens_predicted": 0,
        "tokens_evaluated": prompt_tokens,
        "truncated": False,
        "cached": False,
        "timings": _timings(prompt_tokens, 0.0, 0, 0.0, 0.0),
    }


def _cut_body(answer: Answer, content: str, cut_at: float) -> dict[str, Any]:
    first = answer.first_token_at if answer.first_token_at is not None else cut_at
    prompt_ms = (first - answer.started) * 1000
    predicted_ms = (cut_at - first) * 1000
    return {
        "content": content,
        "stop": True,
        "stop_type": "limit",
        "model": "assist",
        "tokens_predicted": answer.tokens_seen,
        "tokens_evaluated": answer.prompt_tokens,
        "tokens_cached": answer.reused_tokens,
        "truncated": False,
        "cached": False,
        # Up to the cut: the prompt's tokens read and the tokens generated so far.
        "timings": _timings(
            max(0, answer.prompt_tokens - answer.reused_tokens),
            prompt_ms,
            answer.tokens_seen,
            predicted_ms,
            (cut_at - answer.started) * 1000,
        ),
    }


def _timings(
    prompt_n: int, prompt_ms: float, predicted_n: int, predicted_ms: float, total_ms: float
) -> dict[str, Any]:
    return {
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n if prompt_n else 0.0,
        "prompt_per_second": prompt_n / prompt_ms * 1000 if prompt_ms else 0.0,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / predicted_n if predicted_n else 0.0,
        "predicted_per_second": predicted_n / predicted_ms * 1000 if predicted_ms else 0.0,
        "total_ms": total_ms,
    }


def completions_body(
    answer: Answer,
    model: str,
    completion_id: str,
    text: str | list[str],
    finish: Literal["stop", "length"] | None,
) -> dict[str, Any]:
    """An OpenAI completions answer (or, with ``finish`` None, one chunk of its stream); with
    several ``text``, a choice each (the alternatives end with ``stop``)."""
    texts = [text] if isinstance(text, str) else text
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "text": each,
                "index": index,
                "logprobs": None,
                "finish_reason": finish if index == 0 or finish is None else "stop",
            }
            for index, each in enumerate(texts)
        ],
    }
    done = answer.done
    if finish is not None and done is not None:
        body["usage"] = {
            "prompt_tokens": done.prompt_tokens,
            "completion_tokens": done.tokens,
            "total_tokens": done.prompt_tokens + done.tokens,
        }
    return body


def finish_reason(answer: Answer) -> Literal["stop", "length"]:
    done = answer.done
    if done is not None and done.finish_reason == "length" and not answer.stopped:
        return "length"
    return "stop"


def completion_id() -> str:
    return f"cmpl-{uuid.uuid4().hex[:24]}"
