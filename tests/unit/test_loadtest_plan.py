"""The load test's plan and figures: the mix, the open-loop schedule, percentiles, the rate held
and the verdict of ``--expected``."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from daemon.cli.loadtest import options_from
from daemon.loadtest.driver import Outcome
from daemon.loadtest.plan import Mix, PlanError, interleave, schedule, users_for
from daemon.loadtest.tally import Limits, figures_of, judge, rate_of, table


def test_a_mix_is_parsed_with_kinds_in_a_fixed_order_and_zero_weights_left_out():
    mix = Mix.parse("fixes=2, hits=60,misses=0,typing=30")
    assert mix.weights == (("hits", 60.0), ("typing", 30.0), ("fixes", 2.0))
    assert mix.describe() == "hits 65%, typing 33%, fixes 2%"
    assert Mix.only("misses").kinds() == ("misses",)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hits=60,reads=5", "KIND=WEIGHT"),
        ("hits", "KIND=WEIGHT"),
        ("hits=lots", "'lots' is not a number"),
        ("hits=-1", "0 or more"),
        ("hits=nan", "0 or more"),
        ("hits=1,hits=2", "given twice"),
        ("hits=0,misses=0", "at least one kind"),
        ("", "at least one kind"),
    ],
)
def test_a_bad_mix_says_what_to_write(text, says):
    with pytest.raises(PlanError, match=says):
        Mix.parse(text)


def test_kinds_are_interleaved_in_exact_proportions_and_spread_evenly():
    order = interleave(Mix.parse("hits=60,typing=30,misses=8,fixes=2"), 1000)
    assert Counter(order) == {"hits": 600, "typing": 300, "misses": 80, "fixes": 20}
    # Any stretch of 50 requests already has the mix, give or take one of each kind.
    for start in range(0, 950, 50):
        window = Counter(order[start : start + 50])
        assert abs(window["hits"] - 30) <= 1 and abs(window["typing"] - 15) <= 1
        assert abs(window["misses"] - 4) <= 1


def test_the_schedule_is_evenly_spaced_at_the_rate_with_users_taking_turns():
    plan = schedule(20.0, 3.0, Mix.parse("hits=1,misses=1"), users=4)
    assert len(plan) == 60
    assert [p.index for p in plan] == list(range(60))
    assert [p.at for p in plan[:3]] == [0.0, 0.05, 0.1]
    assert plan[-1].at == pytest.approx(2.95)
    assert [p.user for p in plan[:6]] == [0, 1, 2, 3, 0, 1]
    assert Counter(p.kind for p in plan) == {"hits": 30, "misses": 30}


@pytest.mark.parametrize(
    ("rate", "duration", "users"), [(0, 10, 4), (-1, 10, 4), (10, 0, 4), (10, 10, 0)]
)
def test_a_schedule_without_requests_or_users_is_refused(rate, duration, users):
    with pytest.raises(PlanError):
        schedule(rate, duration, Mix.only("hits"), users)


def test_users_grow_with_the_rate():
    assert users_for(1) == 4
    assert users_for(100) == 25
    assert users_for(120) == 30


def outcome(kind="hits", result="ok", latency=10.0, ended=1.0, cached=True, code=None, cut=False):
    return Outcome(
        kind, result, latency, lag_ms=0.5, ended_s=ended, code=code, cached=cached, cut=cut
    )


def test_every_request_sent_is_counted_once_and_latency_is_of_answers_only():
    outcomes = [outcome(latency=float(v)) for v in range(1, 101)]
    outcomes += [
        outcome(result="429", latency=1.0, code="busy"),
        outcome(result="error", latency=5000.0, code="replaced"),
        outcome(result="hung", latency=60000.0),
        outcome(kind="misses", latency=900.0, cached=False),
        outcome(kind="misses", latency=3000.0, cached=False, cut=True),
    ]
    rows = table(outcomes, ["hits", "misses"])
    hits, misses, total = rows
    assert (hits.sent, hits.ok, hits.refused, hits.errors, hits.hung) == (103, 100, 1, 1, 1)
    assert (hits.p50_ms, hits.p90_ms, hits.p99_ms, hits.mean_ms) == (50, 90, 99, 50.5)
    assert hits.cached == 100
    assert (misses.sent, misses.ok, misses.cached, misses.cut) == (2, 2, 0, 1)
    assert (misses.p50_ms, misses.p99_ms) == (900, 3000)
    assert hits.cut == 0
    assert total.kind == "all" and total.sent == 105 and total.ok == 102 and total.cut == 1
    assert figures_of("typing", []).p50_ms is None


def test_the_rate_held_counts_answers_until_the_last_one():
    # 100 answers asked at 10/s for 10 s: on time they are held at 10/s; when the last comes
    # 2.5 s after the sending ends, the run held 100 / 12.5 s.
    on_time = [outcome(ended=0.1 * i + 0.05) for i in range(100)]
    assert rate_of(on_time, 10, 10).held == pytest.approx(10.0)
    late = [*on_time[:-1], outcome(ended=12.5)]
    rate = rate_of(late, 10, 10)
    assert rate.held == pytest.approx(8.0) and rate.elapsed_s == 12.5
    refused = [*on_time[:50], *(outcome(result="429") for _ in range(50))]
    assert rate_of(refused, 10, 10).held == pytest.approx(5.0)


def test_a_run_held_only_when_every_request_was_answered_in_time_and_in_the_limits():
    answered = [outcome(latency=50.0, ended=0.1 * i) for i in range(100)]
    total = table(answered, ["hits"])[-1]
    assert judge(total, rate_of(answered, 10, 10), Limits()).held
    assert judge(total, rate_of(answered, 10, 10), Limits(mean_ms=60, p99_ms=50)).held

    too_slow = judge(total, rate_of(answered, 10, 10), Limits(p99_ms=40))
    assert not too_slow.held and too_slow.reasons == ["P99 latency 50 ms, over the 40 ms limit"]
    behind = judge(total, rate_of(answered, 12, 10), Limits())
    assert not behind.held and "under 95% of the 12/s asked" in behind.reasons[0]

    mixed = [
        *answered[:96],
        outcome(result="429"),
        outcome(result="error"),
        outcome(result="hung"),
        outcome(cut=True),
    ]
    verdict = judge(table(mixed, ["hits"])[-1], rate_of(answered, 10, 10), Limits())
    assert not verdict.held
    assert [r.split(" ")[:3] for r in verdict.reasons] == [["1", "of", "100"]] * 4
    assert verdict.reasons[-1] == "1 of 100 answers were cut at their deadline"


def args(**over):
    base = dict(
        rate=None, duration=60.0, mix=None, only=None, expected=None, timeout=60.0,
        users=None, places=16, seed=1, max_mean_ms=None, max_p99_ms=None,
    )  # fmt: skip
    base.update(over)
    return argparse.Namespace(**base)


def test_expected_runs_at_120_percent_and_rate_or_expected_not_both():
    options = options_from(args(expected=100.0, only="hits"))
    assert options.rate == pytest.approx(120.0) and options.users == 30
    assert options.mix.kinds() == ("hits",)
    assert options_from(args()).rate == 10.0
    assert options_from(args()).mix.kinds() == ("hits", "typing", "misses", "fixes")
    with pytest.raises(PlanError, match="not both"):
        options_from(args(rate=10.0, expected=5.0))
    with pytest.raises(PlanError, match="above 0"):
        options_from(args(expected=0.0))
    with pytest.raises(PlanError, match="duration"):
        options_from(args(duration=0.0))
