"""The wire protocol: every request, event and error the daemon speaks, as pydantic models.
The daemon validates requests and clients parse events with the same models: both agree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

MAX_NAME = 200


class ErrorCode(StrEnum):
    """Why a request was refused (an ``ErrorBody``) or a stream ended (an ``error`` event)."""

    BAD_REQUEST = "bad_request"  # not JSON, not UTF-8, no body
    INVALID_REQUEST = "invalid_request"  # JSON that the request's model rejects
    INVALID_POSITION = "invalid_position"  # the cursor is not inside the document
    UNSUPPORTED_LANGUAGE = "unsupported_language"  # no parser to verify a fix with
    TOO_LARGE = "too_large"  # the body is over max_request_bytes
    UNAUTHORIZED = "unauthorized"  # no token, or an unknown one
    RATE_LIMITED = "rate_limited"  # the user's requests a minute are spent
    BUSY = "busy"  # no room in the queue: try again after Retry-After
    NOT_FOUND = "not_found"  # no such endpoint
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NO_METRICS = "no_metrics"  # the daemon keeps no metrics
    NOT_READY = "not_ready"  # the model is still loading
    SHUTTING_DOWN = "shutting_down"
    TIMEOUT = "timeout"  # the model's worker did not answer in time
    ENGINE_ERROR = "engine_error"  # generation failed
    REPLACED = "replaced"  # a newer request for the same document replaced this one
    INTERNAL = "internal"  # a defect: the daemon's log has the traceback


class Framework(BaseModel):
    """A dependency that shapes the code: name and the version the workspace pins."""

    name: str = Field(max_length=MAX_NAME)
    version: str | None = Field(None, max_length=MAX_NAME)
    source: str | None = Field(None, max_length=MAX_NAME, description="File it was read from.")


class Style(BaseModel):
    indent_style: Literal["space", "tab"] | None = None
    indent_size: int | None = Field(None, ge=1, le=16)
    line_length: int | None = Field(None, ge=20, le=1000)


class WorkspaceProfile(BaseModel):
    """What the workspace says about the code at hand, so the model never has to guess."""

    language: str | None = Field(None, max_length=MAX_NAME)
    versions: dict[str, Annotated[str, Field(max_length=MAX_NAME)]] = Field(
        default_factory=dict, max_length=32
    )
    frameworks: list[Framework] = Field(default_factory=list, max_length=64)
    style: Style = Field(default_factory=Style)
    tools: list[Annotated[str, Field(max_length=MAX_NAME)]] = Field(
        default_factory=list,
        max_length=16,
        description="Linters and formatters the workspace configures (ruff, black, prettier...).",
    )
    sources: list[Annotated[str, Field(max_length=1024)]] = Field(
        default_factory=list, max_length=64
    )


# Positions on the wire are 0-based; a column counts Unicode code points (a language server
# converts from UTF-16).
class DocumentRequest(BaseModel):
    """Fields every request about a document has."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(description="The whole document.")
    path: str | None = Field(
        None, max_length=4096, description="The document's path, for display and language only."
    )
    language: str | None = Field(None, max_length=MAX_NAME, description="Editor language id.")
    profile: WorkspaceProfile | None = None
    deadline_ms: int | None = Field(None, ge=1, description="Total deadline in milliseconds.")
    cache: bool = Field(True, description="Answer from the result cache when it can.")
    request_id: str | None = Field(None, max_length=128)


RouteKind = Literal["fast", "deep"]

# Bounds of the context a completion request may carry from the rest of the workspace.
MAX_CONTEXT_SNIPPETS = 32
MAX_SNIPPET_CHARS = 8000


class ContextSnippet(BaseModel):
    """A piece of another file of the workspace that the code at the cursor depends on.

    Clients read it where the files are; the daemon places it in the prompt before the
    document and never opens ``path``: it is a label the model is shown.
    """

    path: str = Field(
        min_length=1,
        max_length=4096,
        description="The file's path relative to the workspace, as the model is shown it. "
        "A label only: the daemon never opens it.",
    )
    text: str = Field(
        max_length=MAX_SNIPPET_CHARS,
        description="The snippet's source text: signatures and docstrings of an imported "
        "name, or the lines around a recent edit.",
    )
    kind: Literal["import", "recent"] = Field(
        description="'import': a definition the document imports; 'recent': lines around "
        "one of the programmer's recent edits in another file."
    )
    name: str | None = Field(
        None, max_length=MAX_NAME, description="The imported name the snippet defines."
    )
    line: int | None = Field(
        None, ge=0, description="0-based line of the file where the snippet starts."
    )


