"""The drop-in protocols with real clients: the ``openai`` package against ``/v1/completions``
and ``/v1/models``, and llama.cpp server's ``/infill`` as llama.vim sends it."""

from __future__ import annotations

import concurrent.futures
import json
import time
import uuid
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.e2e.conftest import RunningDaemon, start_guarded
from tests.e2e.documents import NUMBERS, complete_body, unique

PREFIX = "def add(a, b):\n    return a +"
SUFFIX = "\n\n\nprint(add(1, 2))\n"


def fresh(text: str) -> str:
    return f"# {uuid.uuid4().hex}\n{text}"


def client_for(daemon: RunningDaemon, key: str = "unused", retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{daemon.url}/v1", api_key=key, max_retries=retries, timeout=300)


def cache_hits(daemon: RunningDaemon) -> int:
    with daemon.http() as http:
        stats = http.get("/v1/cache/stats").json()
    return int(stats["session_hits"])


def test_the_openai_package_completes_with_a_suffix(daemon):
    client = client_for(daemon)
    answer = client.completions.create(
        model="assist", prompt=fresh(PREFIX), suffix=SUFFIX, max_tokens=16
    )
    choice = answer.choices[0]
    assert choice.text.strip()
    assert choice.finish_reason in ("stop", "length")
    assert answer.usage is not None and answer.usage.prompt_tokens > 0
    assert answer.object == "text_completion" and answer.id.startswith("cmpl-")


def test_a_streamed_answer_is_the_same_text_and_the_second_ask_is_a_cache_hit(daemon):
    client = client_for(daemon)
    prompt = fresh(PREFIX)
    chunks = list(
        client.completions.create(
            model="assist", prompt=prompt, suffix=SUFFIX, max_tokens=16, stream=True
        )
    )
    streamed = "".join(chunk.choices[0].text for chunk in chunks)
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")
    assert all(chunk.choices[0].finish_reason is None for chunk in chunks[:-1])
    hits = cache_hits(daemon)
    again = client.completions.create(model="assist", prompt=prompt, suffix=SUFFIX, max_tokens=16)
    assert again.choices[0].text == streamed
    assert cache_hits(daemon) == hits + 1


def test_stop_sequences_cut_the_answer(daemon):
    client = client_for(daemon)
    prompt = fresh("NUMBERS = [\n    1,\n    2,\n    3,\n    ")
    whole = client.completions.create(model="assist", prompt=prompt, max_tokens=24)
    assert "," in whole.choices[0].text
    cut = client.completions.create(model="assist", prompt=prompt, max_tokens=24, stop=[","])
    assert cut.choices[0].text == whole.choices[0].text.split(",")[0]
    assert cut.choices[0].finish_reason == "stop"


def test_models_lists_the_daemons_model(daemon):
    models = client_for(daemon).models.list()
    assert [m.id for m in models.data] == [daemon.health.model]


def test_requests_the_api_cannot_answer_are_refused_clearly(daemon):
    client = client_for(daemon)
    with pytest.raises(openai.UnprocessableEntityError, match="less than or equal to 8"):
        client.completions.create(model="assist", prompt="x = ", n=9)
    with pytest.raises(openai.UnprocessableEntityError, match="one prompt"):
        client.completions.create(model="assist", prompt=["a = ", "b = "])


def test_the_openai_package_gets_two_choices_decoded_together(daemon):
    client = client_for(daemon)
    prompt = fresh("def greet(name):\n    return ")
    answer = client.completions.create(
        model="assist", prompt=prompt, suffix="\n\n\nprint(greet('a'))\n", max_tokens=16, n=2
    )
    texts = [choice.text for choice in answer.choices]
    assert [choice.index for choice in answer.choices] == [0, 1]
    assert all(text.strip() for text in texts) and texts[0] != texts[1]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningDaemon, str]]:
    """A daemon that a few requests at once overload (``start_guarded``)."""
    running, token = start_guarded(tmp_path_factory.mktemp("dropin"))
    yield running, token
    running.stop()


def test_a_wrong_key_is_a_401_for_the_openai_package(guarded):
    daemon, token = guarded
    with pytest.raises(openai.AuthenticationError):
        client_for(daemon, "ast_not-a-real-token").completions.create(model="assist", prompt="x = ")
    with pytest.raises(openai.AuthenticationError):
        client_for(daemon, "ast_not-a-real-token").models.list()
    assert client_for(daemon, token).models.list().data


