"""Progressive output: stages arrive in order, each complete, fast and deep paths differ."""

from __future__ import annotations

from daemon.checks.syntax import check_syntax
from daemon.protocol import DoneEvent, StageEvent, StartEvent, TokenEvent, parse_event
from tests.e2e.documents import LOAD_CONFIG, complete_body, unique


def stream(daemon, path: str, body: dict) -> list:
    with daemon.http() as http, http.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        return [parse_event(line) for line in response.iter_lines() if line.strip()]


def stages_of(events: list) -> list[StageEvent]:
    return [e for e in events if isinstance(e, StageEvent)]


def assert_in_order(stages: list[StageEvent], names: list[str]) -> None:
    assert [s.stage for s in stages] == names
    times = [s.elapsed_ms for s in stages]
    assert times == sorted(times), times


def test_deep_completion_sends_all_four_stages_skeleton_first(daemon):
    text = unique(LOAD_CONFIG)
    events = stream(daemon, "/v1/complete", complete_body(text, cache=False))
    start, done = events[0], events[-1]
    assert isinstance(start, StartEvent) and start.route == "deep"
    assert "body" in (start.route_reason or "")
    stages = stages_of(events)
    assert_in_order(stages, ["skeleton", "logic", "errors", "final"])
    # The skeleton is the frame, sent before the model wrote anything.
    first_token = next(i for i, e in enumerate(events) if isinstance(e, TokenEvent))
    assert events.index(stages[0]) < first_token
    assert stages[0].text.strip() == "..."
    assert isinstance(done, DoneEvent)
    assert done.route == "deep" and done.stages == ["skeleton", "logic", "errors", "final"]
    # Every stage that passed is a complete replacement: the document with it parses.
    for stage in stages:
        if stage.ok:
            assert check_syntax("python", text + stage.text) == [], stage
    assert done.text == stages[-1].text


def test_fast_completion_skips_the_errors_stage(daemon):
    text = unique(LOAD_CONFIG) + "with open(path) as handle:\n        return json.lo"
    events = stream(daemon, "/v1/complete", complete_body(text, cache=False))
    assert events[0].route == "fast"
    stages = stages_of(events)
    assert_in_order(stages, ["skeleton", "logic", "final"])
    done = events[-1]
    assert done.route == "fast" and "errors" not in done.stages
    assert done.route_reason


def test_a_cached_answer_is_sent_as_its_final_stage(daemon):
    body = complete_body(unique(LOAD_CONFIG) + "data = ", cache=True)
    first = stream(daemon, "/v1/complete", body)
    second = stream(daemon, "/v1/complete", body)
    assert second[-1].cached is True
    assert [s.stage for s in stages_of(second)] == ["final"]
    assert stages_of(second)[0].text == stages_of(first)[-1].text


def test_a_stage_that_fails_verification_says_why_and_keeps_the_previous_text(daemon):
    # Two tokens cannot make a whole body: the logic stage fails and the skeleton stands.
    body = complete_body(unique(LOAD_CONFIG), cache=False, max_tokens=2)
    events = stream(daemon, "/v1/complete", body)
    skeleton, logic = stages_of(events)[:2]
    assert logic.stage == "logic" and logic.ok is False
    assert logic.reason and "parse" in logic.reason
    assert logic.text == skeleton.text
    final = stages_of(events)[-1]
    assert final.stage == "final" and final.ok is False
    assert events[-1].verified is False


def test_fix_stages_diagnosis_then_verified_document_with_a_diff(daemon):
    broken = "import json\n\n\ndef load(path)\n    return json.load(open(path))\n"
    events = stream(daemon, "/v1/fix", {"text": broken, "path": "load.py", "cache": False})
    stages = stages_of(events)
    assert_in_order(stages, ["skeleton", "logic", "final"])
    skeleton = stages[0]
    assert "expected ':'" in skeleton.text
    assert skeleton.span is not None and skeleton.span.start_line <= 3 < skeleton.span.end_line
    assert skeleton.diagnostics and skeleton.diagnostics[0].line == 3
    final = stages[-1]
    assert check_syntax("python", final.text) == []
    assert final.diff and "+def load(path):" in final.diff
    done = events[-1]
    assert done.changed is True and done.verified is True and done.text == final.text


def test_the_final_fix_is_formatted_by_the_workspace_formatter(daemon):
    broken = "def total(x)\n    return x+1\n"
    profile = {"language": "python", "tools": ["ruff"], "style": {"line_length": 88}}
    body = {"text": broken, "path": "t.py", "profile": profile, "cache": False}
    events = stream(daemon, "/v1/fix", body)
    final = stages_of(events)[-1]
    assert final.formatter == "ruff"
    assert final.text == "def total(x):\n    return x + 1\n"


def test_fix_of_a_clean_file_changes_nothing(daemon):
    clean = "def ok():\n    return 1\n"
    events = stream(daemon, "/v1/fix", {"text": clean, "path": "ok.py"})
    done = events[-1]
    assert done.changed is False and done.verified is True and done.text == clean
    assert "nothing to fix" in stages_of(events)[0].text


def test_fix_of_a_language_without_a_parser_is_refused(daemon):
    with daemon.http() as http:
        response = http.post("/v1/fix", json={"text": "local x = (", "path": "a.lua"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "unsupported_language"
    assert "lua" in response.json()["error"]["message"]


def test_fixes_are_cached(daemon):
    broken = "def f(x)\n    return x * 2\n"
    body = {"text": broken, "path": "f.py"}
    first = stream(daemon, "/v1/fix", body)[-1]
    second = stream(daemon, "/v1/fix", body)[-1]
    assert first.changed and second.cached is True and second.text == first.text


def test_ruff_findings_count_in_a_ruff_workspace(daemon):
    code = unique("import json\n\n\ndef load(path):\n    return jsn.load(open(path))\n")
    profile = {"language": "python", "tools": ["ruff"]}
    body = {"text": code, "path": "l.py", "profile": profile, "candidates": 1}
    events = stream(daemon, "/v1/fix", body)
    skeleton = stages_of(events)[0]
    codes = {d.code for d in skeleton.diagnostics}
    assert "F821" in codes  # undefined name, found by ruff: the file parses
    assert any(d.source == "ruff" for d in skeleton.diagnostics)
    done = events[-1]
    assert any(d.code == "F821" for d in done.diagnostics)
    if done.changed:
        assert check_syntax("python", done.text) == []
        assert "jsn.load" not in done.text
