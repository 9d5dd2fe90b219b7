"""Load: 16 concurrent clients of 4 users against one real daemon for a bounded time.

A real daemon (the real embedded model, real SQLite) with per-user tokens and a small queue
(8 waiting, 3 per user) is sent a mix of completions (some repeated on purpose, so the result
cache answers them; some unique) and fixes of broken Python files, by 16 threads for about 35 s
(a deadline, not a request count). It proves that under overload the daemon:

- never answers 5xx;
- ends every 200 stream with exactly one ``done`` or one ``error`` event, and nothing after it;
- refuses only with 429, a ``Retry-After`` header and a JSON error body;
- serves every user (fairness: each gets some answers, none is starved by the others);
- answers repeated requests from the cache (the share is printed; it is only asserted > 0);
- does not grow its resident memory beyond a bound, and is still healthy afterwards.

Run with ``-s`` to see the counts (200/429, cache share, memory).
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from daemon.tokens import add_user
from tests.e2e.conftest import start_daemon
from tests.e2e.documents import LOAD_CONFIG, NUMBERS, complete_body

USERS = ("ada", "grace", "linus", "barbara")
CLIENTS = 16
LOAD_SECONDS = 35.0
# The daemon keeps saved KV states (bounded by kv_states_bytes, 512 MiB by default) and its
# caches; after the warm-up those are mostly in place, so the load itself must not add more.
RSS_GROWTH_BOUND = 400 * 1024 * 1024

BROKEN = sorted((Path(__file__).parents[1] / "data" / "broken" / "python").glob("*.py"))

# Documents sent again and again, each with a fixed path (the path is part of the prompt).
REPEATED = [
    ("repeat_config.py", LOAD_CONFIG),
    ("repeat_numbers.py", NUMBERS),
    ("repeat_add.py", "def add(a, b):\n    return "),
    ("repeat_env.py", "import os\n\nHOME = os.environ.get("),
    ("repeat_total.py", "values = [1, 2, 3]\ntotal = "),
    ("repeat_greet.py", "def greet(name):\n    message = "),
]
# Unique documents: a fresh first line each time, so neither cache nor single flight applies.
UNIQUE_BODIES = [
    LOAD_CONFIG,
    "def area(width, height):\n    return ",
    "import sys\n\nargs = sys.",
    "class Point:\n    def __init__(self, x, y):\n        self.x = ",
]


@dataclass
class Outcome:
    user: str
    kind: str  # "repeat", "unique" or "fix"
    status: int
    terminal: str | None = None  # "done" or "error" for a 200 stream
    error_code: str | None = None
    cached: bool | None = None
    retry_after: float | None = None
    problems: list[str] = field(default_factory=list)


def check_stream(lines: list[str]) -> tuple[str | None, dict | None, list[str]]:
    """The terminal event of an NDJSON stream, and what is wrong with the stream."""
    problems = []
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            problems.append(f"a line is not JSON: {line[:200]!r}")
    terminals = [i for i, e in enumerate(events) if e.get("event") in ("done", "error")]
    if len(terminals) != 1:
        kinds = [events[i]["event"] for i in terminals]
        problems.append(f"{len(terminals)} terminal events ({kinds}) instead of one")
    if terminals and terminals[0] != len(events) - 1:
        after = [e.get("event") for e in events[terminals[0] + 1 :]]
        problems.append(f"events after the terminal one: {after}")
    if not terminals:
        return None, None, problems
    last = events[terminals[-1]]
    return last["event"], last, problems


def send(http: httpx.Client, user: str, kind: str, path: str, body: dict) -> Outcome:
    with http.stream("POST", path, json=body) as response:
        status = response.status_code
        if status == 200:
            lines = [line for line in response.iter_lines() if line.strip()]
            terminal, last, problems = check_stream(lines)
            outcome = Outcome(user, kind, status, terminal, problems=problems)
            if last is not None and terminal == "done":
                outcome.cached = bool(last.get("cached"))
            elif last is not None:
                outcome.error_code = last.get("code")
            return outcome
        raw = response.read()
    outcome = Outcome(user, kind, status)
    if status != 429:
        outcome.problems.append(f"status {status}: {raw[:300]!r}")
        return outcome
    retry_after = response.headers.get("retry-after")
    if retry_after is None:
        outcome.problems.append("a 429 without Retry-After")
    elif not retry_after.isdigit() or int(retry_after) < 1:
        outcome.problems.append(f"a 429 whose Retry-After is {retry_after!r}, not seconds")
    else:
        outcome.retry_after = float(retry_after)
    try:
        error = json.loads(raw)["error"]
        outcome.error_code = error["code"]
        assert isinstance(error["message"], str)
    except (ValueError, KeyError, TypeError, AssertionError):
        outcome.problems.append(f"a 429 whose body is not a JSON error: {raw[:300]!r}")
    return outcome


def next_request(rng: random.Random, client: int) -> tuple[str, str, dict]:
    roll = rng.random()
    if roll < 0.5:
        path, text = rng.choice(REPEATED)
        return "repeat", "/v1/complete", complete_body(text, path=path)
    if roll < 0.8:
        text = f"# {uuid.uuid4().hex}\n{rng.choice(UNIQUE_BODIES)}"
        return "unique", "/v1/complete", complete_body(text, path=f"client{client}.py")
    broken = rng.choice(BROKEN)
    return "fix", "/v1/fix", {"text": broken.read_text(), "path": broken.name}


def client_loop(
    url: str, token: str, user: str, client: int, stop_at: float, results: list[Outcome]
) -> None:
    rng = random.Random(client)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=180, trust_env=False) as http:
        while time.monotonic() < stop_at:
            kind, path, body = next_request(rng, client)
            try:
                outcome = send(http, user, kind, path, body)
            except httpx.HTTPError as exc:
                outcome = Outcome(user, kind, 0, problems=[f"transport error: {exc!r}"])
            results.append(outcome)
            if outcome.status == 429:
                # A polite client waits as told, a little less so the queue stays contended.
                time.sleep(min(2.0, outcome.retry_after or 1.0) * rng.uniform(0.2, 1.0))


def rss(pid: int) -> int:
    return int(psutil.Process(pid).memory_info().rss)


def test_sixteen_clients_of_four_users_get_answers_or_429s(tmp_path):
    tokens_file = tmp_path / "tokens.toml"
    tokens = {user: add_user(tokens_file, user) for user in USERS}
    daemon = start_daemon(
        tmp_path,
        token=tokens[USERS[0]],
        tokens=tokens_file,
        queue_size=8,
        user_queue_size=3,
        fast_max_tokens=12,
        deep_max_tokens=24,
        fix_candidates=1,
        fix_max_tokens=48,
        rate_limit_per_minute=0,
        fast_deadline_ms=30000,
        deep_deadline_ms=60000,
        fix_deadline_ms=60000,
    )
    try:
        headers = {"Authorization": f"Bearer {tokens[USERS[0]]}"}
        with httpx.Client(
            base_url=daemon.url, headers=headers, timeout=120, trust_env=False
        ) as http:
            assert httpx.get(f"{daemon.url}/health", trust_env=False).status_code == 401
            # Warm up: every kind of request once, so memory measured before is steady state.
            for kind, path, body in (
                ("repeat", "/v1/complete", complete_body(LOAD_CONFIG, path="warm.py")),
                ("unique", "/v1/complete", complete_body(NUMBERS, path="warm.py", cache=False)),
                ("fix", "/v1/fix", {"text": BROKEN[0].read_text(), "path": BROKEN[0].name}),
            ):
                warm = send(http, USERS[0], kind, path, body)
                assert warm.status == 200 and warm.terminal == "done", warm
            before = rss(daemon.process.pid)

            results: list[Outcome] = []
            stop_at = time.monotonic() + LOAD_SECONDS
            threads = [
                threading.Thread(
                    target=client_loop,
                    args=(daemon.url, tokens[user], user, i, stop_at, results),
                    name=f"load-client-{i}",
                )
                for i, user in enumerate(USERS[i % len(USERS)] for i in range(CLIENTS))
            ]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                # Bounded: requests started before the deadline finish within their own deadlines.
                thread.join(timeout=LOAD_SECONDS + 240)
            elapsed = time.monotonic() - started
            assert not any(t.is_alive() for t in threads), "a client is still waiting"

            after = rss(daemon.process.pid)
            health = http.get("/health")
            assert health.status_code == 200
            state = health.json()
            assert state["status"] == "ok"
            assert daemon.process.poll() is None
            # A request after the load is served normally.
            again = send(http, USERS[1], "repeat", "/v1/complete", complete_body(LOAD_CONFIG))
            assert again.status == 200 and again.terminal == "done", again
    finally:
        daemon.stop()

    statuses = Counter(r.status for r in results)
    terminals = Counter(r.terminal for r in results if r.status == 200)
    stream_errors = Counter(r.error_code for r in results if r.terminal == "error")
    refusals = Counter(r.error_code for r in results if r.status == 429)
    repeats = [r for r in results if r.kind == "repeat" and r.terminal == "done"]
    from_cache = sum(1 for r in repeats if r.cached)
    share = from_cache / len(repeats) if repeats else 0.0
    per_user = {
        user: Counter(r.terminal or str(r.status) for r in results if r.user == user)
        for user in USERS
    }
    print()
    print(
        f"load: {len(results)} requests from {CLIENTS} clients of {len(USERS)} users "
        f"in {elapsed:.1f} s (sending for {LOAD_SECONDS:.0f} s)"
    )
    print(f"  status      {dict(sorted(statuses.items()))}")
    print(f"  200 streams {dict(terminals)}; error events {dict(stream_errors)}")
    print(f"  429 codes   {dict(refusals)}")
    print(f"  by kind     {dict(Counter((r.kind, r.status) for r in results))}")
    print(f"  by user     {per_user}")
    print(
        f"  repeated completions answered from the cache: {from_cache}/{len(repeats)} = {share:.0%}"
    )
    print(
        f"  daemon RSS  {before / 2**20:.0f} MiB before, {after / 2**20:.0f} MiB after "
        f"({(after - before) / 2**20:+.0f} MiB; bound +{RSS_GROWTH_BOUND / 2**20:.0f} MiB); "
        f"kv states {state['workload'].get('kv_state_bytes', 0) / 2**20:.0f} MiB"
    )
    print(f"  workload    {state['workload']}")

    problems = [(r.user, r.kind, r.status, p) for r in results for p in r.problems]
    assert not problems, problems[:20]
    assert not [s for s in statuses if s >= 500], statuses
    assert set(statuses) <= {200, 429}, statuses
    for user in USERS:
        assert per_user[user]["done"] > 0, f"{user} got no answer: {per_user}"
    assert from_cache > 0, "no repeated request was answered from the cache"
    assert after - before <= RSS_GROWTH_BOUND, (before, after)