# The most answers one completion request can ask for.
MAX_CANDIDATES = 8


class CompleteRequest(DocumentRequest):
    """POST /v1/complete: complete ``text`` at (``line``, ``column``)."""

    line: int = Field(ge=0, description="0-based line of the cursor.")
    column: int = Field(ge=0, description="0-based column of the cursor, in code points.")
    max_tokens: int | None = Field(None, ge=1, description="Tokens to generate at most.")
    mode: Literal["auto", "fast", "deep"] = Field(
        "auto", description="Let the router choose the path, or force one."
    )
    context: list[ContextSnippet] = Field(
        default_factory=list,
        max_length=MAX_CONTEXT_SNIPPETS,
        description="Snippets of other files of the workspace, most useful first. The daemon "
        "places whole snippets, in that order of preference, while they fit its context "
        "budget, and lays them out before the document in a stable order (imports, then "
        "recent edits, each by path and line).",
    )
    repository: str | None = Field(
        None,
        max_length=MAX_NAME,
        description="The workspace's name (its folder's name), shown to models trained on "
        "whole repositories when ``context`` is placed.",
    )
    candidates: int | None = Field(
        None,
        ge=1,
        le=MAX_CANDIDATES,
        description="Answers wanted on the fast path: the answer and up to this many less one "
        "alternatives, decoded together from one prompt even where that costs more than the "
        "daemon's candidates_cost_limit (a CPU). Without it, the daemon's own setting.",
    )


class FixRequest(DocumentRequest):
    """POST /v1/fix: repair the syntax errors of ``text``."""

    candidates: int | None = Field(None, ge=1, le=16, description="Model candidates at most.")


class FeedbackRequest(BaseModel):
    """POST /v1/feedback: the user accepted or rejected an answer."""

    request_id: str = Field(max_length=128)
    accepted: bool
    language: str | None = Field(None, max_length=MAX_NAME)


