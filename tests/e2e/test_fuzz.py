"""Fuzzing: the HTTP API from its own OpenAPI description, and the wire models directly.

(a) schemathesis generates requests (valid and invalid) for every operation that the running
    daemon's ``/openapi.json`` describes, including the JSON bodies of ``/v1/complete``,
    ``/v1/fix`` and ``/v1/feedback``, and sends them to a real daemon (the real embedded model,
    real SQLite) with tiny budgets. No answer is a 5xx; a 200 stream ends with exactly one
    ``done`` or ``error`` event and nothing after it; every other 4xx body is a JSON error; and
    the daemon still answers ``/health`` afterwards.
(b) hypothesis feeds arbitrary JSON (nested objects and lists, huge integers, NaN-like strings,
    control characters, lone surrogates, and raw bytes that are not JSON at all) to the request
    models of ``daemon.protocol``: each input validates or raises pydantic's ``ValidationError``,
    nothing else; and random (text, line, column) through ``daemon.cursor.split_at_cursor``
    either splits the text exactly at that place or raises ``PositionError``.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from schemathesis import GenerationMode

from daemon.cursor import PositionError, split_at_cursor
from daemon.protocol import CompleteRequest, FeedbackRequest, FixRequest
from tests.e2e.conftest import RunningDaemon, start_daemon

# Examples per operation in the fuzzing phase (requests that reach the model cost the most).
MAX_EXAMPLES = 30
# Examples per operation adjusted to reach the model (positions inside the text, Python).
REACHING_EXAMPLES = 20
SEED = 20261130

# -- (a) schemathesis against the running daemon ---------------------------------------------


@pytest.fixture(scope="module")
def fuzzed_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(
        tmp_path_factory.mktemp("fuzz"),
        fast_max_tokens=2,
        deep_max_tokens=2,
        fix_candidates=1,
        fix_max_tokens=8,
        fast_deadline_ms=2000,
        deep_deadline_ms=2000,
        fix_deadline_ms=2000,
        queue_size=16,
        rate_limit_per_minute=0,
    )
    yield running
    try:
        # Whatever it was sent, the daemon still serves.
        with running.http() as http:
            assert http.get("/health").json()["status"] == "ok"
        assert running.process.poll() is None
    finally:
        running.stop()


SEEN: Counter[tuple[str, str, int]] = Counter()


@pytest.fixture(scope="module")
def api_schema(fuzzed_daemon: RunningDaemon) -> Any:
    config = schemathesis.Config.from_dict({"seed": SEED, "request-timeout": 60})
    return schemathesis.openapi.from_url(f"{fuzzed_daemon.url}/openapi.json", config=config)


def check_answer(status: int, content_type: str, body: bytes) -> None:
    assert status < 500, f"{status}: {body[:500]!r}"
    if status == 200 and content_type.startswith("application/x-ndjson"):
        events = [json.loads(line) for line in body.splitlines() if line.strip()]
        terminal = [i for i, e in enumerate(events) if e.get("event") in ("done", "error")]
        assert len(terminal) == 1, [e.get("event") for e in events]
        assert terminal[0] == len(events) - 1, [e.get("event") for e in events]
    elif status >= 400:
        error = json.loads(body)["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)


# schemathesis' own pytest integration for a schema from a fixture (``from_fixture`` and
# ``@schema.parametrize()``) fails on pytest 9.2 (it sets ``Function._nodeid``, which pytest
# 9.2 no longer has), so the generated cases are drawn with its documented strategy API.
BODIES = ("POST /v1/complete", "POST /v1/fix", "POST /v1/feedback")


def reach_the_model(label: str, body: Any) -> None:
    """Make a generated valid body one that passes the checks the schema cannot state (a
    position inside the text, a language with a parser), so that it reaches the pipeline."""
    if not isinstance(body, dict):
        return
    if body.get("max_tokens") is not None:
        body["max_tokens"] = min(body["max_tokens"], 8)
    if label == "POST /v1/complete":
        lines = body["text"].split("\n")
        body["line"] = int(body["line"]) % len(lines)  # JSON Schema integers may be 0.0
        current = lines[body["line"]]
        length = len(current) - 1 if current.endswith("\r") else len(current)
        body["column"] = int(body["column"]) % (length + 1)
    elif label == "POST /v1/fix":
        body["path"] = "fuzzed.py"
        body["language"] = "python"
        if isinstance(body.get("profile"), dict):
            body["profile"]["language"] = "python"


def fuzz(
    operation: Any, mode: GenerationMode, reach: bool = False, examples: int | None = None
) -> None:
    @settings(
        max_examples=examples or (REACHING_EXAMPLES if reach else MAX_EXAMPLES),
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def send(case: Any) -> None:
        if reach:
            reach_the_model(operation.label, case.body)
        response = case.call(timeout=60)
        kind = "reaching" if reach else mode.value
        SEEN[(kind, operation.label, response.status_code)] += 1
        check_answer(
            response.status_code,
            response.headers.get("content-type", [""])[0],
            response.content,
        )

    send()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests_never_get_a_5xx(api_schema: Any, mode: GenerationMode) -> None:
    operations = {result.ok().label: result.ok() for result in api_schema.get_all_operations()}
    assert set(BODIES) <= set(operations), sorted(operations)
    for label, operation in sorted(operations.items()):
        # Invalid input exists only for operations that take some (a JSON body).
        if mode == GenerationMode.POSITIVE or label in BODIES:
            fuzz(operation, mode)


@pytest.mark.parametrize("label", ["POST /v1/complete", "POST /v1/fix"])
def test_generated_requests_that_reach_the_model_never_get_a_5xx(
    api_schema: Any, label: str
) -> None:
    operations = {result.ok().label: result.ok() for result in api_schema.get_all_operations()}
    fuzz(operations[label], GenerationMode.POSITIVE, reach=True)


def test_the_daemon_still_answers_after_the_fuzzing(
    fuzzed_daemon: RunningDaemon, api_schema: Any
) -> None:
    """Fuzzes the daemon itself (a short round of invalid bodies, whatever ran before it), then
    checks that it still answers; prints what was sent to it in this module."""
    operations = {result.ok().label: result.ok() for result in api_schema.get_all_operations()}
    before = sum(SEEN.values())
    for label in BODIES:
        fuzz(operations[label], GenerationMode.NEGATIVE, examples=10)
    assert sum(SEEN.values()) > before
    print()
    for (mode, operation, status), count in sorted(SEEN.items()):
        print(f"  fuzz {mode:8} {operation:24} {status}: {count}")
    with fuzzed_daemon.http() as http:
        response = http.get("/health")
        assert response.status_code == 200
        assert response.json()["status"] == "ok"
        answer = http.post(
            "/v1/complete", json={"text": "x = ", "line": 0, "column": 4, "path": "a.py"}
        )
        assert answer.status_code == 200
        check_answer(200, answer.headers["content-type"], answer.content)


# -- (b) hypothesis on the wire models ---------------------------------------------------------

NAN_LIKE = st.sampled_from(
    ["NaN", "nan", "Infinity", "-Infinity", "inf", "1e400", "-0", "0x10", "1_000", " 1", "١"]
)
# Code points of every kind, lone surrogates (Cs) included: JSON escapes them as \udXXX.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**18, max_value=10**60)
    | st.integers(max_value=-(10**18))
    | st.floats(allow_nan=False, allow_infinity=False)
    | ANY_TEXT
    | NAN_LIKE
)
ANY_JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            ANY_TEXT | st.sampled_from(["text", "line", "column"]), children, max_size=4
        )
    ),
    max_leaves=20,
)
FIELDS = [
    "text",
    "line",
    "column",
    "path",
    "language",
    "profile",
    "deadline_ms",
    "cache",
    "request_id",
    "max_tokens",
    "mode",
    "candidates",
    "accepted",
]


@st.composite
def near_requests(draw: st.DrawFn) -> dict[str, Any]:
    """Objects with the models' own field names, each holding anything at all."""
    names = draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=len(FIELDS)))
    body = {name: draw(ANY_JSON) for name in names}
    if draw(st.booleans()):
        body["profile"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "language": ANY_JSON,
                    "versions": st.dictionaries(ANY_TEXT, ANY_JSON, max_size=3),
                    "frameworks": st.lists(
                        st.dictionaries(st.sampled_from(["name", "version"]), ANY_JSON),
                        max_size=3,
                    ),
                    "style": st.dictionaries(
                        st.sampled_from(["indent_style", "indent_size", "line_length"]), ANY_JSON
                    ),
                    "tools": ANY_JSON,
                },
            )
        )
    return body


