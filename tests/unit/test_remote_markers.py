"""Thinking markers on remote servers: their ids learned from each kind of server's tokenize
endpoint (servers of each kind faked behind httpx's mock transport, the seam), once per model,
and the logit bias every request then carries."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
import pytest

from daemon.engine.jobs import Budget
from daemon.engine.remote.engine import completion_body
from daemon.engine.remote.markers import MarkerIds, NotNow, learn_marker_ids, logit_bias
from daemon.engine.remote.server import RemoteServer

MARKERS = ("<think>", "<|begin_of_thought|>", "◁think▷")
# A Qwen3-like vocabulary: "<think>" is one special token, the others are plain text.
SPECIAL = {"<think>": 151667, "</think>": 151668}
BOS = 1


def tokenize(text: str, bos: bool = False) -> list[int]:
    """One token per special piece, one per character for the rest."""
    if text in SPECIAL:
        return [BOS, SPECIAL[text]] if bos else [SPECIAL[text]]
    return ([BOS] if bos else []) + [ord(c) for c in text]


def llama_cpp_server(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content or b"{}")
    if request.url.path == "/tokenize" and "content" in body:
        return httpx.Response(200, json={"tokens": tokenize(body["content"])})
    return httpx.Response(404, json={"error": "not found"})


def vllm_server(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content or b"{}")
    if request.url.path != "/tokenize":
        return httpx.Response(404, json={"detail": "Not Found"})
    if "prompt" not in body:
        return httpx.Response(400, json={"object": "error", "message": "prompt: Field required"})
    if not body["prompt"]:
        return httpx.Response(400, json={"object": "error", "message": "empty prompt"})
    tokens = tokenize(body["prompt"])
    return httpx.Response(200, json={"tokens": tokens, "count": len(tokens)})


def llama_cpp_python_server(request: httpx.Request) -> httpx.Response:
    if request.url.path != "/extras/tokenize":
        return httpx.Response(404, json={"detail": "Not Found"})
    text = json.loads(request.content)["input"]
    return httpx.Response(200, json={"tokens": tokenize(text, bos=True)})  # it adds a BOS


def no_tokenizer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(404, text="Not Found")


def poster(handler):
    client = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://backend")
    return lambda path, body: client.post(path, json=body)


@pytest.mark.parametrize(
    ("handler", "kind"),
    [
        (llama_cpp_server, "llama.cpp"),
        (vllm_server, "vLLM"),
        (llama_cpp_python_server, "llama-cpp-python"),
    ],
)
def test_each_kind_of_server_tells_its_markers_ids(handler, kind):
    found = learn_marker_ids(poster(handler), MARKERS, "qwen3")
    # Only "<think>" is one token of this vocabulary; the BOS llama-cpp-python adds is left aside.
    assert found == MarkerIds({"<think>": 151667}, kind)
    assert found.bias == {"151667": -100}


def test_a_server_without_a_tokenizer_gets_no_bias_and_says_why():
    found = learn_marker_ids(poster(no_tokenizer), MARKERS, None)
    assert found.ids == {} and found.tokenizer is None and found.bias == {}
    assert found.error is not None
    assert "/tokenize (llama.cpp): HTTP 404" in found.error and "/extras/tokenize" in found.error


@pytest.mark.parametrize(
    "failure",
    [
        lambda request: httpx.Response(503, text="loading model"),
        lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused")),
    ],
)
def test_a_server_that_cannot_be_asked_now_is_asked_later(failure):
    with pytest.raises(NotNow):
        learn_marker_ids(poster(failure), MARKERS, None)


def test_the_bias_forbids_markers_and_banned_tokens_together():
    budget = Budget(max_tokens=8, deadline=time.perf_counter() + 5, banned=(7, 151667))
    body = completion_body("qwen3", "def f():", budget, {"151667": -100, "151668": -100})
    assert body["logit_bias"] == {"151667": -100, "151668": -100, "7": -100}
    assert body["model"] == "qwen3" and body["prompt"] == "def f():" and body["max_tokens"] == 8
    plain = Budget(max_tokens=8, deadline=time.perf_counter() + 5)
    assert "logit_bias" not in completion_body("qwen3", "x", plain, {})
    assert logit_bias([3, 4]) == {"3": -100, "4": -100}


class Backend:
    """A llama.cpp-like server, faked: its model can change, its tokenizer can fail."""

    def __init__(self) -> None:
        self.model = "qwen3-coder"
        self.tokenize_calls = 0
        self.tokenizer_fails = False
        self.down = False

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("connection refused")
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "ok"})
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": self.model}]})
        if request.url.path == "/tokenize":
            self.tokenize_calls += 1
            if self.tokenizer_fails:
                return httpx.Response(503, json={"error": "busy"})
            body: dict[str, Any] = json.loads(request.content)
            return httpx.Response(200, json={"tokens": tokenize(body["content"])})
        return httpx.Response(404)


def server_for(backend: Backend) -> RemoteServer:
    client = httpx.Client(transport=httpx.MockTransport(backend))
    return RemoteServer("http://gpu1:8080", 1, client, None, markers=MARKERS)


def test_a_server_learns_its_markers_once_per_model():
    backend = Backend()
    server = server_for(backend)
    assert server.check()
    assert server.marker_bias == {"151667": -100}
    snapshot = server.snapshot()
    assert snapshot["tokenizer"] == "llama.cpp" and snapshot["marker_ids"] == {"<think>": 151667}
    asked = backend.tokenize_calls
    assert server.check() and backend.tokenize_calls == asked  # cached, not asked again
    # The server goes away and comes back serving another model: asked again.
    backend.down = True
    assert not server.check()
    backend.down, backend.model = False, "deepseek-r1"
    assert server.check() and backend.tokenize_calls > asked


def test_a_tokenizer_that_fails_is_asked_at_the_next_check():
    backend = Backend()
    backend.tokenizer_fails = True
    server = server_for(backend)
    assert server.check()  # up: the markers are not a condition of serving
    assert server.marker_ids is None and server.marker_bias == {}
    assert server.snapshot()["marker_ids"] is None
    backend.tokenizer_fails = False
    assert server.check() and server.marker_bias == {"151667": -100}


def test_a_server_without_a_tokenizer_is_warned_about_once(caplog):
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    server = RemoteServer("http://old:8080", 1, client, None, markers=MARKERS)
    with caplog.at_level(logging.WARNING, logger="daemon.engine.remote.server"):
        for _ in range(3):
            server.check()
    warnings = [r for r in caplog.records if "no tokenize endpoint" in r.getMessage()]
    assert len(warnings) == 1 and "http://old:8080" in warnings[0].getMessage()
    assert server.marker_bias == {} and server.snapshot()["tokenizer"] is None


def test_without_markers_nothing_is_asked():
    backend = Backend()
    client = httpx.Client(transport=httpx.MockTransport(backend))
    server = RemoteServer("http://gpu1:8080", 1, client, None)
    assert server.check() and backend.tokenize_calls == 0 and server.marker_bias == {}