def test_a_full_queue_is_a_429_for_the_openai_package(guarded):
    daemon, token = guarded
    long = complete_body(unique(NUMBERS), max_tokens=300, cache=False)
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=daemon.url, headers=headers, timeout=300) as http,
        concurrent.futures.ThreadPoolExecutor(2) as pool,
    ):

        def ask(body: dict) -> int:
            with http.stream("POST", "/v1/complete", json=body) as response:
                response.read()
                return response.status_code

        running = pool.submit(ask, {**long, "path": "a.py"})
        time.sleep(0.5)
        waiting = pool.submit(ask, {**long, "path": "b.py", "text": long["text"] + " "})
        time.sleep(0.3)
        with pytest.raises(openai.RateLimitError):
            client_for(daemon, token).completions.create(model="assist", prompt=fresh(NUMBERS))
        assert running.result() == 200 and waiting.result() == 200


def infill_body(**fields: object) -> dict[str, object]:
    """What llama.vim sends: the lines above, the typed part of the line, the rest."""
    lines = fresh(PREFIX).split("\n")
    body: dict[str, object] = {
        "input_prefix": "\n".join(lines[:-1]) + "\n",
        "prompt": lines[-1],
        "input_suffix": SUFFIX,
        "input_extra": [{"filename": "util.py", "text": "def helper():\n    return 1\n"}],
        "n_predict": 16,
        "top_k": 40,
        "top_p": 0.99,
        "samplers": ["top_k", "top_p", "infill"],
        "stream": False,
        "cache_prompt": True,
        "t_max_prompt_ms": 500,
        "t_max_predict_ms": 30000,
    }
    body.update(fields)
    return body


def test_infill_answers_as_llama_cpp_server_does(daemon):
    body = infill_body()
    with daemon.http() as http:
        answer = http.post("/infill", json=body).json()
        assert answer["content"].strip() and answer["stop"] is True
        assert answer["tokens_predicted"] > 0 and answer["tokens_evaluated"] > 0
        assert {"prompt_n", "prompt_ms", "predicted_n", "predicted_ms"} <= set(answer["timings"])
        # The same request again comes from the shared cache.
        again = http.post("/infill", json=body).json()
    assert again["content"] == answer["content"] and again["cached"] is True


def test_infill_and_complete_share_one_cache(daemon):
    body = infill_body(input_extra=[])
    text = f"{body['input_prefix']}{body['prompt']}{body['input_suffix']}"
    before = f"{body['input_prefix']}{body['prompt']}"
    line, column = before.count("\n"), len(str(body["prompt"]))
    request = {"text": text, "line": line, "column": column, "max_tokens": 16}
    with daemon.http() as http:
        with http.stream("POST", "/v1/complete", json=request) as response:
            events = [json.loads(x) for x in response.iter_lines() if x.strip()]
        answer = http.post("/infill", json=body).json()
    assert answer["cached"] is True
    assert answer["content"] == events[-1]["text"]