def encodings(value: Any) -> list[str | bytes]:
    """The same value as JSON text with escapes, and unescaped (where it is UTF-8 at all)."""
    escaped = json.dumps(value)  # NaN/Infinity never occur: floats are finite
    out: list[str | bytes] = [escaped, escaped.encode()]
    raw = json.dumps(value, ensure_ascii=False)
    out.append(raw)  # may hold lone surrogates: a str pydantic must refuse or accept cleanly
    try:
        out.append(raw.encode("utf-8"))
    except UnicodeEncodeError:
        out.append(raw.encode("utf-8", "surrogatepass"))  # invalid UTF-8 bytes
    return out


MODELS = (CompleteRequest, FixRequest, FeedbackRequest)


def validate_or_refuse(payload: str | bytes) -> None:
    for model in MODELS:
        with contextlib.suppress(ValidationError):
            model.model_validate_json(payload)


# No example database: nothing is written into the work tree.
FAST_PROPERTY = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@FAST_PROPERTY
@given(ANY_JSON | near_requests())
def test_request_models_validate_or_raise_validation_error(value: Any) -> None:
    for payload in encodings(value):
        validate_or_refuse(payload)


@FAST_PROPERTY
@given(
    st.binary(max_size=200)
    | st.sampled_from(
        [
            b'{"text": "a", "line": 1' + b"0" * 5000 + b', "column": 0}',
            b'{"text": "a", "line": 0, "column": 0, "max_tokens": ' + b"9" * 5000 + b"}",
            b'{"text": "\\ud800", "line": 0, "column": 0}',
            b'{"text": "a\\u0000b", "line": 0, "column": 1}',
            b'{"request_id": "\\udfff", "accepted": true}',
            b'{"text": "a", "line": NaN, "column": Infinity}',
            b'{"text": "a", "line": 1e400, "column": -0}',
            b'{"text": "a", "profile": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            b"\xef\xbb\xbf{}",
            b"",
        ]
    )
)
def test_raw_bytes_validate_or_raise_validation_error(payload: bytes) -> None:
    validate_or_refuse(payload)


