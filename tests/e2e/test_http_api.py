"""The HTTP API against a real daemon and the real embedded model."""

from __future__ import annotations

import json
import time

import httpx

from daemon.protocol import DoneEvent, StageEvent, StartEvent, TokenEvent, parse_event
from models.catalog import CATALOG, DEFAULT_MODEL, assembled_path
from tests.e2e.conftest import start_daemon
from tests.e2e.documents import LOAD_CONFIG, NUMBERS, complete_body, unique


def events_of(response: httpx.Response) -> list:
    return [parse_event(line) for line in response.iter_lines() if line.strip()]


def post_events(http: httpx.Client, body: dict) -> list:
    with http.stream("POST", "/v1/complete", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return events_of(response)


def test_python_completion_streams_tokens_and_ends_with_done(daemon):
    with daemon.http() as http:
        body = complete_body(unique(LOAD_CONFIG), language="python", mode="fast")
        events = post_events(http, body)
    assert isinstance(events[0], StartEvent)
    assert events[0].language == "python"
    tokens = [e.text for e in events if isinstance(e, TokenEvent)]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert sum(isinstance(e, DoneEvent) for e in events) == 1
    assert len(tokens) >= 2, "the answer arrives in pieces, not at the end"
    # What is shown is the final stage: the streamed answer trimmed to the gap.
    final = [e for e in events if isinstance(e, StageEvent) and e.stage == "final"]
    assert len(final) == 1 and done.text == final[0].text
    assert done.text.split("\n")[0].strip() in "".join(tokens)
    assert done.cached is False
    assert done.finish_reason in ("stop", "length")
    assert done.tokens >= 1 and done.prompt_tokens > 20
    assert done.timings.total_ms >= done.timings.first_token_ms > 0
    # The model reads the file: a JSON loader opens the path or uses json.
    assert "open(" in done.text or "json." in done.text


def test_identical_second_request_is_answered_from_the_cache(daemon):
    body = complete_body(unique(LOAD_CONFIG))
    with daemon.http() as http:
        first = post_events(http, body)[-1]
        second = post_events(http, body)[-1]
    assert first.cached is False
    assert second.cached is True
    assert second.text == first.text
    assert second.timings.total_ms < first.timings.total_ms


def test_cache_can_be_bypassed(daemon):
    body = complete_body(unique(LOAD_CONFIG))
    with daemon.http() as http:
        post_events(http, body)
        again = post_events(http, {**body, "cache": False})[-1]
    assert again.cached is False


def test_kv_prefix_is_reused_when_a_line_is_appended(daemon):
    text = unique(LOAD_CONFIG)
    with daemon.http() as http:
        first = post_events(http, complete_body(text, cache=False))[-1]
        longer = text + "data = {}\n    "
        second = post_events(http, complete_body(longer, cache=False))[-1]
    # The first document shares only the profile header with what the model saw before.
    assert first.reused_tokens < first.prompt_tokens // 2
    assert second.reused_tokens >= first.prompt_tokens - 2


def health(http: httpx.Client) -> dict:
    response = http.get("/health")
    assert response.status_code == 200
    data: dict = response.json()
    return data


def wait_cancelled(http: httpx.Client, before: dict) -> dict:
    """The engine's state once it has ended a job as cancelled since ``before``. Counters, not
    the last job: background work (the whole window read after a cut one) may end after it."""
    for _ in range(300):
        data = health(http)["engine"]
        if data["cancelled"] > before["cancelled"]:
            return data
        time.sleep(0.05)
    raise AssertionError("the engine never ended a job as cancelled")


def test_closing_the_stream_cancels_generation(daemon):
    with daemon.http() as http:
        before = health(http)["engine"]
        body = complete_body(unique(NUMBERS), max_tokens=300, cache=False, deadline_ms=60000)
        with http.stream("POST", "/v1/complete", json=body) as response:
            seen = 0
            for line in response.iter_lines():
                if isinstance(parse_event(line), TokenEvent):
                    seen += 1
                    if seen == 3:
                        break
        state = wait_cancelled(http, before)
        assert state["tokens_generated"] - before["tokens_generated"] < 100
        # The engine takes the next request straight away, and the cut answer was not cached.
        done = post_events(http, {**body, "max_tokens": 8, "cache": True})[-1]
        assert isinstance(done, DoneEvent) and done.cached is False


def test_deadline_cut_answers_are_not_cached(daemon):
    body = complete_body(unique(NUMBERS), max_tokens=200, deadline_ms=300)
    with daemon.http() as http:
        cut = post_events(http, body)[-1]
        assert cut.finish_reason == "deadline"
        assert cut.tokens < 200
        again = post_events(http, {**body, "deadline_ms": 1})[-1]
    assert again.cached is False


def test_max_tokens_is_enforced(daemon):
    with daemon.http() as http:
        done = post_events(http, complete_body(unique(NUMBERS), max_tokens=5, cache=False))[-1]
    assert done.finish_reason == "length"
    assert done.tokens == 5


def assert_error(response: httpx.Response, status: int, code: str, *words: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    for word in words:
        assert word in error["message"], error["message"]


def test_malformed_requests_get_clear_4xx_and_the_daemon_keeps_serving(daemon):
    with daemon.http() as http:
        post = http.post
        assert_error(
            post("/v1/complete", content=b"{not json"), 400, "bad_request", "not valid JSON"
        )
        assert_error(post("/v1/complete", content=b""), 400, "bad_request", "no body")
        assert_error(post("/v1/complete", content=b"\xff\xfe"), 400, "bad_request")
        assert_error(post("/v1/complete", json={"text": "x"}), 422, "invalid_request", "line")
        assert_error(
            post("/v1/complete", json={"text": 3, "line": 0, "column": 0}),
            422,
            "invalid_request",
            "text",
        )
        assert_error(
            post("/v1/complete", json={"text": "x", "line": -1, "column": 0}),
            422,
            "invalid_request",
            "line",
        )
        assert_error(
            post("/v1/complete", json={"text": "a\nb", "line": 7, "column": 0}),
            422,
            "invalid_position",
            "line 7",
        )
        assert_error(
            post("/v1/complete", json={"text": "ab", "line": 0, "column": 9}),
            422,
            "invalid_position",
            "column 9",
        )
        assert_error(
            post("/v1/complete", json={"text": "x", "line": 0, "column": 0, "max_tokens": 10**6}),
            422,
            "invalid_request",
            "max_tokens",
        )
        assert_error(http.get("/v1/complete"), 405, "method_not_allowed")
        assert_error(http.get("/v1/nothing"), 404, "not_found")
        assert health(http)["status"] == "ok"
        done = post_events(http, complete_body(unique(LOAD_CONFIG), max_tokens=4))[-1]
        assert isinstance(done, DoneEvent)


def test_a_5mb_request_is_refused_and_the_daemon_stays_healthy(daemon):
    text = "x = 1\n" * (5 * 1024 * 1024 // 6)
    body = json.dumps({"text": text, "line": 0, "column": 0}).encode()
    assert len(body) > 5_000_000
    with daemon.http() as http:
        assert_error(http.post("/v1/complete", content=body), 413, "too_large", "max_request_bytes")

        def chunks():  # no Content-Length: the limit holds while reading
            for start in range(0, len(body), 65536):
                yield body[start : start + 65536]

        assert_error(http.post("/v1/complete", content=chunks()), 413, "too_large")
        assert health(http)["status"] == "ok"


def test_health_reports_model_backend_and_cache(daemon):
    with daemon.http() as http:
        data = health(http)
    assert data["status"] == "ok"
    # The default catalogue model, by the name its GGUF file gives itself.
    assert data["model"] == "Qwen2.5 Coder 0.5B Instruct AWQ"
    assert data["model_source"] == "embedded"
    default = CATALOG[DEFAULT_MODEL]
    assert data["model_path"] == str(assembled_path(default, daemon.settings.cache_dir))
    assert data["backend"] == "CPU"
    assert data["gpu_offload"] is False
    assert data["prompt_format"] == "qwen2.5-coder"
    assert data["cache_path"] == str(daemon.settings.resolved_cache_path)
    assert data["cache_bytes"] > 0
    assert len(data["fingerprint"]) == 32
    # A CPU build: the engine keeps its settings, and says so at start and in /health.
    sizing = data["sizing"]
    assert (sizing["parallel"], sizing["kv_slots"], sizing["n_ctx"]) == (4, 8, 4096)
    assert sizing["sized"] is False and sizing["device"] is None
    assert sizing["reason"] == "sizing skipped: no GPU offload in this llama.cpp build"
    line = "memory   parallel 4, kv_slots 8, n_ctx 4096 as set; sizing skipped: no GPU offload"
    assert line in daemon.log.read_text()


AREA = "def area(width, height):\n    return "


# A place with more than one likely answer (where the model is sure, as after ``return`` in
# ``area``, no other first token is likely enough to be worth decoding).
OPEN_CHOICE = "def total(rows):\n    s = 0\n    for i in range("


def test_a_fast_completion_lists_its_other_candidates_and_the_cache_keeps_them(daemon):
    body = complete_body(unique(OPEN_CHOICE), language="python")
    with daemon.http() as http:
        first = post_events(http, body)[-1]
        again = post_events(http, body)[-1]
    assert isinstance(first, DoneEvent) and first.route == "fast"
    assert first.text.strip() and first.confidence is not None and 0 < first.confidence <= 1
    texts = [a.text for a in first.alternatives]
    assert texts and first.text not in texts and len(set(texts)) == len(texts)
    assert all(a.text.strip() and a.confidence is not None for a in first.alternatives)
    assert again.cached and again.text == first.text
    assert [a.text for a in again.alternatives] == texts
    assert again.confidence == first.confidence


def test_typing_on_into_a_candidate_keeps_the_candidates_that_begin_with_it(daemon):
    document = unique(OPEN_CHOICE)
    with daemon.http() as http:
        first = post_events(http, complete_body(document, language="python"))[-1]
        assert isinstance(first, DoneEvent) and first.alternatives
        candidates = [first.text, *(a.text for a in first.alternatives)]
        other = candidates[1]
        shared = next(
            (i for i, (a, b) in enumerate(zip(first.text, other, strict=False)) if a != b),
            min(len(first.text), len(other)),
        )
        assert shared < len(other)
        # One character into the second candidate, past where it leaves the first: it is the
        # answer now, with the rest of each other candidate that begins the same way.
        typed = other[: shared + 1]
        on = post_events(http, complete_body(document + typed, language="python"))[-1]
    assert isinstance(on, DoneEvent) and on.cache_match == "typed"
    rests = [c[len(typed) :] for c in candidates if c.startswith(typed) and c != typed]
    assert on.text == other[len(typed) :] == rests[0]
    assert [a.text for a in on.alternatives] == rests[1:]


def test_the_confidence_gate_holds_back_an_answer_and_says_why(tmp_path):
    gated = start_daemon(tmp_path, min_confidence=0.999)
    try:
        with gated.http() as http:
            events = post_events(http, complete_body(unique(AREA), language="python"))
    finally:
        gated.stop()
    done = events[-1]
    final = next(e for e in events if isinstance(e, StageEvent) and e.stage == "final")
    assert isinstance(done, DoneEvent) and done.text == "" and done.withheld
    assert done.confidence is not None and done.confidence < 0.999
    assert final.text == "" and final.ok and "withheld" in (final.reason or "")
