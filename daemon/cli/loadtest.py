"""``assist loadtest``: drive a daemon at a set rate with a realistic mix, print what held.
Exit 0, or 1 when a judged run did not hold or the daemon could not be tested, 2 for bad usage."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import asdict
from typing import Any

from daemon.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, console, err, print_json
from daemon.client.daemon_client import DaemonClient
from daemon.loadtest.plan import DEFAULT_MIX, Mix, PlanError, schedule, users_for
from daemon.loadtest.run import LoadTestError, Options, Report, run_load_test
from daemon.loadtest.tally import Limits, as_json, codes
from daemon.settings import Settings

# --expected QPS runs at this much of it: a daemon that holds 120% has room for a busy minute.
HEADROOM = 1.2
CONNECTIONS = 100  # connections a virtual user may open: an open loop must not wait for one


def options_from(args: argparse.Namespace) -> Options:
    """The run ``args`` ask for; ``PlanError`` with the fix when they do not make one."""
    if args.expected is not None and args.rate is not None:
        raise PlanError("give --rate or --expected (which runs at 120% of it), not both")
    if args.expected is not None:
        if not args.expected > 0:
            raise PlanError(f"--expected is requests a second, above 0 (not {args.expected:g})")
        rate = args.expected * HEADROOM
    else:
        rate = args.rate if args.rate is not None else 10.0
    mix = Mix.only(args.only) if args.only else Mix.parse(args.mix or DEFAULT_MIX)
    users = args.users if args.users is not None else users_for(rate)
    if args.timeout <= 0 or args.places < 1:
        raise PlanError("--timeout is seconds above 0, --places at least 1")
    schedule(rate, args.duration, mix, users)  # checks rate, duration and users
    return Options(
        rate=rate,
        duration=args.duration,
        mix=mix,
        users=users,
        timeout=args.timeout,
        places=args.places,
        seed=args.seed,
        limits=Limits(args.max_mean_ms, args.max_p99_ms),
    )


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"


def _counts(counts: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:,.0f}" for k, v in counts.items()) or "none"


def print_report(report: Report, options: Options, url: str, expected: float | None) -> None:
    from rich.table import Table

    out = console(width=None if sys.stdout.isatty() else 140)
    out.print(
        f"assist loadtest: {url} ({report.model}), {options.rate:g}/s for {options.duration:g} s"
        f", {options.mix.describe()}, {options.users} users, timeout {options.timeout:g} s"
    )
    w = report.warm
    if w.places:
        out.print(
            f"warm-up: {w.places} places sent before the clock started ({w.rounds} rounds, "
            f"{w.seconds:.1f} s): {w.cached} answered from the cache (hits re-send them)"
            + (f", {w.typing} hit when typed on (typing types them out)" if w.typing else "")
        )
    t = Table(title_justify="left")
    heads = ("kind", "sent", "ok", "429", "errors", "hung", "cached", "cut")
    for head in (*heads, "p50 ms", "p90 ms", "p99 ms", "mean ms"):
        t.add_column(head, justify="left" if head == "kind" else "right")
    for r in report.rows:
        counts = (r.sent, r.ok, r.refused, r.errors, r.hung, r.cached, r.cut)
        latencies = (r.p50_ms, r.p90_ms, r.p99_ms, r.mean_ms)
        t.add_row(r.kind, *(f"{c:,}" for c in counts), *(_ms(v) for v in latencies))
    out.print(t)
    rate = report.rate
    lag = _ms(rate.lag_p99_ms)
    out.print(
        f"rate: asked {rate.asked:g}/s, held {rate.held:.1f}/s ({report.rows[-1].ok:,} answered "
        f"in {rate.elapsed_s:.1f} s); requests started up to {lag} ms late (P99 of the sender)"
    )
    out.print(f"429 by reason: {_counts(codes(report.outcomes, '429'))}")
    out.print(f"errors by code: {_counts(codes(report.outcomes, 'error'))}")
    d = report.daemon
    if d is None:
        out.print("the daemon's /metrics: not available")
    else:
        out.print(
            f"the daemon's /metrics during the run: requests {_counts(d.requests)}; cache hits "
            f"{_counts(d.hits)}; errors {_counts(d.errors)}; queue now {d.queue_depth or 0:g}"
        )
    v = report.verdict
    said = "held" if v.held else "NOT held: " + "; ".join(v.reasons)
    if expected is not None:
        out.print(f"expected {expected:g}/s, run at {options.rate:g}/s (120%): {said}")
    else:
        out.print(f"{options.rate:g}/s: {said}")


def report_json(report: Report, options: Options, url: str) -> dict[str, Any]:
    return {
        "url": url,
        "model": report.model,
        "options": {**asdict(options), "mix": dict(options.mix.weights)},
        "warm": asdict(report.warm),
        **as_json(report.rows, report.rate),
        "refusals": codes(report.outcomes, "429"),
        "errors": codes(report.outcomes, "error"),
        "verdict": asdict(report.verdict),
        "daemon": asdict(report.daemon) if report.daemon is not None else None,
    }


async def _run(settings: Settings, options: Options) -> Report:
    def say(line: str) -> None:
        print(f"assist loadtest: {line}", file=sys.stderr, flush=True)

    return await run_load_test(lambda: DaemonClient.async_http(settings, CONNECTIONS), options, say)


# It reaches the daemon as every other command does (``--url``, ``--token``, the config file). The
# figures go to stdout (a table, or ``--json``), progress to stderr. Exit status 0, or 1 when the
# run was judged (``--expected``, ``--max-mean-ms``, ``--max-p99-ms``) and did not hold or the
# daemon could not be tested, 2 for bad usage.
def run_loadtest(settings: Settings, args: argparse.Namespace) -> int:
    try:
        options = options_from(args)
    except PlanError as exc:
        err(str(exc))
        return EXIT_USAGE
    try:
        report = asyncio.run(_run(settings, options))
    except LoadTestError as exc:
        err(str(exc))
        return EXIT_FAILED
    url = settings.daemon_url
    if args.json:
        print_json(report_json(report, options, url))
    else:
        print_report(report, options, url, args.expected)
    judged = args.expected is not None or options.limits != Limits()
    return EXIT_FAILED if judged and not report.verdict.held else EXIT_OK
