"""One daemon for a team: tokens, typed hits, single flight, replacement, 429, feedback."""

from __future__ import annotations

import concurrent.futures
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from daemon.protocol import DoneEvent, ErrorEvent, parse_event
from daemon.tokens import add_user
from tests.e2e.conftest import RunningDaemon, free_port, start_daemon
from tests.e2e.documents import LOAD_CONFIG, NUMBERS, complete_body, unique


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("team")
    tokens = work / "tokens.toml"
    users = {name: add_user(tokens, name) for name in ("alice", "bob", "carol")}
    daemon = start_daemon(
        work,
        tokens=tokens,
        host="0.0.0.0",
        # Plain HTTP, as behind a TLS proxy: these tests are about sharing; tests/e2e/test_tls.py
        # has the daemon's own HTTPS.
        allow_plaintext=True,
        url=None,
        token=users["alice"],
        queue_size=2,
        user_queue_size=1,
        rate_limit_per_minute=0,
        parallel=1,  # one job at a time, so a second request waits and the queue fills
    )
    yield daemon, users, tokens
    daemon.stop()


def http(daemon: RunningDaemon, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"http://127.0.0.1:{daemon.settings.port}"
    return httpx.Client(base_url=url, headers=headers, timeout=120, trust_env=False)


def events(client: httpx.Client, path: str, body: dict) -> list:
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        return [parse_event(line) for line in response.iter_lines() if line.strip()]


def test_tokens_are_required_off_loopback(team):
    daemon, users, _ = team
    with http(daemon, None) as anonymous:
        response = anonymous.get("/health")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
    with http(daemon, "ast_not-a-real-token") as wrong:
        assert wrong.post("/v1/complete", json=complete_body("x = ")).status_code == 401
    with http(daemon, users["bob"]) as bob:
        assert bob.get("/health").status_code == 200
    log = daemon.log.read_text()
    assert "refused GET /health from 127.0.0.1: no token" in log
    assert "unknown token" in log


def test_a_removed_user_is_refused_without_a_restart(team):
    daemon, users, tokens = team
    carol = users["carol"]
    with http(daemon, carol) as client:
        assert client.get("/health").status_code == 200
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "daemon.cli",
                "tokens",
                "remove",
                "carol",
                "--file",
                str(tokens),
            ],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        assert client.get("/health").status_code == 401


def test_token_and_cache_files_are_owner_only(team):
    daemon, _, tokens = team
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    cache = daemon.settings.resolved_cache_path
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert "ast_" not in tokens.read_text()  # hashes only


def test_non_loopback_without_tokens_is_refused():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "daemon.cli",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "without tokens" in out.stderr and "assist tokens add" in out.stderr


def test_one_users_answer_is_an_instant_hit_for_the_next_user(team):
    daemon, users, _ = team
    body = complete_body(unique(LOAD_CONFIG) + "data = ", path="shared.py")
    with http(daemon, users["alice"]) as alice, http(daemon, users["bob"]) as bob:
        first = events(alice, "/v1/complete", body)[-1]
        second = events(bob, "/v1/complete", body)[-1]
    assert first.cached is False
    assert second.cached is True and second.cache_match == "exact"
    assert second.text == first.text


def test_typing_the_first_characters_of_an_answer_still_hits(team):
    daemon, users, _ = team
    text = unique(LOAD_CONFIG) + "with open(path) as handle:\n        data = "
    with http(daemon, users["alice"]) as alice:
        first = events(alice, "/v1/complete", complete_body(text, mode="fast"))[-1]
        answer = first.text
        assert len(answer) > 3, answer
        typed = answer[:2]
        second = events(alice, "/v1/complete", complete_body(text + typed, mode="fast"))[-1]
    assert second.cached is True and second.cache_match == "typed"
    assert second.text == answer[2:]


def test_identical_requests_in_flight_share_one_generation(team):
    daemon, users, _ = team
    body = complete_body(unique(NUMBERS), max_tokens=30, cache=True)
    with http(daemon, users["alice"]) as alice:
        before = alice.get("/health").json()
    with (
        http(daemon, users["alice"]) as alice,
        http(daemon, users["bob"]) as bob,
        concurrent.futures.ThreadPoolExecutor(2) as pool,
    ):
        first = pool.submit(events, alice, "/v1/complete", body)
        time.sleep(0.3)
        second = pool.submit(events, bob, "/v1/complete", body)
        a, b = first.result(), second.result()
        after = alice.get("/health").json()
    assert isinstance(a[-1], DoneEvent) and isinstance(b[-1], DoneEvent)
    assert a[-1].text == b[-1].text
    assert a[-1].request_id != b[-1].request_id
    assert after["workload"]["joined_flights"] > before["workload"]["joined_flights"]
    assert after["engine"]["jobs"] - before["engine"]["jobs"] == 1