class DiagnosticInfo(BaseModel):
    """One problem found in a document; positions are 0-based, columns in code points."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    source: str
    code: str | None = None


class Span(BaseModel):
    """Lines ``start_line`` up to (not including) ``end_line`` of the original document."""

    start_line: int
    end_line: int


class Timings(BaseModel):
    """Milliseconds since the request arrived, per phase."""

    queue_ms: float = 0.0
    prompt_ms: float = 0.0
    first_token_ms: float | None = None
    total_ms: float = 0.0
    engine_ms: float | None = Field(
        None, description="Time the model's worker spent on the answer's (first) generation."
    )


class StartEvent(BaseModel):
    event: Literal["start"] = "start"
    request_id: str
    language: str | None
    prompt_tokens: int = 0
    prompt_format: str
    route: RouteKind | None = None
    route_reason: str | None = None


class TokenEvent(BaseModel):
    """Text as the model generates it (for a fix: of the candidate being generated)."""

    event: Literal["token"] = "token"
    text: str
    stage: str | None = None
    candidate: int | None = None
    prompt_reused: int | None = Field(
        None, description="On a job's first token: the prompt tokens whose KV state it reused."
    )


StageName = Literal["skeleton", "logic", "errors", "final"]


class StageEvent(BaseModel):
    """One stage of an answer, complete in itself: an editor can show the latest at any time.

    For a completion ``text`` is what to insert at the cursor; for a fix it is the whole fixed
    document (for the ``skeleton`` of a fix: the diagnosis). ``ok`` is False when the stage failed
    verification: then ``text`` repeats the previous valid stage and ``reason`` says why.
    """

    event: Literal["stage"] = "stage"
    stage: StageName
    text: str
    elapsed_ms: float
    ok: bool = True
    reason: str | None = None
    diagnostics: list[DiagnosticInfo] = Field(default_factory=list)
    span: Span | None = None
    diff: str | None = None
    formatter: str | None = None


FinishReason = Literal["stop", "length", "deadline", "cancelled"]


class RepairStep(BaseModel):
    """Fix: one error repaired, and which candidate won (to trace a wrong fix)."""

    line: int = Field(description="0-based line of the error in the document as it was then.")
    message: str
    rule: str = Field(description="The rule or model pass that proposed the winner.")
    candidates: int = Field(description="Verified candidates that were ranked.")
    score: float | None = Field(
        None, description="The model's log-likelihood of the changed lines, when it judged."
    )
    invented: int = Field(0, description="Names or literals it adds that appear nowhere near.")
    layout: int = Field(0, description="Brackets that disagree with the indentation after it.")


class Alternative(BaseModel):
    """Fix: a second repair, as likely as the first but meaning something else. Complete:
    another candidate the model wrote from the same prompt, to cycle to."""

    text: str
    diff: str | None = None  # fix
    rule: str | None = None  # fix
    score: float | None = None
    confidence: float | None = Field(
        None, description="Complete: the model's probability of the candidate's first line."
    )
    faults: list[str] = Field(
        default_factory=list, description="Complete: the workspace checks the candidate failed."
    )


class DoneEvent(BaseModel):
    event: Literal["done"] = "done"
    request_id: str
    text: str
    cached: bool
    finish_reason: FinishReason
    tokens: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = Field(0, description="Prompt tokens whose KV state was reused.")
    timings: Timings
    route: RouteKind | None = None
    route_reason: str | None = None
    cache_match: Literal["exact", "typed"] | None = Field(
        None, description="How a cached answer matched: the same request, or typed into."
    )
    stages: list[StageName] = Field(default_factory=list, description="Stages that were sent.")
    changed: bool | None = Field(None, description="Fix: whether the document was changed.")
    verified: bool | None = Field(None, description="Whether the final text was verified.")
    checked: bool | None = Field(
        None,
        description="Complete: whether a checker judged the final text; False when none knows "
        "its language, and ``verified`` then says only that nothing failed.",
    )
    diff: str | None = Field(None, description="Fix: unified diff from the original.")
    diagnostics: list[DiagnosticInfo] = Field(
        default_factory=list, description="Fix: the problems found in the original."
    )
    repairs: list[RepairStep] = Field(
        default_factory=list, description="Fix: each error repaired, in order, and how."
    )
    alternatives: list[Alternative] = Field(
        default_factory=list,
        description="Fix: other repairs too close to the chosen one to tell apart; when there "
        "are any, the fix is a question for the user and is not written or cached. Complete: "
        "the other candidates, best first.",
    )
    confidence: float | None = Field(
        None, description="Complete: the model's probability of the answer's first line."
    )
    withheld: str | None = Field(
        None,
        description="Complete: the answer the confidence gate held back (``text`` is then "
        "empty): the model's confidence in it was below the threshold, or it failed a "
        "workspace check that holds an answer back (a new undefined name).",
    )
    faults: list[str] = Field(
        default_factory=list, description="Complete: the workspace checks the answer failed."
    )
    unrepaired: DiagnosticInfo | None = Field(
        None, description="Fix: the first error no candidate repaired, when some were."
    )


class ErrorEvent(BaseModel):
    event: Literal["error"] = "error"
    code: ErrorCode
    message: str


Event = Annotated[
    StartEvent | TokenEvent | StageEvent | DoneEvent | ErrorEvent, Field(discriminator="event")
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(line: str | bytes) -> StartEvent | TokenEvent | StageEvent | DoneEvent | ErrorEvent:
    return EVENT_ADAPTER.validate_json(line)


def encode_event(event: BaseModel) -> bytes:
    return event.model_dump_json().encode() + b"\n"


class ErrorBody(BaseModel):
    """The JSON body of every 4xx/5xx answer."""

    class Detail(BaseModel):
        code: ErrorCode
        message: str
        request_id: str | None = None

    error: Detail


class Health(BaseModel):
    status: Literal["ok", "loading"]
    version: str
    model: str
    model_path: str
    model_source: str
    fingerprint: str
    prompt_format: str
    backend: str
    gpu_offload: bool
    n_ctx: int
    cache_path: str
    cache_entries: int
    cache_bytes: int
    queue_depth: int
    cache_status: str = Field("ok", description="'ok', or why results are not being stored.")
    engine: dict[str, Any]
    workload: dict[str, int | float | str | None] = Field(default_factory=dict)
    workspace: str | None = Field(
        None, description="The folder whose profile drop-in requests without one are given."
    )
    sizing: dict[str, Any] | None = Field(
        None,
        description="How parallel, kv_slots and n_ctx were chosen: sized to the GPU's memory "
        "(the device's and the model's figures), or why the settings were kept as they are.",
    )
    pid: int
