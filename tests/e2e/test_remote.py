"""Remote generation backends: a daemon in front of real ``llama_cpp.server`` processes.

Three servers on loopback ports serve the embedded Gemma model; daemons started with
``--backend`` send them every generation. The tests kill servers with ``kill -9`` while
requests stream, and check that no request hangs, every stream ends in ``done`` or a clean
``error`` event, a request whose server died before its first token is answered by another,
the survivors take the load, and a revived server is put back and used again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from daemon.client.launcher import free_port
from daemon.engine.jobs import Budget, Finished
from daemon.engine.remote.engine import RemoteEngine
from daemon.engine.remote.markers import MarkerIds
from daemon.engine.remote.pool import BackendPool
from daemon.settings import load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model
from tests.e2e.conftest import RunningDaemon, start_daemon
from tests.e2e.documents import LOAD_CONFIG, complete_body
from tests.e2e.llama_servers import MODEL, LlamaServer, start_servers
from tests.e2e.recording_proxy import RecordingProxy

BROKEN = "import os\n\n\ndef files(root):\n    return sorted(os.listdir(root)\n"


def document(name: str) -> str:
    """A document of its own (its opening differs from every other's), longer than the
    blocks that routing hashes."""
    header = "".join(
        f"# {name}: line {i} of a module header that names this document\n" for i in range(6)
    )
    return header + LOAD_CONFIG


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LlamaServer]]:
    running = start_servers(3, tmp_path_factory.mktemp("servers"))
    yield running
    for server in running:
        server.kill()


@pytest.fixture
def all_up(servers: list[LlamaServer]) -> list[LlamaServer]:
    """Every server answering at the start of a test (an earlier one may have killed one)."""
    for server in servers:
        if not server.answers():
            server.start()
    return servers


def remote_daemon(work: Path, servers: list[LlamaServer], **overrides: Any) -> RunningDaemon:
    values: dict[str, Any] = {
        "model": MODEL,
        "backend": [s.url for s in servers],
        "backend_limit": 1,
        "backend_check_s": 0.5,
        "queue_size": 16,
        "user_queue_size": 16,
        "fast_max_tokens": 16,
        "deep_max_tokens": 32,
    }
    values.update(overrides)
    return start_daemon(work, **values)


def backends(running: RunningDaemon) -> dict[str, dict[str, Any]]:
    with running.http() as http:
        engine = http.get("/health").json()["engine"]
    assert engine["kind"] == "remote"
    return {b["url"]: b for b in engine["backends"]}


def ask(running: RunningDaemon, path: str, body: dict[str, Any]) -> tuple[int, str, str]:
    """Send a request and read its stream to the end: the status, the last event's kind and
    its text (or error message)."""
    with (
        httpx.Client(base_url=running.url, timeout=120, trust_env=False) as http,
        http.stream("POST", path, json=body) as response,
    ):
        if response.status_code != 200:
            response.read()
            return response.status_code, "refused", response.text
        last: dict[str, Any] = {}
        for line in response.iter_lines():
            if line.strip():
                last = json.loads(line)
        return 200, last.get("event", "none"), last.get("text") or last.get("message", "")


def complete(name: str, typed: str = "", mode: str = "fast") -> dict[str, Any]:
    """A completion of a document of its own (its own path too: a newer request for the same
    path replaces an older one)."""
    body = complete_body(document(name) + typed, cache=False, mode=mode)
    body["path"] = f"{name.replace(' ', '_')}.py"
    return body


def finish(engine: RemoteEngine, tokens: list[int], budget: Budget) -> Finished:
    """Submit a job to ``engine`` and wait for its end."""
    done: list[Finished] = []
    engine.submit(
        tokens, budget, sink=lambda e: done.append(e) if isinstance(e, Finished) else None
    )
    end = time.monotonic() + 60
    while not done and time.monotonic() < end:
        time.sleep(0.05)
    assert done, "the job did not end"
    return done[0]


def gemma_vocabulary() -> LoadedModel:
    settings = load_settings()
    resolved = resolve_model(None, settings.cache_dir, MODEL)
    return LoadedModel(resolved, 1024, 512, 1, 0, None, None, vocab_only=True)


def test_a_jobs_banned_tokens_are_never_written_by_a_backend(all_up):
    """A job's banned tokens go to the server as the protocol's logit bias."""
    model = gemma_vocabulary()
    pool = BackendPool([all_up[0].url], limit=1, check_s=0.5)
    assert pool.check_all() == 1  # up before the first job, as the daemon checks at start
    engine = RemoteEngine(model, pool)
    engine.start()
    tokens = model.tokenize_text(LOAD_CONFIG)

    def first_token(banned: tuple[int, ...]) -> str:
        budget = Budget(max_tokens=1, deadline=time.perf_counter() + 60, banned=banned)
        done = finish(engine, tokens, budget)
        assert done.reason in ("stop", "length"), done
        return done.text

    try:
        favourite = first_token(())
        assert favourite
        ban = tuple(dict.fromkeys(model.tokenize_text(favourite)[:1]))
        assert first_token(ban) != favourite
        assert first_token(()) == favourite
    finally:
        engine.close()
        model.close()


def test_thinking_markers_learned_from_the_servers_tokenizer_go_with_every_request(all_up):
    """The markers' ids come from the server's own tokenizer (asked once), every completion
    request the server receives forbids them with a logit bias, and the answers still come."""
    model = gemma_vocabulary()
    # Gemma 3 has none of the thinking markers: two of its special tokens stand in for them,
    # beside one it spells in plain text.
    markers = ("<think>", "<start_of_turn>", "<end_of_turn>")
    wanted = {marker: model.special_token(marker) for marker in markers[1:]}
    assert None not in wanted.values() and model.special_token("<think>") is None
    proxy = RecordingProxy(all_up[0].url).start()
    pool = BackendPool([proxy.url], limit=1, check_s=600, markers=markers)
    engine = RemoteEngine(model, pool)
    try:
        assert pool.check_all() == 1
        server = pool.servers[0]
        assert server.marker_ids == MarkerIds(wanted, "llama-cpp-python")
        asked = len(proxy.bodies("/extras/tokenize"))
        assert asked == len(markers) + 1  # the markers, and the empty text (its BOS)
        assert pool.check_all() == 1 and len(proxy.bodies("/extras/tokenize")) == asked
        engine.start()
        tokens = model.tokenize_text(LOAD_CONFIG)
        for banned in ((), tuple(model.tokenize_text(" data")[:1])):
            budget = Budget(max_tokens=8, deadline=time.perf_counter() + 60, banned=banned)
            done = finish(engine, tokens, budget)
            assert done.reason in ("stop", "length") and done.text, done
            sent = proxy.bodies("/v1/completions")[-1]
            bias = {str(token): -100 for token in (*wanted.values(), *banned)}
            assert sent["logit_bias"] == bias and sent["prompt"] == model.text_of(tokens)
    finally:
        engine.close()
        pool.close()
        proxy.stop()
        model.close()


def test_a_completion_is_generated_on_a_backend(all_up, tmp_path):
    running = remote_daemon(tmp_path, all_up)
    try:
        status, kind, text = ask(running, "/v1/complete", complete("first"))
        assert (status, kind) == (200, "done"), text
        with running.http() as http:
            health = http.get("/health").json()
            metrics = http.get("/metrics").text
            stats = http.get("/v1/stats").json()
        assert health["backend"].startswith("remote")
        assert sum(b["requests"] for b in health["engine"]["backends"]) >= 1
        # Each server's tokenizer was asked for the thinking markers; Gemma's has none.
        for backend in health["engine"]["backends"]:
            assert (backend["tokenizer"], backend["marker_ids"]) == ("llama-cpp-python", {})
        assert "remote backends" in health["sizing"]["reason"]
        assert "sizing skipped: generation runs on the remote backends" in running.log.read_text()
        for server in all_up:
            assert f'assist_backend_up{{backend="{server.url}"}} 1.0' in metrics
        assert [b["url"] for b in stats["backends"]] == [s.url for s in all_up]
    finally:
        running.stop()


def test_one_documents_requests_go_to_the_backend_that_holds_it(all_up, tmp_path):
    running = remote_daemon(tmp_path, all_up)
    try:
        for typed in ("", "w", "wi", "wit"):  # typing at the end of the same document
            status, kind, text = ask(running, "/v1/complete", complete("kept", typed))
            assert (status, kind) == (200, "done"), text
        used = [url for url, b in backends(running).items() if b["requests"]]
        assert len(used) == 1, backends(running)
        # Other documents spread over the backends.
        for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"):
            status, kind, text = ask(running, "/v1/complete", complete(name))
            assert (status, kind) == (200, "done"), text
        assert sum(1 for b in backends(running).values() if b["requests"]) >= 2
    finally:
        running.stop()


def test_a_request_whose_backend_died_before_answering_is_answered_by_another(all_up, tmp_path):
    # Health checks far apart: the dead server is found by the request itself.
    running = remote_daemon(tmp_path, all_up[:2], backend_check_s=600)
    try:
        assert ask(running, "/v1/complete", complete("moved"))[:2] == (200, "done")
        holder = next(url for url, b in backends(running).items() if b["requests"])
        dead = next(s for s in all_up if s.url == holder)
        dead.kill()
        status, kind, text = ask(running, "/v1/complete", complete("moved", "x"))
        assert (status, kind) == (200, "done"), text
        after = backends(running)
        assert after[holder]["state"] == "down"
        assert after[holder]["failovers"] == 1
        other = next(url for url in after if url != holder)
        assert after[other]["requests"] == 1
    finally:
        running.stop()


def test_a_backend_that_dies_after_the_first_token_ends_the_stream_with_a_clean_error(
    all_up, tmp_path
):
    running = remote_daemon(tmp_path, all_up[:2], backend_check_s=600, deep_max_tokens=200)
    body = complete("cut off", mode="deep")
    try:
        with (
            httpx.Client(base_url=running.url, timeout=120, trust_env=False) as http,
            http.stream("POST", "/v1/complete", json=body) as response,
        ):
            assert response.status_code == 200
            events = []
            lines = response.iter_lines()
            for line in lines:
                if not line.strip():
                    continue
                events.append(json.loads(line))
                if events[-1]["event"] == "token":
                    break  # the user sees text: now its server dies
            assert events[-1]["event"] == "token", events
            holder = next(url for url, b in backends(running).items() if b["in_flight"])
            next(s for s in all_up if s.url == holder).kill()
            events += [json.loads(line) for line in lines if line.strip()]
        last = events[-1]
        assert last["event"] == "error", last
        assert holder in last["message"] and "in the middle of the answer" in last["message"]
        assert backends(running)[holder]["state"] == "down"
    finally:
        running.stop()


def test_a_killed_backend_under_load_ends_every_stream_and_comes_back(all_up, tmp_path):
    running = remote_daemon(tmp_path, all_up)
    requests: list[tuple[str, dict[str, Any]]] = []
    for i in range(12):
        if i % 4 == 3:
            requests.append(("/v1/fix", {"text": BROKEN + f"# {i}\n", "path": f"b{i}.py"}))
        else:
            mode = "deep" if i % 4 == 2 else "fast"
            requests.append(("/v1/complete", complete(f"load {i}", mode=mode)))
    try:
        with ThreadPoolExecutor(len(requests)) as pool:
            futures = [pool.submit(ask, running, path, body) for path, body in requests]
            victim = None
            deadline = time.monotonic() + 60
            while victim is None and time.monotonic() < deadline:
                busy = [url for url, b in backends(running).items() if b["in_flight"]]
                victim = next((s for s in all_up if s.url in busy), None)
                time.sleep(0.05)
            assert victim is not None, "no backend took a request"
            victim.kill()
            results = [future.result(timeout=180) for future in futures]  # none hangs
        assert all(status == 200 for status, _, _ in results), results  # no 5xx, no 429
        assert all(kind in ("done", "error") for _, kind, _ in results), results
        assert sum(kind == "done" for _, kind, _ in results) >= len(results) - 1, results
        for _, kind, message in results:
            if kind == "error":
                assert victim.url in message  # a clean error that names what failed

        # The survivors take the load.
        assert backends(running)[victim.url]["state"] == "down"
        for name in ("after 1", "after 2", "after 3"):
            assert ask(running, "/v1/complete", complete(name))[:2] == (200, "done")

        # The revived server is put back, and used again.
        victim.start()
        deadline = time.monotonic() + 30
        while backends(running)[victim.url]["state"] != "up":
            assert time.monotonic() < deadline, backends(running)[victim.url]
            time.sleep(0.2)
        before = backends(running)[victim.url]["requests"]
        for i in range(12):
            ask(running, "/v1/complete", complete(f"revived {i}"))
            if backends(running)[victim.url]["requests"] > before:
                break
        assert backends(running)[victim.url]["requests"] > before
        assert backends(running)[victim.url]["came_back"] == 1
    finally:
        running.stop()


def test_requests_beyond_every_backends_limit_and_the_queue_get_429(all_up, tmp_path):
    running = remote_daemon(
        tmp_path, all_up[:1], queue_size=1, user_queue_size=1, deep_max_tokens=48
    )
    try:
        bodies = [complete(f"full {i}", mode="deep") for i in range(4)]
        with ThreadPoolExecutor(len(bodies)) as pool:
            results = list(pool.map(lambda body: ask(running, "/v1/complete", body), bodies))
        statuses = sorted(status for status, _, _ in results)
        assert 429 in statuses and 200 in statuses, results
        assert all(kind == "done" for status, kind, _ in results if status == 200), results
    finally:
        running.stop()


def test_a_daemon_whose_backends_do_not_answer_says_so_and_exits(tmp_path):
    # Two free ports asked for one after the other may be the same: the daemon must not be
    # its own silent backend.
    backend_port = free_port()
    port = free_port()
    while port == backend_port:
        port = free_port()
    nobody = f"http://127.0.0.1:{backend_port}"
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "daemon.cli",
            "serve",
            "--port",
            str(port),
            "--model",
            MODEL,
            "--backend",
            nobody,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"none of the 1 backends answered ({nobody}: health check: ConnectError" in result.stderr
    assert "--backend-model" in result.stderr