def test_a_newer_request_for_the_same_document_replaces_the_older(team):
    daemon, users, _ = team
    older = complete_body(unique(NUMBERS), max_tokens=200, cache=False, path="same.py")
    newer = complete_body(unique(NUMBERS), max_tokens=4, cache=False, path="same.py")
    with (
        http(daemon, users["bob"]) as one,
        http(daemon, users["bob"]) as two,
        concurrent.futures.ThreadPoolExecutor(2) as pool,
    ):
        first = pool.submit(events, one, "/v1/complete", older)
        time.sleep(0.5)
        second = pool.submit(events, two, "/v1/complete", newer)
        replaced, answered = first.result(), second.result()
    assert isinstance(replaced[-1], ErrorEvent) and replaced[-1].code == "replaced"
    assert isinstance(answered[-1], DoneEvent)


def test_a_full_queue_answers_429_with_retry_after(team):
    daemon, users, _ = team
    long = complete_body(unique(NUMBERS), max_tokens=300, cache=False)
    with http(daemon, users["alice"]) as alice, concurrent.futures.ThreadPoolExecutor(2) as pool:
        running = pool.submit(events, alice, "/v1/complete", {**long, "path": "a.py"})
        time.sleep(0.5)
        # Another document (the same one would follow the first request's flight).
        other = {**long, "path": "b.py", "text": long["text"] + " "}
        queued = pool.submit(events, alice, "/v1/complete", other)
        time.sleep(0.3)
        refused = alice.post(
            "/v1/complete", json={**long, "path": "c.py", "text": long["text"] + "#"}
        )
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["error"]["code"] == "busy"
        # Another user still gets in: the per-user bound keeps one user from filling the queue.
        with http(daemon, users["bob"]) as bob:
            answer = events(bob, "/v1/complete", complete_body(unique(LOAD_CONFIG), max_tokens=2))
        assert isinstance(answer[-1], DoneEvent)
        running.result()
        queued.result()


def test_rejected_answers_are_demoted_then_evicted(team):
    daemon, users, _ = team
    body = complete_body(unique(LOAD_CONFIG) + "value = ", mode="fast")
    with http(daemon, users["bob"]) as bob:
        for round_ in range(3):
            done = events(bob, "/v1/complete", body)[-1]
            assert done.cached is (round_ > 0)
            verdict = bob.post(
                "/v1/feedback", json={"request_id": done.request_id, "accepted": False}
            ).json()
            assert verdict["outcome"] == ("evicted" if round_ == 2 else "demoted")
        done = events(bob, "/v1/complete", body)[-1]
    assert done.cached is False  # evicted: computed again


def test_accepting_an_answer_prefetches_the_next_one(team):
    daemon, users, _ = team
    text = unique(LOAD_CONFIG) + "with open(path) as handle:\n        "
    with http(daemon, users["alice"]) as alice:
        done = events(alice, "/v1/complete", complete_body(text, mode="fast"))[-1]
        before = alice.get("/health").json()["workload"]["prefetched"]
        verdict = alice.post("/v1/feedback", json={"request_id": done.request_id, "accepted": True})
        assert verdict.json()["outcome"] == "prefetching"
        for _ in range(300):
            if alice.get("/health").json()["workload"]["prefetched"] > before:
                break
            time.sleep(0.1)
        following = text + done.text
        lines = following.split("\n")
        nxt = {
            "text": following,
            "line": len(lines) - 1,
            "column": len(lines[-1]),
            "path": "app.py",
        }
        answer = events(alice, "/v1/complete", {**nxt, "mode": "fast"})[-1]
    assert answer.cached is True


def test_users_who_accept_most_answers_get_fast_mode(tmp_path: Path):
    daemon = start_daemon(tmp_path)
    try:
        with http(daemon, None) as client:
            client.headers["X-Assist-User"] = "dave"
            for i in range(12):
                client.post("/v1/feedback", json={"request_id": f"r{i}", "accepted": True})
            done = events(client, "/v1/complete", complete_body(unique(LOAD_CONFIG), cache=False))[
                -1
            ]
            assert done.route == "deep" and "fast mode" in (done.route_reason or "")
            assert done.stages == ["skeleton", "logic", "final"]
            client.headers["X-Assist-User"] = "erin"
            done = events(client, "/v1/complete", complete_body(unique(LOAD_CONFIG), cache=False))[
                -1
            ]
            assert "errors" in done.stages
    finally:
        daemon.stop()


def test_the_cli_sends_its_token(team, tmp_path):
    daemon, users, _ = team
    target = tmp_path / "app.py"
    target.write_text(LOAD_CONFIG)
    lines = LOAD_CONFIG.split("\n")
    base = [sys.executable, "-m", "daemon.cli", "complete", str(target), "--line", str(len(lines))]
    args = [*base, "--column", "5", "--port", str(daemon.settings.port)]
    env = {k: v for k, v in os.environ.items() if k != "ASSIST_TOKEN"}
    refused = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode != 0 and "token" in refused.stderr
    allowed = subprocess.run(
        [*args, "--token", users["alice"]], capture_output=True, text=True, env=env, timeout=120
    )
    assert allowed.returncode == 0, allowed.stderr
