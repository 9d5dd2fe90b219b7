"""The deep path's budgets follow the measured speed and the time that is left."""

from __future__ import annotations

import pytest

from daemon.answers.patience import (
    MIN_BODY_TOKENS,
    MIN_WINDOW_TOKENS,
    WINDOW_STEP_TOKENS,
    body_tokens,
    errors_plan,
    fresh_tokens,
    window_within,
)
from daemon.engine.speed import Speed, SpeedMeter

CPU = Speed(prompt_tps=300.0, decode_tps=40.0)
GPU = Speed(prompt_tps=20000.0, decode_tps=400.0)


def test_body_tokens_fit_the_time_left_after_the_prompt() -> None:
    # 4 s, of which 150 prompt tokens take 0.5 s: 3.5 s of writing at 40 tokens/s.
    assert body_tokens(CPU, prompt_tokens=150, left_s=4.0, ceiling=256) == 140


def test_a_fast_machine_gets_the_whole_ceiling() -> None:
    assert body_tokens(GPU, prompt_tokens=150, left_s=4.0, ceiling=256) == 256


def test_a_slow_machine_still_gets_a_short_body() -> None:
    slow = Speed(prompt_tps=50.0, decode_tps=5.0)
    assert body_tokens(slow, prompt_tokens=400, left_s=2.0, ceiling=256) == MIN_BODY_TOKENS
    # ...but never more than the ceiling a client asked for.
    assert body_tokens(slow, prompt_tokens=400, left_s=2.0, ceiling=16) == 16


def test_fresh_tokens_count_what_differs_after_the_shared_prefix() -> None:
    assert fresh_tokens([1, 2, 3, 4], [1, 2, 3, 4, 5, 6]) == 2
    assert fresh_tokens([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert fresh_tokens([], [1, 2]) == 2


def test_the_errors_pass_runs_only_when_it_fits() -> None:
    # A 40-token body: the pass expects 76 tokens (1.9 s) plus 20 prompt tokens.
    fits = errors_plan(CPU, fresh_prompt_tokens=20, body_tokens_used=40, left_s=2.5, ceiling=256)
    assert fits.fits
    assert 76 <= fits.max_tokens <= 256
    late = errors_plan(CPU, fresh_prompt_tokens=20, body_tokens_used=40, left_s=1.5, ceiling=256)
    assert not late.fits
    assert "no time was left for the errors stage" in late.reason
    assert late.max_tokens == 0
    # It needs 1.97 s of 2.1: the plan keeps a tenth of the time as a margin.
    close = errors_plan(CPU, fresh_prompt_tokens=20, body_tokens_used=40, left_s=2.1, ceiling=256)
    assert not close.fits


def test_the_errors_budget_is_capped() -> None:
    plan = errors_plan(GPU, fresh_prompt_tokens=20, body_tokens_used=10, left_s=10, ceiling=64)
    assert plan.fits and plan.max_tokens == 64


def test_the_meter_starts_from_its_first_measurement_then_averages() -> None:
    meter = SpeedMeter(prompt_tps=1.0, decode_tps=1.0, weight=0.5)
    meter.record_decode(40, 1.0)
    assert meter.current().decode_tps == pytest.approx(40.0)
    meter.record_decode(20, 1.0)
    assert meter.current().decode_tps == pytest.approx(30.0)
    meter.record_prompt(300, 1.0)
    assert meter.current().prompt_tps == pytest.approx(300.0)
    assert meter.current().samples == 3


def test_the_meter_ignores_samples_too_small_to_time() -> None:
    meter = SpeedMeter(prompt_tps=100.0, decode_tps=10.0)
    meter.record_prompt(3, 0.0001)
    meter.record_decode(1, 0.0001)
    meter.record_decode(10, 0.0)
    assert meter.current() == Speed(100.0, 10.0, 0)


def test_the_meter_refuses_a_weight_outside_its_range() -> None:
    with pytest.raises(ValueError):
        SpeedMeter(weight=0)


def fit(speed: Speed, tokens: int, cached: int = 0, budget: int = 1536) -> int | None:
    return window_within(
        speed, prompt_tokens=tokens, cached_tokens=lambda: cached, left_s=3.0, budget=budget
    )


def test_a_cold_prompt_too_slow_to_read_in_time_gets_a_smaller_window() -> None:
    slow = Speed(prompt_tps=200.0, decode_tps=30.0)
    # 1,500 tokens take 7.5 s; half of 3 s reads 300, rounded down to the step: 256.
    assert fit(slow, 1500) == 256
    # The same prompt, evaluated already but for its last 100 tokens, fits as it is.
    assert fit(slow, 1500, cached=1400) is None
    # A fast machine reads it in time.
    assert fit(GPU, 1500) is None


def test_what_the_model_holds_is_asked_only_when_a_cold_read_would_not_fit() -> None:
    asked: list[int] = []

    def cached() -> int:
        asked.append(1)
        return 0

    window_within(GPU, prompt_tokens=1500, cached_tokens=cached, left_s=3.0, budget=1536)
    assert asked == []
    slow = Speed(prompt_tps=200.0, decode_tps=30.0)
    window_within(slow, prompt_tokens=1500, cached_tokens=cached, left_s=3.0, budget=1536)
    assert asked == [1]


def test_a_window_is_never_cut_below_its_floor() -> None:
    crawl = Speed(prompt_tps=20.0, decode_tps=3.0)
    assert fit(crawl, 1500) == MIN_WINDOW_TOKENS
    # A prompt already at the floor is left as it is.
    assert fit(crawl, MIN_WINDOW_TOKENS, budget=900) is None


def test_the_same_place_gets_the_same_window_as_the_measured_speed_moves() -> None:
    windows = {fit(Speed(prompt_tps=tps, decode_tps=30.0), 1500) for tps in (350, 370, 390, 410)}
    assert windows == {512}  # 525 to 615 tokens readable
    assert all(
        (fit(Speed(prompt_tps=tps, decode_tps=30.0), 1500) or 0) % WINDOW_STEP_TOKENS == 0
        for tps in range(100, 1000, 37)
    )