def test_infill_streams_server_sent_events(daemon):
    with (
        daemon.http() as http,
        http.stream("POST", "/infill", json=infill_body(stream=True)) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        chunks = [
            json.loads(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: ")
        ]
    assert chunks[-1]["stop"] is True and "timings" in chunks[-1]
    assert all(chunk["stop"] is False for chunk in chunks[:-1])
    assert "".join(chunk["content"] for chunk in chunks).strip()


def test_a_malformed_infill_request_is_a_clear_422(daemon):
    with daemon.http() as http:
        response = http.post("/infill", json={"input_prefix": 3, "n_predict": "many"})
    assert response.status_code == 422
    assert "input_prefix" in response.json()["error"]["message"]


def test_a_time_limit_cuts_after_the_first_line_and_the_answer_is_not_wasted(daemon):
    # As llama.vim's first request: 250 ms for the generation, at a place whose answer is more
    # than one line. The answer holds its first line at least; the generation goes on and is
    # cached, so the same request again is a hit.
    lines = fresh("import os\n\n\ndef sizes(root):\n    total = 0\n").split("\n")
    body = infill_body(
        input_prefix="\n".join(lines[:-1]) + "\n",
        prompt="    for name in os.listdir(root):",
        input_suffix="\n    return total\n",
        input_extra=[],
        n_predict=64,
        t_max_predict_ms=1,
    )
    with daemon.http() as http:
        first = http.post("/infill", json=body).json()
        assert first["content"].strip() and first["stop"] is True
        assert first["stop_type"] in ("limit", "eos")
        # llama.vim's speculative request, at the end of the suggestion it shows: answered from
        # the answer being written (its next line), not by a generation of its own.
        shown = str(first["content"]).split("\n")
        speculative = body | {
            "input_prefix": f"{body['input_prefix']}{body['prompt']}"
            + "".join(f"{line}\n" for line in shown[:-1]),
            "prompt": shown[-1] if len(shown) > 1 else f"{body['prompt']}{shown[0]}",
            "t_max_predict_ms": 1000,
        }
        if len(shown) == 1:
            speculative["input_prefix"] = body["input_prefix"]
        following = http.post("/infill", json=speculative).json()
        deadline = time.monotonic() + 60
        again = http.post("/infill", json=body).json()
        while not again.get("cached") and time.monotonic() < deadline:
            time.sleep(0.5)
            again = http.post("/infill", json=body).json()
    assert again["cached"] is True and again["content"].startswith(first["content"])
    if str(again["content"])[len(first["content"]) :].strip():
        # The answer went on past what was shown: the speculative request was served from it.
        assert following["content"].strip() and following["cached"] is True


def test_the_place_after_a_whole_answer_is_a_hit_with_nothing_more(daemon):
    # llama.vim's speculative request after a suggestion its time limit did not cut: at the end
    # of an answer the model ended, nothing more goes there, and no model is asked again.
    body = infill_body(input_extra=[])
    with daemon.http() as http:
        first = http.post("/infill", json=body).json()
        assert first["content"].strip() and first["stop_type"] == "eos"
        after = body | {"prompt": f"{body['prompt']}{first['content']}"}
        following = http.post("/infill", json=after).json()
        assert following["cached"] is True and following["content"] == ""
        assert following["stop_type"] == "eos"
        # Typed past the answer's end, the place is a new question.
        past = body | {"prompt": f"{body['prompt']}{first['content']} * 2"}
        assert http.post("/infill", json=past).json()["cached"] is False


def test_a_warm_up_answers_at_once_and_reads_the_prompt(daemon):
    body = infill_body(n_predict=0, t_max_predict_ms=1, samplers=[])
    with daemon.http() as http:
        # The daemon is the session's: other tests' warm-ups are counted too.
        before = http.get("/health").json()["workload"]["windows_warmed"]
        warm = http.post("/infill", json=body).json()
        assert warm["content"] == "" and warm["tokens_predicted"] == 0
        assert warm["tokens_evaluated"] > 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            workload = http.get("/health").json()["workload"]
            if workload["windows_warmed"] > before and not workload["windows_warming"]:
                break
            time.sleep(0.2)
        answer = http.post("/infill", json=body | {"n_predict": 16}).json()
    assert answer["tokens_cached"] >= warm["tokens_evaluated"] - 1


def test_a_warm_up_of_chunks_alone_reads_them(daemon):
    # llama.vim's ring buffer: no document, chunks of other files. They are read as the prompts
    # that show them begin (the deep path's layout).
    chunk = fresh("".join(f"def helper_{i}(value):\n    return value * {i}\n\n" for i in range(20)))
    body = infill_body(
        input_prefix="",
        prompt="",
        input_suffix="",
        input_extra=[{"filename": "helpers.py", "text": chunk}],
        n_predict=0,
        t_max_predict_ms=1,
        samplers=[],
    )
    with daemon.http() as http:
        warmed = http.get("/health").json()["workload"]["windows_warmed"]
        warm = http.post("/infill", json=body).json()
        assert warm["content"] == "" and warm["tokens_evaluated"] > 200
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if http.get("/health").json()["workload"]["windows_warmed"] > warmed:
                break
            time.sleep(0.2)
        assert http.get("/health").json()["workload"]["windows_warmed"] > warmed
