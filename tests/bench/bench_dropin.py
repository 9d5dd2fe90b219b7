"""What the drop-in protocols cost a cache hit, against the daemon's own ``/v1/complete``.

One daemon, one cached completion (a Python line), then rounds in which the same document is
asked for through ``/v1/complete`` (NDJSON), ``/infill`` (llama.cpp server's, as llama.vim sends
it) and ``/v1/completions`` (OpenAI's, as the ``openai`` package sends it, with ``suffix``),
in turn, over one keep-alive connection each. Every answer must be a cache hit. It prints the
medians and p90 of the client-side latency and each protocol's ratio to ``/v1/complete``.
The target: within 1.5x.

Then llama.vim's requests, on the ``newline`` cases of the real-code set (a new line at the end
of a block in an installed package's module; each document read cold, as an editor opens it):
its first request (250 ms for the generation), whether it shows a suggestion and whether that
suggestion's first written line is what ``/v1/complete`` shows first, its speculative request
(at the end of the whole suggestion, as llama.vim places it: after an answer its time limit cut,
the next line of the answer being written; after a whole one, the end the model wrote) and the
same request again, as times and ratios to the first; and warm-ups (``n_predict`` 0) of other
cases: their own time, and the next request's prompt time against that of documents read cold.
Run: .venv/bin/python tests/bench/bench_dropin.py [--rounds 300] [--llama-vim 10] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.client.launcher import free_port, launch
from daemon.settings import load_settings

BEFORE = (
    'import json\n\n\ndef load(path):\n    """Read a JSON file."""\n    with open(path) as f:\n'
)
LINE = "        return json."
AFTER = "\n\n\nprint(load('x.json'))\n"


def complete(http: httpx.Client) -> bool:
    text = BEFORE + LINE + AFTER
    line = BEFORE.count("\n")
    body = {"text": text, "line": line, "column": len(LINE), "max_tokens": 48}
    with http.stream("POST", "/v1/complete", json=body) as response:
        events = [json.loads(x) for x in response.iter_lines() if x.strip()]
    return bool(events[-1].get("cached"))


def infill(http: httpx.Client) -> bool:
    body = {
        "input_prefix": BEFORE,
        "prompt": LINE,
        "input_suffix": AFTER,
        "n_predict": 48,
        "top_k": 40,
        "top_p": 0.99,
        "stream": False,
        "cache_prompt": True,
    }
    return bool(http.post("/infill", json=body).json()["cached"])


def completions(http: httpx.Client) -> bool:
    """(OpenAI's answer does not say it was cached: the cache's hit count is checked after.)"""
    body = {"model": "assist", "prompt": BEFORE + LINE, "suffix": AFTER, "max_tokens": 48}
    answer = http.post("/v1/completions", json=body).json()
    return bool(answer["choices"][0]["text"])


def session_hits(http: httpx.Client) -> int:
    return int(http.get("/v1/cache/stats").json()["session_hits"])


def timed(ask: Callable[[httpx.Client], bool], http: httpx.Client) -> float:
    started = time.perf_counter()
    ok = ask(http)
    elapsed = (time.perf_counter() - started) * 1000
    if not ok:
        raise SystemExit(f"{ask.__name__}: not a cache hit")
    return elapsed


# llama.vim's request: its defaults (n_predict 128, 250 ms for a first request, 1000 after).
VIM_FIELDS = ["content", "timings/prompt_n", "timings/prompt_ms", "timings/predicted_ms"]


def vim_body(before: str, typed: str, after: str, first: bool) -> dict[str, object]:
    return {
        "input_prefix": before,
        "prompt": typed,
        "input_suffix": after,
        "input_extra": [],
        "n_predict": 128,
        "t_max_prompt_ms": 500,
        "t_max_predict_ms": 250 if first else 1000,
        "samplers": ["top_k", "top_p", "infill"],
        "stream": False,
        "cache_prompt": True,
        "response_fields": VIM_FIELDS,
    }


def ask_vim(http: httpx.Client, body: dict[str, object]) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    answer = http.post("/infill", json=body).json()
    return (time.perf_counter() - started) * 1000, answer


def shown_first(http: httpx.Client, before: str, typed: str, after: str) -> str:
    """What ``/v1/complete`` shows first for the same document: its skeleton stage."""
    text = before + typed + after
    body = {"text": text, "line": before.count("\n"), "column": len(typed), "cache": False}
    with http.stream("POST", "/v1/complete", json=body) as response:
        for line in response.iter_lines():
            event = json.loads(line) if line.strip() else {}
            if event.get("stage") == "skeleton":
                return str(event["text"])
    return ""


def first_written_line(content: str) -> str:
    """The first line of an answer with something on it (where the cursor's line ends, the
    answer starts on the next)."""
    return next((line for line in content.split("\n") if line.strip()), "")


def llama_vim(http: httpx.Client, count: int, verbose: bool = False) -> None:
    from tests.bench.realcode.cases import document, load

    newline = [c for c in load() if c.kind == "newline"]
    cases = newline[:count]
    rows = []
    for case in cases:
        doc = document(case)
        lines = doc.text.split("\n")
        before = "\n".join(lines[max(0, case.line - 256) : case.line]) + "\n"
        typed = lines[case.line]
        after = "\n" + "\n".join(lines[case.line + 1 : case.line + 65])
        first_body = vim_body(before, typed, after, True)
        first_body["response_fields"] = [*VIM_FIELDS, "stop_type"]
        first_ms, first = ask_vim(http, first_body)
        content = str(first.get("content", ""))
        cut = first.get("stop_type") == "limit"
        # llama.vim's speculative request: at the end of the whole suggestion it shows.
        shown = content.split("\n")
        if len(shown) == 1:
            spec_before, spec_typed = before, typed + shown[0]
        else:
            spec_before = before + typed + shown[0] + "\n" + "".join(x + "\n" for x in shown[1:-1])
            spec_typed = shown[-1]
        # (``cached`` beside llama.vim's fields: whether the first answer served it.)
        spec_body = vim_body(spec_before, spec_typed, after, False)
        spec_body["response_fields"] = [*VIM_FIELDS, "cached"]
        speculative_ms, spec = ask_vim(http, spec_body)
        again_ms, _ = ask_vim(http, vim_body(before, typed, after, True))
        complete_first = first_written_line(shown_first(http, before, typed, after))
        rows.append(
            (
                first_ms,
                bool(content.strip()),
                bool(content.strip()) and first_written_line(content) == complete_first,
                speculative_ms,
                again_ms,
                bool(spec.get("cached")),
                cut,
            )
        )
        if verbose:
            print(
                f"  {case.id} {first.get('stop_type')} {first_ms:.0f} ms "
                f"{content!r} -> {speculative_ms:.0f} ms cached={spec.get('cached')} "
                f"{spec.get('content')!r}"
            )
    shown_count = sum(r[1] for r in rows)
    same = sum(r[2] for r in rows)
    first_p50 = statistics.median(r[0] for r in rows)
    print(f"\nllama.vim's requests, {len(rows)} documents read cold (real-code newline cases)")
    print(
        f"  first request (250 ms)  p50 {first_p50:7.1f} ms  "
        f"suggestion shown {shown_count}/{len(rows)}"
    )
    print(
        f"  first written line as /v1/complete shows it first: {same} of the {shown_count} shown "
        "(the others held back by the confidence gate, as /v1/complete's final answer is)"
    )
    served = sum(r[5] for r in rows)
    print(f"  speculative requests the first answer served: {served}/{len(rows)}")
    after_cut = [r for r in rows if r[6]]
    after_whole = [r for r in rows if not r[6]]
    for label, index, part in (
        ("speculative request", 3, rows),
        ("  after a cut answer", 3, after_cut),
        ("  after a whole one", 3, after_whole),
        ("the same again", 4, rows),
    ):
        if not part:
            print(f"  {label:<22}  none")
            continue
        p50 = statistics.median(r[index] for r in part)
        ratio = statistics.median(r[0] / max(r[index], 0.001) for r in part)
        print(
            f"  {label:<22}  p50 {p50:7.1f} ms  {ratio:6.1f}x faster than the first (median, "
            f"{len(part)} documents"
            + (f", {sum(r[5] for r in part)} served by the first answer)" if index == 3 else ")")
        )
    warm_up(http, newline[count : 2 * count], newline[2 * count : 3 * count])


def warm_up(http: httpx.Client, warmed: list, cold: list) -> None:
    """A warm-up's own time, and the prompt time of the request after it against that of
    documents read cold (other cases, none of whose text the daemon has read: a document that
    differs from a read one only in a line would reuse its KV after the edit)."""
    from tests.bench.realcode.cases import document

    def place(case) -> tuple[str, str, str]:
        lines = document(case).text.split("\n")
        before = "\n".join(lines[max(0, case.line - 256) : case.line]) + "\n"
        return before, lines[case.line], "\n" + "\n".join(lines[case.line + 1 : case.line + 65])

    def prompt(answer: dict[str, object]) -> tuple[float, float]:
        return float(answer.get("timings/prompt_ms", 0.0)), float(
            answer.get("timings/prompt_n", 0.0)
        )

    warm_ms, after_warm, after_cold = [], [], []
    for case in warmed:
        before, typed, after = place(case)
        elapsed, _ = ask_vim(http, vim_body(before, typed, after, False) | {"n_predict": 0})
        warm_ms.append(elapsed)
        time.sleep(15)  # the prompt is read in the background meanwhile
        after_warm.append(prompt(ask_vim(http, vim_body(before, typed, after, False))[1]))
    for case in cold:
        after_cold.append(prompt(ask_vim(http, vim_body(*place(case), False))[1]))
    print(f"  a warm-up answers in p50 {statistics.median(warm_ms):6.1f} ms")
    for label, rows in (("after a warm-up", after_warm), ("read cold", after_cold)):
        ms = statistics.median(r[0] for r in rows)
        read = statistics.median(r[1] for r in rows)
        print(f"  the request's prompt {label:<16} p50 {ms:7.1f} ms ({read:.0f} tokens read)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--llama-vim", type=int, default=10, help="documents (0: none)")
    parser.add_argument("--verbose", action="store_true", help="each llama.vim document's answers")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-dropin-"))
    settings = load_settings(
        port=free_port(),
        cache_path=work / "cache.sqlite3",
        metrics_path=work / "metrics.sqlite3",
        rate_limit_per_minute=0,
    )
    process, _ = launch(settings, work / "daemon.log")
    asks = {"/v1/complete": complete, "/infill": infill, "/v1/completions": completions}
    times: dict[str, list[float]] = {name: [] for name in asks}
    try:
        clients = {name: httpx.Client(base_url=settings.daemon_url, timeout=300) for name in asks}
        complete(clients["/v1/complete"])  # the one model answer; everything after is a hit
        hits = session_hits(clients["/v1/complete"])
        for name, ask in asks.items():
            for _ in range(10):  # warm each endpoint's path and connection
                timed(ask, clients[name])
        for _ in range(args.rounds):
            for name, ask in asks.items():
                times[name].append(timed(ask, clients[name]))
        asked = len(asks) * (10 + args.rounds)
        if session_hits(clients["/v1/complete"]) - hits != asked:
            raise SystemExit("not every answer was a cache hit")
        base = statistics.median(times["/v1/complete"])
        print(f"bench_dropin: a cache hit through each protocol, {args.rounds} rounds in turn")
        for name, values in times.items():
            ordered = sorted(values)
            p90 = ordered[int(0.9 * (len(ordered) - 1))]
            median = statistics.median(values)
            print(
                f"  {name:<17} median {median:6.2f} ms   p90 {p90:6.2f} ms   "
                f"{median / base:4.2f}x of /v1/complete"
            )
        if args.llama_vim:
            llama_vim(clients["/infill"], args.llama_vim, args.verbose)
        for client in clients.values():
            client.close()
    finally:
        process.terminate()
        process.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
