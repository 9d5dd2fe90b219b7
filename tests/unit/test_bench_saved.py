"""bench_quality's kept answers: a stopped run resumes from the parts it finished."""

from __future__ import annotations

from tests.bench.quality.runs import Answer
from tests.bench.quality.saved import SavedAnswers

SETTINGS = {"tasks": 40, "settings": ["fim", "editor"], "crossfile": 60}


def test_parts_kept_by_a_stopped_run_are_found_by_the_next(tmp_path):
    path = tmp_path / "answers.jsonl"
    first = SavedAnswers(path, SETTINGS)
    kept = [Answer("return x\n", 812.5, {"logic": 400.0, "final": 812.5}), Answer("", 3.0)]
    first.put("qwen", "humaneval|assist", kept)
    with path.open("a") as out:
        out.write('{"model": "qwen", "part": "humaneval|no po')  # the run stopped mid-write

    again = SavedAnswers(path, SETTINGS)
    assert again.get("qwen", "humaneval|assist") == kept
    assert again.get("qwen", "humaneval|no post") is None
    assert again.get("gemma", "humaneval|assist") is None
    again.put("qwen", "humaneval|no post", kept)
    assert SavedAnswers(path, SETTINGS).get("qwen", "humaneval|no post") == kept


def test_answers_of_a_run_with_other_settings_are_not_reused(tmp_path):
    path = tmp_path / "answers.jsonl"
    SavedAnswers(path, SETTINGS).put("qwen", "cross-file|assist", [Answer("x)", 1.0)])
    other = SavedAnswers(path, {**SETTINGS, "crossfile": 120})
    assert other.get("qwen", "cross-file|assist") is None
