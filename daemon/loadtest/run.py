"""A load test from start to end: the daemon checked, places warmed, the plan sent, figures."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from daemon.loadtest.corpus import CorpusError, Document, draw_documents
from daemon.loadtest.daemon_figures import DaemonFigures, settled_figures
from daemon.loadtest.driver import Answer, Outcome, exchange, run_open_loop
from daemon.loadtest.plan import Mix, Planned, schedule
from daemon.loadtest.tally import KindFigures, Limits, Rate, Verdict, judge, rate_of, table
from daemon.loadtest.warm import WarmReport, pick_places, warm_up
from daemon.loadtest.workload import Request, Workload, WorkloadError

DOCUMENTS = 48  # files drawn: misses and fixes go through them one after another


class LoadTestError(RuntimeError):
    """The test could not run (no daemon, no token, nothing to send); the message says why."""


@dataclass(frozen=True)
class Options:
    rate: float
    duration: float
    mix: Mix
    users: int
    timeout: float
    places: int
    seed: int
    limits: Limits


@dataclass(frozen=True)
class Report:
    model: str
    warm: WarmReport
    rows: list[KindFigures]
    rate: Rate
    verdict: Verdict
    outcomes: list[Outcome]
    daemon: DaemonFigures | None  # what /metrics counted during the run


async def check_daemon(http: httpx.AsyncClient) -> str:
    """The daemon's model, once it answers ``/health`` ready; else ``LoadTestError``."""
    url = str(http.base_url)
    try:
        response = await http.get("/health", timeout=10.0)
    except httpx.HTTPError as exc:
        raise LoadTestError(f"no assist daemon answers at {url} ({exc})") from exc
    if response.status_code == 401:
        raise LoadTestError(
            f"the daemon at {url} needs a valid token: --token, ASSIST_TOKEN or `token` in the "
            "config file"
        )
    if response.status_code != 200:
        raise LoadTestError(f"the daemon at {url} answered /health with {response.status_code}")
    health = response.json()
    if health.get("status") != "ok":
        raise LoadTestError(f"the daemon at {url} is still loading its model: try again soon")
    return str(health.get("model", "?"))


Connect = Callable[[], httpx.AsyncClient]


async def run_load_test(connect: Connect, options: Options, say: Callable[[str], None]) -> Report:
    """Run the test ``options`` describe against the daemon that ``connect``'s clients reach."""
    async with connect() as http:
        model = await check_daemon(http)
        try:
            documents = draw_documents(DOCUMENTS, options.seed)
        except CorpusError as exc:
            raise LoadTestError(str(exc)) from exc
        warm, workload = await _warmed(http, documents, options, say)
        plan = schedule(options.rate, options.duration, options.mix, options.users)
        try:
            workload.check(options.mix.kinds())
            # Every body is built before the clock starts, so building one never delays a send.
            requests = {p.index: workload.request(p) for p in plan}
        except WorkloadError as exc:
            raise LoadTestError(str(exc)) from exc
        before = await settled_figures(http)
        say(f"sending {len(plan)} requests at {options.rate:g}/s for {options.duration:g} s…")
        outcomes = await _sent(connect, plan, requests, options)
        after = await settled_figures(http)
    rows = table(outcomes, options.mix.kinds())
    rate = rate_of(outcomes, options.rate, options.duration)
    verdict = judge(rows[-1], rate, options.limits)
    during = after.since(before) if after is not None and before is not None else None
    return Report(model, warm, rows, rate, verdict, outcomes, during)


async def _warmed(
    http: httpx.AsyncClient,
    documents: list[Document],
    options: Options,
    say: Callable[[str], None],
) -> tuple[WarmReport, Workload]:
    """The warm-up the mix needs (none without hits or typing), and the run's workload."""
    kinds = options.mix.kinds()
    if "hits" not in kinds and "typing" not in kinds:
        return WarmReport(0, 0, 0, 0, 0, 0.0), Workload(documents, [], [], options.seed)
    places = pick_places(documents, options.places)
    say(f"warming {len(places)} places (answered until they come from the cache)…")
    hits, typing, warm = await warm_up(http, places, options.users, typing="typing" in kinds)
    return warm, Workload(documents, hits, typing, options.seed)


# Each virtual user sends through a client of its own, as each programmer's editor has its own
# connections. One pool for every request would cost the sender more than the daemon once
# answers fall behind: httpx's pool scans its connections for each request it places.
async def _sent(
    connect: Connect, plan: list[Planned], requests: dict[int, Request], options: Options
) -> list[Outcome]:
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(connect()) for _ in range(options.users)]

        async def send(planned: Planned) -> Answer:
            request = requests[planned.index]
            user = f"loadtest-{planned.user + 1}"
            http = clients[planned.user]
            return await exchange(http, request.endpoint, request.body, user)

        return await run_open_loop(plan, send, options.timeout)
