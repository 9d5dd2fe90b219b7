"""What the load test sends: real standard-library files, places typed up to a point, typing
that follows a warmed answer keystroke by keystroke, new places for misses, one typo for fixes;
and the daemon's own figures read from a real ``/metrics`` page."""

from __future__ import annotations

import ast
import random
from collections import Counter

import pytest
from prometheus_client import generate_latest

from daemon.loadtest.corpus import Place, draw_documents
from daemon.loadtest.daemon_figures import parse_metrics
from daemon.loadtest.plan import Planned
from daemon.loadtest.warm import pick_places
from daemon.loadtest.workload import COMPLETE, FIX, Warmed, Workload, WorkloadError
from daemon.observe.metrics import PrometheusView, RequestRecord


@pytest.fixture(scope="module")
def documents():
    return draw_documents(12, seed=1)


def test_the_same_seed_draws_the_same_library_files(documents):
    again = draw_documents(12, seed=1)
    assert [d.path for d in again] == [d.path for d in documents]
    assert [d.path for d in draw_documents(12, seed=2)] != [d.path for d in documents]
    for document in documents:
        assert document.path.endswith(".py") and "test" not in document.path.split("/")[0]
        ast.parse(document.text)


def test_a_place_is_a_statement_typed_up_to_a_mark_with_the_rest_of_its_line_gone(documents):
    rng = random.Random(5)
    for document in documents:
        original = document.text.split("\n")
        line = document.statements[len(document.statements) // 2]
        place = document.place(line, rng)
        if place is None:
            continue
        lines = place.text.split("\n")
        typed = lines[place.line]
        assert len(typed) == place.column and original[line].startswith(typed)
        assert typed.endswith(("(", "= ", "."))
        assert lines[:line] == original[:line] and lines[line + 1 :] == original[line + 1 :]


def test_typing_at_a_place_moves_the_cursor_over_what_was_typed():
    place = Place("a.py", "x = 1\ny = f(\nz = 2", 1, 6)
    one = place.typed("a, b")
    assert (one.text, one.line, one.column) == ("x = 1\ny = f(a, b\nz = 2", 1, 10)
    two = place.typed("a,\n    b")
    assert (two.text, two.line, two.column) == ("x = 1\ny = f(a,\n    b\nz = 2", 2, 5)


def planned(kind: str, n: int) -> list[Planned]:
    return [Planned(i, i * 0.1, kind, i % 3) for i in range(n)]


def test_hits_resend_the_warmed_places_and_typing_types_their_answers_out(documents):
    places = pick_places(documents, 3)
    assert len(places) == 3 and len({p.path for p in places}) == 3
    assert len(pick_places(documents, len(documents) + 5)) <= len(documents)
    warmed = Warmed(places[0], "abc)")
    workload = Workload(documents, places, [warmed, Warmed(places[1], "x")], seed=1)
    hits = [workload.request(p) for p in planned("hits", 6)]
    assert all(r.endpoint == COMPLETE and "cache" not in r.body for r in hits)
    assert [r.body["text"] for r in hits] == [p.text for p in places] * 2
    # A one-character answer cannot be typed on; "abc)" is typed a, ab, abc, then again.
    typing = [workload.request(p) for p in planned("typing", 4)]
    expected = [places[0].typed(t) for t in ("a", "ab", "abc", "a")]
    assert [(r.body["text"], r.body["column"]) for r in typing] == [
        (p.text, p.column) for p in expected
    ]


def test_misses_are_new_places_across_the_documents_past_the_cache(documents):
    places = pick_places(documents, 4)
    workload = Workload(documents, places, [], seed=3)
    misses = [workload.request(p).body for p in planned("misses", 60)]
    assert all(body["cache"] is False for body in misses)
    keys = [(b["path"], b["line"]) for b in misses]
    assert len(set(keys)) == len(keys)
    assert not set(keys) & {(p.path, p.line) for p in places}
    assert Counter(b["path"] for b in misses) == dict.fromkeys([d.path for d in documents], 5)


def test_a_fix_sends_a_file_that_one_lost_colon_breaks(documents):
    workload = Workload(documents, [], [], seed=4)
    for request in (workload.request(p) for p in planned("fixes", 5)):
        assert request.endpoint == FIX and request.body["cache"] is False
        text = str(request.body["text"])
        with pytest.raises(SyntaxError):
            ast.parse(text)
        original = next(d.text for d in documents if d.path == request.body["path"])
        assert len(original) - len(text) == 1
        assert original.replace(":\n", "\n").count("\n") == text.count("\n")


def test_a_kind_with_nothing_to_send_is_refused_before_the_run(documents):
    with pytest.raises(WorkloadError, match="no hits"):
        Workload(documents, [], [], seed=1).check(("hits", "misses"))
    with pytest.raises(WorkloadError, match="typed out"):
        Workload(documents, [], [Warmed(pick_places(documents, 1)[0], "a")], 1).check(("typing",))
    Workload(documents, [], [], seed=1).check(("misses", "fixes"))


def test_the_daemons_figures_are_summed_by_outcome_match_and_code():
    view = PrometheusView()
    records = [
        RequestRecord("complete", "python", "a.py", "u", "done", cached=True, cache_match="exact"),
        RequestRecord("complete", "python", "a.py", "u", "done", cached=True, cache_match="typed"),
        RequestRecord("complete", "go", "m.go", "u", "done", cached=True, cache_match="exact"),
        RequestRecord("complete", None, None, "u", "busy", error_code="busy"),
        RequestRecord("fix", "python", "b.py", "u", "error", error_code="timeout"),
    ]
    for record in records[:2]:
        view.observe(record)
    before = parse_metrics(generate_latest(view.registry).decode())
    for record in records[2:]:
        view.observe(record)
    view.queue_depth.set(3)
    after = parse_metrics(generate_latest(view.registry).decode())
    assert after.requests == {"done": 3, "busy": 1, "error": 1}
    assert after.hits == {"exact": 2, "typed": 1}
    assert after.errors == {"timeout": 1}
    during = after.since(before)
    assert during.requests == {"done": 1, "busy": 1, "error": 1}
    assert during.hits == {"exact": 1} and during.queue_depth == 3
