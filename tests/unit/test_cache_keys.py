"""The cache keys hold everything an answer depends on: every field of the route and the shape,
and every setting the completion and repair pipelines read, is in a key or listed here with the
reason it does not change what is answered. A new setting read on either path, or a new field,
fails this test until it is put in one place or the other."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

from daemon.answers.gap.shape import Shape
from daemon.answers.route import Route
from daemon.pipeline.keys import CompletionKey, RepairKey
from daemon.protocol import CompleteRequest, StageEvent
from tests.unit.scripted_backend import ScriptedBackend, by_stage
from tests.unit.test_completion_pipeline import BODY, collect, pipeline, request

ROOT = Path(__file__).resolve().parents[2]

# Settings read on the two paths, and the key field that holds each (what it decides).
SETTINGS_IN_KEY = {
    "temperature": (CompletionKey, "temperature"),
    "postprocess": (CompletionKey, "postprocess"),
    "errors_share": (CompletionKey, "errors_share"),
    "deep_comments": (CompletionKey, "deep_comments"),
    "candidates": (CompletionKey, "daemon_candidates"),
    "token_healing": (CompletionKey, "lead"),
    "fast_max_tokens": (CompletionKey, "max_tokens"),
    "deep_max_tokens": (CompletionKey, "max_tokens"),
    "fix_candidates": (RepairKey, "candidates"),
    "fix_max_tokens": (RepairKey, "max_tokens"),
    "fix_span_lines": (RepairKey, "span_lines"),
    "fix_parser_hints": (RepairKey, "hints"),
    "fix_judge": (RepairKey, "judge"),
}
SETTINGS_NOT_IN_KEY = {
    "prompt_budget_tokens": "sizes the prompt, whose tokens are in the key",
    "suffix_budget_tokens": "sizes the prompt, whose tokens are in the key",
    "context_budget_tokens": "sizes the prompt's context, whose tokens are in the key",
    "min_confidence": "the gate decides when an answer is served; its confidence is kept with it",
    "evict_after_rejects": "what the cache does with a rejected answer, not what is answered",
    "fast_deadline_ms": "bounds the work: an answer its deadline cut is not kept",
    "deep_deadline_ms": "bounds the work: an answer its deadline cut is not kept",
    "deep_target_ms": "sizes the deep path's budget, whose max_tokens is in the key",
    "fix_deadline_ms": "bounds the work: a repair is kept only once verified",
}
ROUTE_NOT_IN_KEY = {
    "reason": "words for the user",
    "deadline_ms": "bounds the work: an answer its deadline cut is not kept",
    "shape": "read from the document around the cursor, whose text the prompt holds",
    "body_indent": "read from the document around the cursor, whose text the prompt holds",
}
ROUTE_IN_KEY = {"kind": "route", "max_tokens": "max_tokens", "skip_errors": "skip_errors"}
SHAPE_IN_KEY = {"max_lines": "client_budget"}  # lifted by a client's own token budget


def settings_read() -> set[str]:
    """The settings the completion and repair pipelines read (``settings.X``,
    ``self.settings.X``)."""
    names: set[str] = set()
    for folder in ("daemon/answers", "daemon/repair"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Attribute):
                    continue
                owner = node.value
                if (isinstance(owner, ast.Name) and owner.id == "settings") or (
                    isinstance(owner, ast.Attribute) and owner.attr == "settings"
                ):
                    names.add(node.attr)
    return names


def test_every_setting_read_is_in_a_key_or_said_not_to_matter():
    read = settings_read()
    assert read, "the scan found no settings: the pipelines moved"
    unlisted = read - SETTINGS_IN_KEY.keys() - SETTINGS_NOT_IN_KEY.keys()
    assert not unlisted, f"settings read but neither in a cache key nor listed: {unlisted}"
    for setting, (key, field) in SETTINGS_IN_KEY.items():
        assert field in {f.name for f in fields(key)}, (setting, key.__name__, field)


def test_every_field_of_the_route_and_the_shape_is_in_the_key_or_said_not_to_matter():
    key_fields = {f.name for f in fields(CompletionKey)}
    route_fields = {f.name for f in fields(Route)}
    assert route_fields == ROUTE_IN_KEY.keys() | ROUTE_NOT_IN_KEY.keys()
    assert set(ROUTE_IN_KEY.values()) <= key_fields
    shape_fields = {f.name for f in fields(Shape)}
    assert set(SHAPE_IN_KEY) <= shape_fields
    assert set(SHAPE_IN_KEY.values()) <= key_fields
    # The rest of the shape is read from the document (ROUTE_NOT_IN_KEY["shape"]).


async def test_a_fast_mode_answer_is_not_served_to_a_user_who_is_not_in_it():
    """Fast mode leaves out the deep path's errors pass: its answer is another answer."""
    backend = ScriptedBackend(
        by_stage(
            logic="return a + b\n",
            errors="if a is None:\n        raise ValueError('a')\n    return a + b\n",
        )
    )
    completions = pipeline(backend)
    completions.book.seed("quick", [True] * 20)  # accepts everything: fast mode
    quick = await collect(await completions.start(request(BODY), "quick"))
    careful = await collect(await completions.start(request(BODY), "careful"))
    assert not careful[-1].cached
    assert "errors" in [e.stage for e in careful if isinstance(e, StageEvent)]
    assert "errors" not in [e.stage for e in quick if isinstance(e, StageEvent)]
    again = await collect(await completions.start(request(BODY), "careful"))
    assert again[-1].cached


async def test_the_daemons_own_candidates_are_part_of_the_key():
    """More candidates ranked can choose another answer: a daemon that decodes three does not
    serve what one that decodes one answered (they may share a cache file)."""
    backend = ScriptedBackend(by_stage(logic="return a + b\n", errors="return a + b\n"))
    one = CompleteRequest(**request(BODY).model_dump())
    await collect(await pipeline(backend, candidates=1).start(one, "alice"))
    three = await collect(await pipeline(backend, candidates=3).start(one, "alice"))
    assert not three[-1].cached