@FAST_PROPERTY
@given(
    text=st.text(st.sampled_from("ab\n\r\t é\u2028\U0001f600"), max_size=30) | ANY_TEXT,
    line=st.integers(min_value=0, max_value=12) | st.integers(min_value=0),
    column=st.integers(min_value=0, max_value=12) | st.integers(min_value=0),
)
def test_split_at_cursor_splits_exactly_or_raises_position_error(
    text: str, line: int, column: int
) -> None:
    try:
        before, after = split_at_cursor(text, line, column)
    except PositionError:
        lines = text.split("\n")
        assert line >= len(lines) or column > len(lines[line].removesuffix("\r"))
        return
    assert before + after == text
    assert before.count("\n") == line
    assert len(before) - (before.rfind("\n") + 1) == column


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/complete", b'{"text": "a", "line": 1' + b"0" * 5000 + b', "column": 0}'),
        ("/v1/fix", b'{"text": "a", "path": "a.py", "deadline_ms": 1' + b"0" * 5000 + b"}"),
        ("/v1/feedback", b'{"request_id": "x", "accepted": 1' + b"0" * 5000 + b"}"),
        ("/v1/complete", b'{"text": "a", "profile": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ],
    ids=["complete-5000-digits", "fix-5000-digits", "feedback-5000-digits", "deep-nesting"],
)
def test_hostile_json_gets_a_4xx_not_a_5xx(
    fuzzed_daemon: RunningDaemon, path: str, body: bytes
) -> None:
    """JSON that Python's json module cannot take (an integer of more than 4300 digits, 100,000
    nested lists) is a bad request, not a server error."""
    with httpx.Client(base_url=fuzzed_daemon.url, timeout=60, trust_env=False) as http:
        response = http.post(path, content=body)
    check_answer(response.status_code, response.headers.get("content-type", ""), response.content)
